"""Example tasks: the worked examples of ``docs/tasks.md``, registered and tested like the
others."""
