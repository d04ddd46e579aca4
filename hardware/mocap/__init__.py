"""Motion capture: the OptiTrack NatNet client (``natnet``) and its packet codec
(``natnet_packets``), the frame conventions from a tracked rigid body to the robot base
(``frames``), and the pose inputs that turn NatNet or LCM poses into base poses stamped in the
robot's clock for the estimator (``pose_input``). The fake Motive streamer is in
:mod:`hardware.fake.natnet_server`.
"""
