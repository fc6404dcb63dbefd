"""Multi-arm free-floating space robot (Khoshnood, Someeh & Nami: Lagrange's equations in quasi-coordinates).

- :mod:`.robot`: the robot as the recursive algorithm sees it, from a shared :class:`RobotModel`;
  :mod:`.state`: configuration (quaternion attitudes) and quasi-velocities;
- :mod:`.kernels`: the recursive equations (19)–(53) as compiled kernels (Model/Data);
  :mod:`.rkmk4`: one RKMK4 step on them, in momentum coordinates;
- :mod:`.kinematics`, :mod:`.recursive`: body poses and velocities; M, h, Q, forward and inverse dynamics,
  momentum and energy (views over the kernels);
- :mod:`.newton_euler` (the independent cross-check), :mod:`.dense_lagrangian` (the benchmarks' baseline);
- :mod:`.loads`: external forces and moments, joint torques; :mod:`.simulation`: RKMK4 with sub-steps;
- :mod:`.scenario`, :mod:`.generated`: the paper's run, multi-arm robots of any size;
- :mod:`.cli`, :mod:`.commands`: ``python -m discrete_robot space simulate``.
"""
