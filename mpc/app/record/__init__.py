"""The run record: the run directory written while a run goes (:mod:`.recorder`) and read back
by plots, replay and scripts (:mod:`.reader`)."""
