"""The stock Panda (example-robot-data) under panda_moveit_config's ros2_controllers.yaml, as the MoveIt-config and
controller-manager node tests start and drive it."""

from pathlib import Path

import pytest

from discrete_robot.model.example_robots import example_robot_path

CONTROLLERS = Path(__file__).resolve().parents[1] / "nodes" / "fixtures" / "panda_ros2_controllers.yaml"
ARM = [f"panda_joint{i}" for i in range(1, 8)]


def panda_msg(msg) -> bool:
    """A joint state of the Panda (not of another test's robot on a shared domain)."""
    return "panda_joint1" in msg.name


def panda_now(ros, topic: str = "joint_states") -> float:
    """The Panda's simulated time, s: the stamp of its next joint state."""
    from sensor_msgs.msg import JointState

    return ros.seconds(ros.wait_for_message(topic, JointState, timeout=30.0, predicate=panda_msg).header.stamp)


def start_panda(ros, controllers_file=CONTROLLERS, **params):
    return ros.start("discrete_robot_node", params={"model_file": str(example_robot_path("panda")),
                                                    "controllers_file": str(controllers_file), **params})


def joint_commands_drive_the_arm(ros, start) -> None:
    """joint_commands move panda_joint2 and panda_joint4 of the unclaimed arm; panda_joint1 stays where it was in
    ``start`` (a joint state)."""
    from sensor_msgs.msg import JointState

    ros.publish("joint_commands", JointState(name=["panda_joint2", "panda_joint4"], position=[-0.6, -1.8]))
    sent = panda_now(ros)
    state = ros.wait_for_message("joint_states", JointState, timeout=60.0,
                                 predicate=lambda m: panda_msg(m) and ros.seconds(m.header.stamp) > sent + 3.0)
    names = list(state.name)
    assert state.position[names.index("panda_joint2")] == pytest.approx(-0.6, abs=0.01)
    assert state.position[names.index("panda_joint4")] == pytest.approx(-1.8, abs=0.01)
    assert state.position[names.index("panda_joint1")] == pytest.approx(start.position[0], abs=0.01)
