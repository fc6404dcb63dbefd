"""What every discrete_robot node shares, in one import: parameters, QoS, the guarded node, conversions, main().

Each lives in its own module: ``parameters`` (:class:`ParameterSpec`, checks, ``declare_parameters``), ``qos``
(one profile per kind of traffic), ``guarded`` (:class:`GuardedNode`: no callback raises into the executor),
``conversions`` (messages <-> numbers) and ``spin`` (``node_main``: one node spun, Ctrl-C and SIGTERM taken
cleanly).

Conventions every node module follows (tests and bringup rely on them):
- the specs are a module-level list ``PARAMETERS`` of :class:`ParameterSpec`, so the
  config/launch consistency tests can read them without starting ROS;
- the node class has ``NODE_NAME`` (also its key in ``config/<node>.yaml``) and takes
  ``**kwargs`` for ``Node.__init__``;
- the module ends with ``main = node_main(TheNodeClass)`` (the console_scripts entry).
"""

from discrete_robot.nodes.conversions import (
    duration_seconds,
    joint_state_msg,
    pose_msg,
    quaternion_msg,
    seconds_to_duration_fields,
)
from discrete_robot.nodes.guarded import GuardedNode, RateLimitedLog, first_non_finite
from discrete_robot.nodes.parameters import (
    ROBOT_DESCRIPTION,
    TIP_LINK,
    ParameterSpec,
    StartupError,
    declare_parameters,
    finite_values,
    node_model,
    non_negative,
    one_of,
    positive,
    ros_name,
)
from discrete_robot.nodes.qos import ACTION_QOS, ACTION_SERVER, JOINT_STATE_QOS, LATCHED_QOS, SERVICE_QOS, STATE_QOS
from discrete_robot.nodes.spin import SPINNING, init_with_stop_signal, node_main, shut_down, spin_until_stopped

__all__ = [
    "ACTION_QOS", "ACTION_SERVER", "JOINT_STATE_QOS", "LATCHED_QOS", "ROBOT_DESCRIPTION", "SERVICE_QOS",
    "SPINNING", "STATE_QOS", "TIP_LINK", "GuardedNode", "ParameterSpec", "RateLimitedLog", "StartupError",
    "declare_parameters",
    "duration_seconds", "finite_values", "first_non_finite", "init_with_stop_signal", "joint_state_msg",
    "node_main", "node_model", "non_negative", "one_of", "pose_msg", "positive", "quaternion_msg", "ros_name",
    "seconds_to_duration_fields", "shut_down", "spin_until_stopped",
]
