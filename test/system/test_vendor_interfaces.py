"""The standard interfaces built into the venv where the distribution lacks them (vendor/) are field for field
the distribution's: names, types, order and constants, as listed here from the upstream definitions
(ros2/geometry2 tf2_msgs/msg/TFMessage.msg; ros-controls/control_msgs control_msgs/action/FollowJointTrajectory.action,
msg/JointTolerance.msg, msg/JointComponentTolerance.msg, see vendor/README.md). On a system ROS 2 the same
check runs against the distribution's own packages."""

import pytest

TRAJECTORY_POINT = "trajectory_msgs/JointTrajectoryPoint"
MULTI_DOF_POINT = "trajectory_msgs/MultiDOFJointTrajectoryPoint"

UPSTREAM = {
    ("tf2_msgs.msg", "TFMessage"): {"transforms": "sequence<geometry_msgs/TransformStamped>"},
    ("control_msgs.msg", "JointTolerance"): {
        "name": "string", "position": "double", "velocity": "double", "acceleration": "double", "effort": "double"},
    ("control_msgs.msg", "JointComponentTolerance"): {
        "joint_name": "string", "component": "uint16", "position": "double", "velocity": "double",
        "acceleration": "double"},
    ("control_msgs.action", "FollowJointTrajectory.Goal"): {
        "trajectory": "trajectory_msgs/JointTrajectory",
        "multi_dof_trajectory": "trajectory_msgs/MultiDOFJointTrajectory",
        "path_tolerance": "sequence<control_msgs/JointTolerance>",
        "component_path_tolerance": "sequence<control_msgs/JointComponentTolerance>",
        "goal_tolerance": "sequence<control_msgs/JointTolerance>",
        "component_goal_tolerance": "sequence<control_msgs/JointComponentTolerance>",
        "goal_time_tolerance": "builtin_interfaces/Duration"},
    ("control_msgs.action", "FollowJointTrajectory.Result"): {"error_code": "int32", "error_string": "string"},
    ("control_msgs.action", "FollowJointTrajectory.Feedback"): {
        "header": "std_msgs/Header", "joint_names": "sequence<string>", "desired": TRAJECTORY_POINT,
        "actual": TRAJECTORY_POINT, "error": TRAJECTORY_POINT, "multi_dof_joint_names": "sequence<string>",
        "multi_dof_desired": MULTI_DOF_POINT, "multi_dof_actual": MULTI_DOF_POINT, "multi_dof_error": MULTI_DOF_POINT},
}
CONSTANTS = {
    ("control_msgs.msg", "JointComponentTolerance"): {
        "X_AXIS": 1, "Y_AXIS": 2, "Z_AXIS": 3, "TRANSLATION": 4, "ROTATION": 5},
    ("control_msgs.action", "FollowJointTrajectory.Result"): {
        "SUCCESSFUL": 0, "INVALID_GOAL": -1, "INVALID_JOINTS": -2, "OLD_HEADER_TIMESTAMP": -3,
        "PATH_TOLERANCE_VIOLATED": -4, "GOAL_TOLERANCE_VIOLATED": -5},
}


def _type(module: str, name: str):
    imported = pytest.importorskip(module)
    value = imported
    for part in name.split("."):
        value = getattr(value, part)
    return value


@pytest.mark.parametrize("key", UPSTREAM, ids=lambda key: f"{key[0]}.{key[1]}")
def test_fields_names_types_and_order_are_the_distributions(key):
    fields = _type(*key).get_fields_and_field_types()
    assert list(fields.items()) == list(UPSTREAM[key].items())


@pytest.mark.parametrize("key", CONSTANTS, ids=lambda key: f"{key[0]}.{key[1]}")
def test_constants_are_the_distributions(key):
    message = _type(*key)
    assert {name: getattr(message, name) for name in CONSTANTS[key]} == CONSTANTS[key]
