"""Where the floating-base state comes from on hardware. ``base_state`` is the interface
(:class:`BaseStateSource`, fed IMU samples, asked for the base state); ``sources`` selects a
source by name (``plant.base_state.type``); ``kalman`` (the hardware configs' default) fuses
the accelerometer with stance-leg kinematics in a Kalman filter; ``leg_odometry`` estimates from
the IMU and stance legs alone, for comparison; ``mocap_imu`` fuses
motion-capture poses with the IMU (the LCM plant's estimator);
``clock_sync`` maps this computer's clock to the robot's, to stamp poses in the robot's time.
The fake robot's simulated truth (``sim_truth``, tests only) and the simulation seen through
the sensors with an estimator in the loop (``plant.type: sim_estimated``) live in
:mod:`hardware.fake`.
"""
