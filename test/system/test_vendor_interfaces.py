"""The installed control_msgs and tf2_msgs are the distribution's on the wire: every type's RIHS01 hash
(REP 2011) equals the hash of the upstream definition, its constants are upstream's, and a running
node's FollowJointTrajectory feedback topic carries upstream's hash.

The expected figures were computed from the UPSTREAM files, never from vendor/, with the distribution's
own generator (rosidl_adapter + rosidl_generator_type_description, the venv's Kilted wheels):

    git -C <control_msgs clone> archive 6.8.0 control_msgs | tar -x -C /tmp/upstream
    git -C <geometry2 clone> archive 0.39.1 tf2_msgs | tar -x -C /tmp/upstream
    .venv/bin/python vendor/type_hashes.py /tmp/upstream/control_msgs action/FollowJointTrajectory.action \\
        msg/JointTolerance.msg msg/JointComponentTolerance.msg msg/JointTrajectoryControllerState.msg \\
        srv/QueryTrajectoryState.srv
    .venv/bin/python vendor/type_hashes.py /tmp/upstream/tf2_msgs msg/TFMessage.msg msg/TF2Error.msg \\
        srv/FrameGraph.srv action/LookupTransform.action

The same hashes are in /work/shared/docs/jtc-contract.md for the types listed there. A hash covers the
names, types and order of the fields of a type and of every type it nests, but neither constants nor
default values: the constants are compared separately, and no upstream field here has a default.

The installed hash is read where rcl reads it when it announces an endpoint: the type support's
``get_type_hash_func`` (rosidl_runtime_c's message/service/action_type_support_struct.h). On a system
ROS 2 the same test runs against the distribution's own packages.
"""

import ctypes
import importlib
import json
from pathlib import Path

import pytest

#: ros-controls/control_msgs, tag 6.8.0 (the Kilted line since 6.3.0)
CONTROL_MSGS_RELEASE = ("6.8.0", "13dacdd8748264b6cd7cbbc9893c18c90e24be00")
#: ros2/geometry2 tf2_msgs, tag 0.39.1; its definitions are unchanged since 25126cc (2019, the actions added)
TF2_MSGS_RELEASE = ("0.39.1", "1b005c6556cf350d7670812ef30eefed8443a759")

UPSTREAM_HASHES = {
    "control_msgs/action/FollowJointTrajectory":
        "RIHS01_ff29901b2693f5deb847e96084a1c2cdb26e70b7c847be21859b70a55fb29cf0",
    "control_msgs/action/FollowJointTrajectory_Feedback":
        "RIHS01_0bb018d181bdc6384dd75365480967bd1d6eaee4ef3dd597c64cd0b8bdc10867",
    "control_msgs/action/FollowJointTrajectory_FeedbackMessage":
        "RIHS01_95618cc73912d99b9acaa17d2da5e832cb0bfdeede7534fa8ec600feca2a6c4b",
    "control_msgs/action/FollowJointTrajectory_GetResult":
        "RIHS01_e3ceb38e3e1867c8dc0f46014df26e90eb93422f27e9e97f936e07f94be4bc8b",
    "control_msgs/action/FollowJointTrajectory_Goal":
        "RIHS01_8a9060704b269608f5a340934cc26e66869dd14bdac29e2e7fd9ec8b9882d205",
    "control_msgs/action/FollowJointTrajectory_Result":
        "RIHS01_8002e99ed2c14c6faa522f2a93c26d744c5982f254f9e98ff9c6f19789bdb220",
    "control_msgs/action/FollowJointTrajectory_SendGoal":
        "RIHS01_b13789dddc325a7a962825c45e28c77d37237ec129dd0c34dc5994562938c57f",
    "control_msgs/msg/JointComponentTolerance":
        "RIHS01_739ea7566931944d33830fa10f1bf5e7a7fbdc3172bce7a7eaac642bd6e3ffa4",
    "control_msgs/msg/JointTolerance":
        "RIHS01_c254f9cece0f3b733017b6990fd46d1326e25242d6b8844398c97d9a88e7d648",
    "control_msgs/msg/JointTrajectoryControllerState":
        "RIHS01_51d8dd89cc624cbe9daaeeb4d80d6de9b86168ffdc3be41fefc0953e3c26e480",
    "control_msgs/srv/QueryTrajectoryState":
        "RIHS01_4a0935dffef18bc5b9e101c9d03d84e681ecd4cebd724b8f11fde008751a325a",
    "control_msgs/srv/QueryTrajectoryState_Request":
        "RIHS01_ec3322824b7a1ee850e03ff951f48b10395cab62a5a5662da32000f8b06aa791",
    "control_msgs/srv/QueryTrajectoryState_Response":
        "RIHS01_f7b920129b8d5841312bcb89e6275508e19b3735a371b2df6e417447a44ea5db",
    "tf2_msgs/action/LookupTransform":
        "RIHS01_0b8adf6bc0b5958879e3265b41a457e03558fe523890a81252c70eba97a82c5d",
    "tf2_msgs/action/LookupTransform_Goal":
        "RIHS01_815efc294ad17c813c6043cdde781ff55810d49da02ed07f9237dcd20e88d498",
    "tf2_msgs/action/LookupTransform_Result":
        "RIHS01_061d4423af5352ff5314c8effef8faab133991a78f1b2bcd1fecabad80871225",
    "tf2_msgs/action/LookupTransform_Feedback":
        "RIHS01_2da0b02f990f04404ab8c98a2a68cf5bbc773ae747f96911f2d55499cfb51542",
    "tf2_msgs/msg/TF2Error":
        "RIHS01_db2485e7d6a0ec75bf087e058ee45df682acc3a621ca7780503d10aac141809a",
    "tf2_msgs/msg/TFMessage":
        "RIHS01_e369d0f05a23ae52508854b66f6aa0437f3449d652e8cbf22d5abe85d020f087",
    "tf2_msgs/srv/FrameGraph":
        "RIHS01_0d1fbc6222c018ba5f33822904a2fdd4063705289956d3fdde07cd8c50fe8067",
}

