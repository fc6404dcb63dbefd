"""The robot description from the latched ``robot_description`` topic, as controller_manager takes it since Jazzy
(robot_state_publisher publishes it, transient local). The text then goes through the same checks as the
``robot_description`` parameter (discrete_robot.model.sources.robot_model: at most 10 MB, a valid URDF)."""

from rclpy.executors import SingleThreadedExecutor
from std_msgs.msg import String

from discrete_robot.nodes.common import LATCHED_QOS, ParameterSpec, StartupError, node_model, ros_name

DESCRIPTION_TOPIC = ParameterSpec("robot_description_topic", "", "take the URDF from this latched topic (e.g. "
                                                                 "robot_description, published by "
                                                                 "robot_state_publisher) when the robot_description "
                                                                 "parameter is empty; the node waits for it and then "
                                                                 "does not publish its own; empty = off",
                                  check=ros_name(empty=True), read_only=True)


def description_from_topic(node, topic: str) -> str:
    """The first message on the latched ``topic``: waited for (a stop signal ends the process meanwhile, as any
    start-up step); StartupError when it is empty."""
    received: list[str] = []
    subscription = node.create_subscription(String, topic, lambda msg: received.append(msg.data), LATCHED_QOS)
    executor = SingleThreadedExecutor(context=node.context)
    executor.add_node(node)
    node.get_logger().info(f"waiting for the robot description on {node.resolve_topic_name(topic)}")
    try:
        while not received:
            executor.spin_once(timeout_sec=0.1)
    finally:
        executor.remove_node(node)
        executor.shutdown()
        node.destroy_subscription(subscription)
    if not received[0].strip():
        raise StartupError(f"robot_description_topic: {topic} gave an empty robot description")
    return received[0]


def described_model(node, values: dict, default_file):
    """(The node's robot, whether the node publishes ``robot_description`` itself): from the latched
    ``robot_description_topic`` when it is set and the ``robot_description`` parameter empty (robot_state_publisher
    then publishes it), else as :func:`~discrete_robot.nodes.parameters.node_model` gives it."""
    from_topic = bool(values["robot_description_topic"]) and not values["robot_description"].strip()
    if from_topic:
        values = {**values, "robot_description": description_from_topic(node, values["robot_description_topic"])}
    return node_model(values, default_file), not from_topic
