"""Figures and a report of run directories (``mpc-plot``).

Needs matplotlib (the ``plot`` extra); it is imported by :mod:`mpc.plots.figures` only, so
:mod:`mpc.plots.run` (reading a run directory) works without it.
"""
