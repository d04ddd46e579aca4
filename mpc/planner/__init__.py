"""The iLQR planner: one iteration (:mod:`mpc.planner.ilqr`), its policy, rollouts, cost
derivatives and compiled kernels. A library: it knows tasks and derivative providers, never
configs, run directories, plants or command lines (those are :mod:`mpc.app`'s)."""
