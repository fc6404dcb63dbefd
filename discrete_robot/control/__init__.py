"""Controllers as ros2_control runs them, without ROS: plain objects with ``update(t, q, v) -> tau``.

- ``base``: the :class:`~discrete_robot.control.base.Controller` protocol (claimed joints, ``update``), which a
  controller manager composes;
- ``trajectory``: trajectory references, points joined as joint_trajectory_controller joins them;
- ``joint_trajectory_controller``: JTC's goal life cycle (goal checks, tolerances, results, the hold); docs/jtc.md;
- ``computed_torque``: the law (computed torque on a reference, the hold as PD with gravity compensation,
  saturation) and the controllers the fixed-base simulator runs: trajectory tracking and effort commands;
- ``floating_base``: computed torque on the free-floating space robot's arms.

The nodes (discrete_robot.nodes) give these controllers their messages and parameters and nothing else.
"""
