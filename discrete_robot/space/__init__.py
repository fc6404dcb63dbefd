"""Multi-arm free-floating space robot (Khoshnood, Someeh & Nami: Lagrange's equations in quasi-coordinates).

- :mod:`.robot`: the robot as the recursive algorithm sees it, from a shared :class:`RobotModel`;
- :mod:`.state`: configuration (quaternion attitudes) and quasi-velocities;
- :mod:`.kinematics`: recursive kinematics (24)–(27) and partial derivatives (29)–(53);
- :mod:`.recursive`: equations (19)–(21), forward and inverse dynamics, momentum and energy;
- :mod:`.newton_euler`: the independent Newton–Euler formulation M = Jᵀ diag(m, I) J;
- :mod:`.loads`: external forces and moments, joint torques, the paper's scenario;
- :mod:`.simulation`: momentum-preserving Lie-group Runge–Kutta integration;
- :mod:`.cli`: ``python -m discrete_robot space simulate``.
"""