UPSTREAM_CONSTANTS = {
    "control_msgs/action/FollowJointTrajectory_Result": {
        "SUCCESSFUL": 0, "INVALID_GOAL": -1, "INVALID_JOINTS": -2, "OLD_HEADER_TIMESTAMP": -3,
        "PATH_TOLERANCE_VIOLATED": -4, "GOAL_TOLERANCE_VIOLATED": -5},
    "control_msgs/msg/JointComponentTolerance": {
        "X_AXIS": 1, "Y_AXIS": 2, "Z_AXIS": 3, "TRANSLATION": 4, "ROTATION": 5},
    "tf2_msgs/msg/TF2Error": {
        "NO_ERROR": 0, "LOOKUP_ERROR": 1, "CONNECTIVITY_ERROR": 2, "EXTRAPOLATION_ERROR": 3,
        "INVALID_ARGUMENT_ERROR": 4, "TIMEOUT_ERROR": 5, "TRANSFORM_ERROR": 6},
}

FEEDBACK_TOPIC = "/joint_trajectory_controller/follow_joint_trajectory/_action/feedback"


class _TypeHash(ctypes.Structure):
    """rosidl_type_hash_t (rosidl_runtime_c/type_hash.h)."""

    _fields_ = [("version", ctypes.c_uint8), ("value", ctypes.c_uint8 * 32)]


_HASH_FUNCTION = ctypes.CFUNCTYPE(ctypes.POINTER(_TypeHash), ctypes.c_void_p)
# How many pointers precede get_type_hash_func in rosidl_message_type_support_t (identifier, data, func),
# rosidl_service_type_support_t (... request, response and event type supports, the event's create and
# destroy functions) and rosidl_action_type_support_t (goal, result and cancel services, feedback and status).
_HASH_FUNCTION_SLOT = {"msg": 3, "srv": 8, "action": 5}


def _python_type(type_name: str):
    """control_msgs/action/FollowJointTrajectory_Goal -> control_msgs.action.FollowJointTrajectory.Goal."""
    package, kind, name = type_name.split("/")
    module = importlib.import_module(f"{package}.{kind}")
    base, _, part = name.partition("_")
    value = getattr(module, base)
    if part in ("Goal", "Result", "Feedback", "Request", "Response"):
        return value, "msg", getattr(value, part)
    if part:  # FeedbackMessage, SendGoal, GetResult: the action's implementation types
        member = getattr(value.Impl, f"{part}Service" if part in ("SendGoal", "GetResult") else part)
        return value, "srv" if part in ("SendGoal", "GetResult") else "msg", member
    return value, kind, value


