"""controller_manager's services on discrete_robot_node with the Panda and panda_moveit_config's
ros2_controllers.yaml: list_controllers as MoveIt's Ros2ControlManager reads it, switch_controller's rule for an
inactive controller (its action rejects goals; its joints follow joint_commands), and the interface listings."""

import pytest

from panda_controllers import ARM, joint_commands_drive_the_arm, panda_msg, start_panda

pytestmark = pytest.mark.ros


def _switch(ros, activate=(), deactivate=(), strictness=None):
    from controller_manager_msgs.srv import SwitchController

    request = SwitchController.Request(activate_controllers=list(activate), deactivate_controllers=list(deactivate),
                                       strictness=SwitchController.Request.STRICT if strictness is None else strictness)
    return ros.call(SwitchController, "controller_manager/switch_controller", request, timeout=60.0)


def _states(ros) -> dict:
    from controller_manager_msgs.srv import ListControllers

    answer = ros.call(ListControllers, "controller_manager/list_controllers", ListControllers.Request(), timeout=60.0)
    return {c.name: c for c in answer.controller}


def _gripper_goal(position: float):
    from control_msgs.action import GripperCommand

    goal = GripperCommand.Goal()
    goal.command.position, goal.command.max_effort = position, 20.0
    return goal


def test_list_controllers_and_a_switch_deactivating_and_reactivating_the_hand(ros):
    from control_msgs.action import GripperCommand
    from controller_manager_msgs.srv import ListControllerTypes, ListHardwareInterfaces, SwitchController
    from sensor_msgs.msg import JointState

    node = start_panda(ros)
    ros.wait_for_message("joint_states", JointState, timeout=60.0, predicate=panda_msg)
    states = _states(ros)
    assert {name: (c.type, c.state) for name, c in states.items()} == {
        "panda_arm_controller": ("joint_trajectory_controller/JointTrajectoryController", "active"),
        "panda_hand_controller": ("position_controllers/GripperActionController", "active"),
        "joint_state_broadcaster": ("joint_state_broadcaster/JointStateBroadcaster", "active")}
    assert list(states["panda_arm_controller"].claimed_interfaces) == [f"{joint}/position" for joint in ARM]
    assert list(states["panda_hand_controller"].claimed_interfaces) == ["panda_finger_joint1/position"]
    assert list(states["joint_state_broadcaster"].claimed_interfaces) == []
    assert "panda_joint1/velocity" in states["panda_arm_controller"].required_state_interfaces

    types = ros.call(ListControllerTypes, "controller_manager/list_controller_types", ListControllerTypes.Request(),
                     timeout=60.0).types
    assert "position_controllers/GripperActionController" in types
    hardware = ros.call(ListHardwareInterfaces, "controller_manager/list_hardware_interfaces",
                        ListHardwareInterfaces.Request(), timeout=60.0)
    claimed = {i.name: i.is_claimed for i in hardware.command_interfaces}
    assert len(claimed) == 8 * 3 and claimed["panda_joint1/position"] and not claimed["panda_joint1/effort"]
    assert {i.name for i in hardware.state_interfaces} == set(claimed)

    # STRICT: one unknown name, nothing switched
    refused = _switch(ros, deactivate=["panda_hand_controller", "no_such_controller"])
    assert not refused.ok and "no_such_controller" in refused.message
    assert _states(ros)["panda_hand_controller"].state == "active"

    assert _switch(ros, deactivate=["panda_hand_controller"]).ok
    hand = _states(ros)["panda_hand_controller"]
    assert (hand.state, list(hand.claimed_interfaces)) == ("inactive", [])
    assert not ros.send_goal(GripperCommand, "panda_hand_controller/gripper_cmd", _gripper_goal(0.01)).accepted
    assert "panda_hand_controller/gripper_cmd: goal rejected: controller panda_hand_controller is inactive" \
        in node.log()

    # BEST_EFFORT: the already active arm is left out, the hand switched
    answer = _switch(ros, activate=["panda_arm_controller", "panda_hand_controller"],
                     strictness=SwitchController.Request.BEST_EFFORT)
    assert answer.ok and "Controller with name 'panda_arm_controller' is already active." in answer.message
    assert _states(ros)["panda_hand_controller"].state == "active"
    handle = ros.send_goal(GripperCommand, "panda_hand_controller/gripper_cmd", _gripper_goal(0.01))
    assert handle.accepted
    assert ros.goal_result(handle, 120.0).result.reached_goal
    assert node.alive()


def test_with_the_arm_s_controller_deactivated_joint_commands_drive_its_joints(ros):
    from control_msgs.action import FollowJointTrajectory
    from sensor_msgs.msg import JointState

    node = start_panda(ros)
    start = ros.wait_for_message("joint_states", JointState, timeout=60.0, predicate=panda_msg)
    assert _switch(ros, deactivate=["panda_arm_controller"]).ok
    goal = FollowJointTrajectory.Goal()
    assert not ros.send_goal(FollowJointTrajectory, "panda_arm_controller/follow_joint_trajectory", goal).accepted
    joint_commands_drive_the_arm(ros, start)
    assert "is claimed by an active controller" not in node.log()
    assert node.alive()
