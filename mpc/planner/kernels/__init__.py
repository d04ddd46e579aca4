"""Numba kernels of the planner: plain numpy-array signatures, no MuJoCo objects.

:mod:`mpc.planner.kernels.rollout` also takes libmujoco functions as arguments
(:mod:`common.libmujoco`).
"""
