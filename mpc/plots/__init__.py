"""Figures and a report of run directories (``mpc-plot``), and comparisons of many runs.

Needs matplotlib (the ``plot`` extra), imported by :mod:`mpc.plots.figures`,
:mod:`mpc.plots.report` and :mod:`mpc.plots.compare` only: :mod:`mpc.plots.run` (reading a run
directory, also for ``mpc-replay``) works without it.
"""
