"""Numba kernels of the planner: plain numpy-array signatures, no MuJoCo objects.

The exception is :mod:`mpc.kernels.rollout`, which calls into libmujoco through
:mod:`mpc.mjc` and therefore cannot be cached on disk.
"""
