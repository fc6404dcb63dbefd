"""ros2_controllers.yaml to controller specs (discrete_robot.control.configuration), as controller_manager reads it."""

import pytest

from discrete_robot.control.configuration import (
    BROADCASTER,
    GRIPPER,
    JTC,
    check_claims,
    default_controllers,
    finger_joints,
    read_controllers,
)
from discrete_robot.errors import ModelError
from discrete_robot.model.urdf_reader import model_from_urdf

ARM = [f"panda_joint{i}" for i in range(1, 8)]
# panda_moveit_config's config/ros2_controllers.yaml layout (moveit_resources), written out here
PANDA = """
controller_manager:
  ros__parameters:
    update_rate: 100
    panda_arm_controller:
      type: joint_trajectory_controller/JointTrajectoryController
    panda_hand_controller:
      type: position_controllers/GripperActionController
    joint_state_broadcaster:
      type: joint_state_broadcaster/JointStateBroadcaster
panda_arm_controller:
  ros__parameters:
    command_interfaces: [position]
    state_interfaces: [position, velocity]
    joints: [panda_joint1, panda_joint2, panda_joint3, panda_joint4, panda_joint5, panda_joint6, panda_joint7]
    allow_nonzero_velocity_at_trajectory_end: true
panda_hand_controller:
  ros__parameters:
    joint: panda_finger_joint1
"""


def _write(tmp_path, text):
    path = tmp_path / "ros2_controllers.yaml"
    path.write_text(text)
    return path


def test_panda_moveit_config_gives_three_controllers(tmp_path):
    arm, hand, broadcaster = read_controllers(_write(tmp_path, PANDA), ARM + ["panda_finger_joint1",
                                                                             "panda_finger_joint2"])
    assert (arm.name, arm.type, arm.joints) == ("panda_arm_controller", JTC, tuple(ARM))
    assert arm.parameters["allow_nonzero_velocity_at_trajectory_end"] is True
    assert arm.command_interfaces[0] == "panda_joint1/position" and len(arm.command_interfaces) == 7
    assert (hand.name, hand.type, hand.joints) == ("panda_hand_controller", GRIPPER, ("panda_finger_joint1",))
    assert hand.command_interfaces == ("panda_finger_joint1/position",)
    assert (broadcaster.type, broadcaster.joints, broadcaster.command_interfaces) == (BROADCASTER, (), ())


def test_an_unknown_type_is_refused_naming_the_controller_and_the_type(tmp_path):
    text = PANDA.replace("position_controllers/GripperActionController", "admittance_controller/Admittance")
    with pytest.raises(ModelError, match="controller 'panda_hand_controller' has type "
                                         "'admittance_controller/Admittance'"):
        read_controllers(_write(tmp_path, text))


def test_a_joint_claimed_twice_is_refused_as_controller_manager_refuses_it(tmp_path):
    text = PANDA + """
hand_effort:
  ros__parameters:
    joints: [panda_finger_joint1]
    interface_name: position
"""
    text = text.replace("    joint_state_broadcaster:\n", "    hand_effort:\n      type: forward_command_controller/"
                                                            "ForwardCommandController\n    joint_state_broadcaster:\n")
    with pytest.raises(ModelError, match="Unable to activate controller 'hand_effort' since the command interface "
                                         "'panda_finger_joint1/position' will be used by another controller"):
        read_controllers(_write(tmp_path, text))
    # on another interface of the same joint, no command interface is claimed twice: accepted, as upstream
    read_controllers(_write(tmp_path, text.replace("interface_name: position", "interface_name: effort")))


def test_claims_only_conflict_among_controllers_active_together(tmp_path):
    arm, hand, _ = read_controllers(_write(tmp_path, PANDA))
    check_claims([arm, hand])
    with pytest.raises(ModelError, match="'panda_joint3/position'"):
        check_claims([arm, arm.__class__("other", JTC, ("panda_joint3",))])


@pytest.mark.parametrize("old, new, message", [
    ("    joint: panda_finger_joint1\n", "    joint: []\n", "panda_hand_controller.joint must name"),
    ("    joints: [panda_joint1,", "    joints: [panda_joint1, panda_joint1,", "names a joint twice"),
    ("controller_manager:", "manager:", "no 'controller_manager: ros__parameters:' section"),
])
def test_bad_files_are_one_line_naming_the_field(tmp_path, old, new, message):
    with pytest.raises(ModelError, match=message):
        read_controllers(_write(tmp_path, PANDA.replace(old, new)))


def test_joints_must_be_the_robots(tmp_path):
    with pytest.raises(ModelError, match=r"panda_hand_controller names \['panda_finger_joint1'\]"):
        read_controllers(_write(tmp_path, PANDA), ARM)


def _link(name):
    return (f'<link name="{name}"><inertial><mass value="0.5"/>'
            '<inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>')


def _joint(name, kind, parent, child, extra=""):
    return (f'<joint name="{name}" type="{kind}"><parent link="{parent}"/><child link="{child}"/>'
            f'<axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="10" velocity="1"/>{extra}</joint>')


def test_default_without_a_file_arm_takes_the_non_fingers_and_the_finger_gets_a_gripper():
    """A prismatic rail under the arm is no finger; the finger's mimic follower is claimed by no one."""
    urdf = ('<robot name="railed"><link name="world"/>' + "".join(_link(n) for n in ["base", "cart", "arm",
                                                                                     "hand", "left", "right"])
            + '<joint name="mount" type="fixed"><parent link="world"/><child link="base"/></joint>'
            + _joint("rail", "prismatic", "base", "cart") + _joint("shoulder", "revolute", "cart", "arm")
            + '<joint name="wrist" type="fixed"><parent link="arm"/><child link="hand"/></joint>'
            + _joint("finger_left", "prismatic", "hand", "left")
            + _joint("finger_right", "prismatic", "hand", "right", '<mimic joint="finger_left"/>') + "</robot>")
    model = model_from_urdf(urdf)
    assert finger_joints(model) == ["finger_left"]
    arm, gripper = default_controllers(model.joint_names, finger_joints(model))
    assert (arm.name, arm.type, arm.joints) == ("joint_trajectory_controller", JTC, ("rail", "shoulder"))
    assert (gripper.name, gripper.type, gripper.joints) == ("gripper_controller", GRIPPER, ("finger_left",))
    check_claims([arm, gripper])
