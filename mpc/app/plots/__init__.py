"""Figures and a report of run directories (``mpc-plot``), and comparisons of many runs.

Needs matplotlib (the ``plot`` extra), imported by :mod:`mpc.app.plots.figures`,
:mod:`mpc.app.plots.report` and :mod:`mpc.app.plots.compare` only: :mod:`mpc.app.record.reader`
(reading a run directory, also for ``mpc-replay``) works without it.
"""
