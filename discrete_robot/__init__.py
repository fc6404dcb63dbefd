"""discrete_robot: discrete-time robot dynamics for ROS 2.

The physics core (every subpackage except ``discrete_robot.nodes``) is plain
numpy/scipy and never imports ROS; the nodes translate messages and parameters.
"""

__version__ = "0.1.0"
