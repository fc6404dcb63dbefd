"""The installed control_msgs, controller_manager_msgs and tf2_msgs are the distribution's on the wire:
every type's RIHS01 hash (REP 2011) equals the hash of the upstream definition, its constants are
upstream's, a running node's FollowJointTrajectory feedback topic carries upstream's hash, and so does
a publisher of the gripper actions' feedback and of the controller manager's messages.

The expected figures were computed from the UPSTREAM files, never from vendor/, with the distribution's
own generator (rosidl_adapter + rosidl_generator_type_description, the venv's Kilted wheels):

    git -C <control_msgs clone> archive 6.8.0 control_msgs | tar -x -C /tmp/upstream
    git -C <geometry2 clone> archive 0.39.1 tf2_msgs | tar -x -C /tmp/upstream
    git -C <ros2_control clone> archive 5.16.0 controller_manager_msgs | tar -x -C /tmp/upstream
    .venv/bin/python vendor/type_hashes.py /tmp/upstream/control_msgs action/FollowJointTrajectory.action \\
        msg/JointTolerance.msg msg/JointComponentTolerance.msg msg/JointTrajectoryControllerState.msg \\
        srv/QueryTrajectoryState.srv action/GripperCommand.action action/ParallelGripperCommand.action \\
        msg/GripperCommand.msg msg/DynamicJointState.msg msg/InterfaceValue.msg
    .venv/bin/python vendor/type_hashes.py /tmp/upstream/controller_manager_msgs msg/ChainConnection.msg \\
        msg/ControllerState.msg msg/HardwareInterface.msg msg/NamedLifecycleState.msg \\
        srv/ListControllerTypes.srv srv/ListControllers.srv srv/ListHardwareInterfaces.srv \\
        srv/SwitchController.srv
    .venv/bin/python vendor/type_hashes.py /tmp/upstream/tf2_msgs msg/TFMessage.msg msg/TF2Error.msg \\
        srv/FrameGraph.srv action/LookupTransform.action

The same hashes are in /work/shared/docs/jtc-contract.md and ros2-control-contract.md for the types
listed there. A hash covers the
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
#: ros-controls/ros2_control, tag 5.16.0 on the kilted branch (its definitions equal the branch head cbe7d2c)
CONTROLLER_MANAGER_MSGS_RELEASE = ("5.16.0", "ab50366f92e77d716ea756e326fb959951a28a57")
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
    "control_msgs/action/GripperCommand":
        "RIHS01_e17c0e644eccf14bea84a0a93e0977182872c2eb7873ca6694900059b46dbc84",
    "control_msgs/action/GripperCommand_Feedback":
        "RIHS01_8f7c520077bab528bb9161ee3b83c81eee1f8aecadb8922ce82c79d667a819c4",
    "control_msgs/action/GripperCommand_FeedbackMessage":
        "RIHS01_392ff03fcd872f9dc2405cbeb2897fcf011ad9998458b6aa85c603b8a49e431d",
    "control_msgs/action/GripperCommand_GetResult":
        "RIHS01_7e60a7606063d4a2728d21badac099e68b734a196ac3ab42d1d4c668eb0bb3cd",
    "control_msgs/action/GripperCommand_Goal":
        "RIHS01_607d9f41eb241e1922e90f02125e87ae6bfb78f7f64a71dc92630263d01f8b6d",
    "control_msgs/action/GripperCommand_Result":
        "RIHS01_bf512d5aa6a0e4fe4d8be22b2ec4a1973c3d250fa1f65e47450322c25c45c0a0",
    "control_msgs/action/GripperCommand_SendGoal":
        "RIHS01_6bf8cc4ce80cd499e7dd3258c03c50c3fa6672b469ff8355339ef1df77fcd212",
    "control_msgs/action/ParallelGripperCommand":
        "RIHS01_adfd3c1ebe8abc38ebcc0e454b6423d291d4010dd5697d14eca5b9be4726ae18",
    "control_msgs/action/ParallelGripperCommand_Feedback":
        "RIHS01_ed6f7c4e5aea7f960432663c0e762e001a0a1f5cc0130d126e60041412d0543c",
    "control_msgs/action/ParallelGripperCommand_FeedbackMessage":
        "RIHS01_c61f4cf99d06c5a3e24bed17c2910bdf66a30d89461e2ac7b5fd538a34b022cc",
    "control_msgs/action/ParallelGripperCommand_GetResult":
        "RIHS01_e4c7f0e8a831ce5625ed20abcd13796406d945f92ebc7ad5972e0b0d29b381bd",
    "control_msgs/action/ParallelGripperCommand_Goal":
        "RIHS01_412807b6b6acf2bf406fb0cf3b5c8f84286cd4e4d425734155aa1ff41caa0063",
    "control_msgs/action/ParallelGripperCommand_Result":
        "RIHS01_51acbcd62aa44097d3877c506eab1146856fa8768628ffbe102c1699152d2afa",
    "control_msgs/action/ParallelGripperCommand_SendGoal":
        "RIHS01_567c37373fed1260adbe047415688c73e4f3e94b2e3982761ecc71fd63d710a7",
    "control_msgs/msg/DynamicJointState":
        "RIHS01_18024c98a62697680f581108eeed40b28fb4542fa0ac5a8e36f56c62b6813d26",
    "control_msgs/msg/GripperCommand":
        "RIHS01_57eb8f326c9889ca8bb34ead82cc94cc09bf6bc5c3b6c09546dca3a00b589890",
    "control_msgs/msg/InterfaceValue":
        "RIHS01_74a12144ef6b7af67533195cb30f7f607d3301b66950208a72d280695f3e190c",
    "controller_manager_msgs/msg/ChainConnection":
        "RIHS01_2daecd1da4b171f48b291c79747657a651eb1ab8821b68e38b1c88c736bba91c",
    "controller_manager_msgs/msg/ControllerState":
        "RIHS01_9a8780ab9814b6032978a07c6c7033cf1a7894ac8d948a6fb72afea07b04cc83",
    "controller_manager_msgs/msg/HardwareInterface":
        "RIHS01_b4c556991db81ca56a49338b5e8f0675a6707faee54fba161d2bbd4d963d418a",
    "controller_manager_msgs/msg/NamedLifecycleState":
        "RIHS01_b7947b6f8df8f7e93d1cb8d115842fb0eeddfa6fb5c7b86cc0f3cafd55be4c1f",
    "controller_manager_msgs/srv/ListControllerTypes":
        "RIHS01_873e8d2bb81b8b5903ca736d299ba959f929efec4b4a18d17354b8b322822e05",
    "controller_manager_msgs/srv/ListControllerTypes_Request":
        "RIHS01_b6cda89b7e31f5525f7a328119f64f6bf5710db263cecb00f91e59aa9b5d41de",
    "controller_manager_msgs/srv/ListControllerTypes_Response":
        "RIHS01_4e924ba35dac47257de06fabd757aaf7bd05f47da99dc878864c9c3f9a3f721e",
    "controller_manager_msgs/srv/ListControllers":
        "RIHS01_4f8e36bb1fa5afdeba45c2d56ae6a2097b1493a253f961dd6290c085033bd189",
    "controller_manager_msgs/srv/ListControllers_Request":
        "RIHS01_fb985bc3dcc9b07c7d3af4b46787afa5a09ac79da6465ea42b5696f9355c1f70",
    "controller_manager_msgs/srv/ListControllers_Response":
        "RIHS01_445459f6b387bda67942d8bea4dfee82dedf12388317e68d5bc4513993799b86",
    "controller_manager_msgs/srv/ListHardwareInterfaces":
        "RIHS01_c3e561a6e8cc7b9d577d8065c783038e51f6950cbe9bed67fb117a3e2e04d8f1",
    "controller_manager_msgs/srv/ListHardwareInterfaces_Request":
        "RIHS01_419a204c74b85adb602848d0f288fc756d0216f70bd30ab889c1d9b154ed8098",
    "controller_manager_msgs/srv/ListHardwareInterfaces_Response":
        "RIHS01_32da0652393586234856a1f44a039ff1487bdc1905fbf5068d026b77d4252e63",
    "controller_manager_msgs/srv/SwitchController":
        "RIHS01_d4ad10aa5da7808bc522d55d4123d8ef79de73d049d165639d7663ac37cc9895",
    "controller_manager_msgs/srv/SwitchController_Request":
        "RIHS01_d258d35c1ce6d7469e0155900202519be21f82c2641393540babd728a09cfa50",
    "controller_manager_msgs/srv/SwitchController_Response":
        "RIHS01_b7e90d1a67a2e4e3da7064ffb328cfe3111147a1a55cafaafd73b1d66681a251",
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
    "controller_manager_msgs/srv/SwitchController_Request": {
        "BEST_EFFORT": 1, "STRICT": 2, "AUTO": 3, "FORCE_AUTO": 4},
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
    pytest.importorskip("controller_manager_msgs.srv", reason="needs controller_manager_msgs (run `make setup`)")


@pytest.mark.parametrize("type_name", UPSTREAM_HASHES)
def test_installed_type_hash_is_upstreams(type_name):
    assert installed_hash(type_name) == UPSTREAM_HASHES[type_name]


@pytest.mark.parametrize("type_name", UPSTREAM_CONSTANTS)
def test_constants_are_upstreams(type_name):
    """Every constant the installed type has (rosidl_generator_py keeps them in its metaclass's ``__constants``)."""
    metaclass = type(_python_type(type_name)[2])
    [constants] = [value for key, value in vars(metaclass).items() if key.endswith("__constants")]
    assert constants == UPSTREAM_CONSTANTS[type_name]


@pytest.mark.parametrize("package", ["control_msgs", "controller_manager_msgs", "tf2_msgs"])
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


@pytest.mark.parametrize("type_name", [
    "control_msgs/action/GripperCommand_FeedbackMessage",
    "control_msgs/action/ParallelGripperCommand_FeedbackMessage",
    "control_msgs/msg/DynamicJointState",
    "controller_manager_msgs/msg/ControllerState",
])
def test_publisher_announces_upstreams_hash_on_the_wire(type_name):
    """A publisher of the gripper actions' feedback (what a gripper controller's action server publishes) and of
    the controller manager's messages is announced in discovery with upstream's hash."""
    rclpy = pytest.importorskip("rclpy")
    _, _, python_type = _python_type(type_name)
    topic = "wire_" + type_name.replace("/", "_").lower()
    context = rclpy.Context()
    rclpy.init(context=context)
    try:
        node = rclpy.create_node("wire_hash_check", context=context)
        node.create_publisher(python_type, topic, 1)
        [info] = node.get_publishers_info_by_topic(topic)
        assert (info.topic_type, str(info.topic_type_hash)) == (type_name, UPSTREAM_HASHES[type_name])
        node.destroy_node()
    finally:
        rclpy.shutdown(context=context)
