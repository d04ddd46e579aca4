"""Looking at the robot: the MuJoCo window, the live viewer of a run and the replay of a
recorded one."""
