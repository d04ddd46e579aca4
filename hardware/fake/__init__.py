"""Everything fake, for tests and loopback runs: MuJoCo-simulated robots and streams that speak
the real protocols. The fake Unitree robot (``robot``: the simulation and its motors; ``server``:
it on a real UDP or DDS wire; ``cli``: the ``mpc-fake-robot`` command; ``motor_plant``: it as a
lockstep plant with a set command delay), the fake LCM robot (``lcm_robot``: the same simulation
behind LCM, with a fake Motive), the fake OptiTrack Motive (``natnet_server``),
``estimated_plant`` (the ``sim_estimated`` plant: the simulation seen through ``sensors`` with a
base-state estimator in the loop), and ``sim_truth``, the base-state source that reads the fake
Unitree robot's truth stream (the entry point ``sim_truth``; a real robot has none). Which
simulated robot serves what: docs/hardware.md, "Which simulated robot".
"""
