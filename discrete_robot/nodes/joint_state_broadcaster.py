"""joint_state_broadcaster's two topics for the arm's simulator: ``joint_states`` (sensor_msgs/JointState) and
``dynamic_joint_states`` (control_msgs/DynamicJointState: each joint's state interfaces by name and value).

As ros2_controllers' broadcaster publishes them (kilted 0f8eb14, joint_state_broadcaster.cpp 139-152: both topics
relative to the node, ``publish_dynamic_joint_states`` true by default in its parameters yaml 67-71): here every
joint's interfaces are the simulator's state, ``position``, ``velocity`` and ``effort`` (rad, rad/s, N m; m, m/s, N
for prismatic joints), stamped with the same simulated time as ``joint_states``.
"""

from collections.abc import Sequence

from sensor_msgs.msg import JointState

from discrete_robot.nodes.conversions import joint_state_msg
from discrete_robot.nodes.qos import JOINT_STATE_QOS

STATE_INTERFACES = ("position", "velocity", "effort")


def dynamic_joint_state_msg(stamp, names: Sequence[str], position, velocity, effort):
    """A DynamicJointState with each joint's :data:`STATE_INTERFACES` and their values."""
    from control_msgs.msg import DynamicJointState, InterfaceValue

    msg = DynamicJointState(joint_names=list(names))
    msg.header.stamp = stamp
    msg.interface_values = [InterfaceValue(interface_names=list(STATE_INTERFACES), values=[float(x) for x in values])
                            for values in zip(position, velocity, effort, strict=True)]
    return msg


class JointStateBroadcaster:
    """The node's publishers of both topics; :meth:`publish` writes the same state to each."""

    def __init__(self, node, joint_states_topic: str):
        from control_msgs.msg import DynamicJointState

        self.joint_states = node.create_publisher(JointState, joint_states_topic, JOINT_STATE_QOS)
        self.dynamic_joint_states = node.create_publisher(DynamicJointState, "dynamic_joint_states", JOINT_STATE_QOS)

    def publish(self, stamp, names: Sequence[str], position, velocity, effort) -> None:
        self.joint_states.publish(joint_state_msg(stamp, names, position, velocity, effort))
        self.dynamic_joint_states.publish(dynamic_joint_state_msg(stamp, names, position, velocity, effort))