def installed_hash(type_name: str) -> str:
    """The RIHS01 string the installed C type support reports for ``type_name``."""
    _, kind, python_type = _python_type(type_name)
    python_type.__class__.__import_type_support__()
    capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
    capsule_pointer.restype, capsule_pointer.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    support = capsule_pointer(python_type._TYPE_SUPPORT, None)
    slots = ctypes.cast(support, ctypes.POINTER(ctypes.c_void_p))
    type_hash = _HASH_FUNCTION(slots[_HASH_FUNCTION_SLOT[kind]])(support).contents
    return f"RIHS{type_hash.version:02x}_{bytes(type_hash.value).hex()}"


@pytest.fixture(scope="module", autouse=True)
def _packages_installed():
    pytest.importorskip("control_msgs.action", reason="needs control_msgs (run `make setup`)")
    pytest.importorskip("tf2_msgs.msg", reason="needs tf2_msgs (run `make setup`)")


@pytest.mark.parametrize("type_name", UPSTREAM_HASHES)
def test_installed_type_hash_is_upstreams(type_name):
    assert installed_hash(type_name) == UPSTREAM_HASHES[type_name]


@pytest.mark.parametrize("type_name", UPSTREAM_CONSTANTS)
def test_constants_are_upstreams(type_name):
    """Every constant the installed type has (rosidl_generator_py keeps them in its metaclass's ``__constants``)."""
    metaclass = type(_python_type(type_name)[2])
    [constants] = [value for key, value in vars(metaclass).items() if key.endswith("__constants")]
    assert constants == UPSTREAM_CONSTANTS[type_name]


@pytest.mark.parametrize("package", ["control_msgs", "tf2_msgs"])
def test_no_field_has_a_default_as_upstream(package):
    """Upstream's definitions give no field a default value (vendor/type_hashes.py printed 'defaults': {})."""
    from ament_index_python.packages import get_package_share_directory

    share = Path(get_package_share_directory(package))
    described = [json.loads(path.read_text())["type_description_msg"] for path in share.glob("*/*.json")]
    assert described
    defaults = {(td["type_name"], field["name"]): field["default_value"]
                for msg in described for td in [msg["type_description"], *msg["referenced_type_descriptions"]]
                if td["type_name"].startswith(f"{package}/") for field in td["fields"] if field["default_value"]}
    assert defaults == {}


def test_the_hash_reader_reads_the_distributions_own_types():
    """The reader is checked on a type the wheels ship (std_msgs 5.5.x, Kilted): its hash equals the one rcl
    announces on the wire for a publisher of that type."""
    rclpy = pytest.importorskip("rclpy")
    from std_msgs.msg import String

    context = rclpy.Context()
    rclpy.init(context=context)
    try:
        node = rclpy.create_node("hash_reader_check", context=context)
        node.create_publisher(String, "hash_reader_check", 1)
        [info] = node.get_publishers_info_by_topic("hash_reader_check")
        assert str(info.topic_type_hash) == installed_hash("std_msgs/msg/String")
        node.destroy_node()
    finally:
        rclpy.shutdown(context=context)


@pytest.mark.ros
def test_feedback_topic_carries_upstreams_hash_on_the_wire(ros):
    """A running discrete_robot_node announces its FollowJointTrajectory feedback publisher with upstream's
    FeedbackMessage hash, as a MoveIt on a system ROS 2 sees it in discovery."""
    from sensor_msgs.msg import JointState

    ros.start("discrete_robot_node", params={"time_step": 0.005, "publish_rate": 50.0})
    ros.wait_for_message("joint_states", JointState, timeout=30.0)
    found = []
    ros.spin_until(lambda: bool(found.extend(ros.node.get_publishers_info_by_topic(FEEDBACK_TOPIC)) or found),
                   timeout=30.0)
    assert found, f"no publisher on {FEEDBACK_TOPIC}\n{ros.logs()}"
    assert {str(info.topic_type_hash) for info in found} == {
        UPSTREAM_HASHES["control_msgs/action/FollowJointTrajectory_FeedbackMessage"]}
    assert {info.topic_type for info in found} == {"control_msgs/action/FollowJointTrajectory_FeedbackMessage"}
