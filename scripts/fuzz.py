"""Fuzz the live nodes over DDS with hypothesis-generated requests and messages; write a JSON report.

    .venv/bin/python scripts/fuzz.py [--cases 5000] [--output results/fuzz.json] [--only predict_push ...]

``make fuzz`` runs it with 5000 cases per service, action and topic. Each target starts its node as a child
process (the ROS tests' harness) and sends generated cases: NaN, ±inf, extremes and denormals in every
float, empty, mismatched and huge arrays, degenerate and clockwise polygons, duplicate and unknown joint
names, non-monotonic times. It counts, per target:

- ``refusals``: ``success = false`` answers (services, actions) and rejected goals;
- ``crashes``: the node process died (it is restarted and the run goes on);
- ``hangs``: a service or action gave no answer within ``--timeout`` s (or the target's own longer bound), or a
  topic's node stopped publishing its state;
- ``non_finite_successes``: a success response holding NaN or ±inf (parameters: a NaN or ±inf value set);
- ``unanswered``: goals, cancels or results that never came (storms), a subset of ``hangs``;
- ``p50_ms`` / ``p99_ms``: service latency (actions: goal to result).

Beyond single requests: the actions (FollowJointTrajectory of discrete_robot_node, push_object of
manipulation_node) get single hostile goals and ``storm`` cases (bursts of up to 4 clients x 10 goals at once,
preemptions, cancel storms, and a client process killed with SIGKILL mid-burst, after which the server must
still answer); the simulator services (pause, resume, reset, step of any size, set_state, in any order) and
the run-time parameters (any name, type 0-9 or 99, NaN, ±inf, extremes, strings) of three nodes are ``calls``
targets: each case names the service and its request.

Cases come from hypothesis strategies driven by ``@given`` (no shrinking: a fuzz run reports, it does not
stop), so the same module serves the in-test DDS smoke run (``test/nodes/test_fuzz_smoke.py``, a hundred
cases per target).
"""

import argparse
import functools
import json
import math
import os
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

NASTY = st.sampled_from([0.0, -0.0, 5e-324, -5e-324, 1e-300, 1e300, -1e300, 1e308, -1e308, math.nan, math.inf,
                         -math.inf])
#: s a node may take to start serving (imports and compiled kernels on a loaded 2-core machine)
START_S = 120.0
ANY_FLOAT = st.one_of(st.floats(allow_nan=True, allow_infinity=True), NASTY)


def mostly(sane, nasty=ANY_FLOAT):
    """``sane`` four times in five: a case must often pass the first checks so later ones get exercised."""
    return st.one_of(sane, sane, sane, sane, nasty)


def well_formed_or_any(case):
    """Half the cases from ``case(True)`` (every field valid, anywhere in its range: the answers' numbers are
    checked), half from ``case(False)`` (any field may be hostile: the refusals are checked)."""
    return st.one_of(case(True), case(False))


SMALL = mostly(st.floats(-0.3, 0.3))
POSITIVE = mostly(st.floats(0.001, 3.0))
SQUARE = [(-0.05, -0.05), (0.05, -0.05), (0.05, 0.05), (-0.05, 0.05)]
ARM_JOINTS = ["joint1", "joint2"]
SPACE_BODIES = ["base", "arm1_link1", "arm1_link2", "arm2_link1", "arm2_link2"]


def _points(pairs):
    from geometry_msgs.msg import Point

    return [Point(x=float(x), y=float(y)) for x, y in pairs]


FOOTPRINT = st.one_of(st.just(SQUARE), st.just(SQUARE), st.just(SQUARE[::-1]),
                      st.lists(st.tuples(SMALL, SMALL), max_size=8))
FLOAT_ARRAY = st.one_of(st.lists(SMALL, max_size=4), st.lists(ANY_FLOAT, max_size=4),
                        st.lists(st.floats(-1.0, 1.0), min_size=2000, max_size=2000))
NAMES = mostly(st.sampled_from([ARM_JOINTS, ARM_JOINTS[::-1], []]),
               st.one_of(st.just(["joint1", "joint1"]), st.lists(st.sampled_from(["joint1", "joint2", "elbow", ""]),
                                                                  max_size=3)))


@st.composite
def predict_push(draw, valid: bool):
    from discrete_robot_interfaces.srv import PredictPush
    from geometry_msgs.msg import Point, Vector3

    pick = (lambda sane: sane) if valid else mostly
    return PredictPush.Request(
        footprint=_points(draw(st.just(SQUARE) if valid else FOOTPRINT)), normal_force=draw(pick(st.floats(1e-3, 1e3))),
        support_friction=draw(pick(st.floats(1e-3, 10.0))), contact_friction=draw(pick(st.floats(0.0, 10.0))),
        pusher_radius=draw(pick(st.floats(0.0, 0.01))),
        contact_point=Point(x=draw(pick(st.just(-0.05))), y=draw(pick(st.floats(-0.05, 0.05)))),
        pusher_velocity=Vector3(x=draw(pick(st.floats(-10.0, 10.0))), y=draw(pick(st.floats(-10.0, 10.0)))))


@st.composite
def simulate_push(draw, valid: bool):
    from discrete_robot_interfaces.srv import SimulatePush
    from geometry_msgs.msg import Pose2D

    pick = (lambda sane: sane) if valid else mostly
    straight = st.builds(lambda y: [(-0.2, y), (0.1, y)], st.floats(-0.06, 0.06))
    path = draw(straight if valid else st.one_of(straight, st.lists(st.tuples(SMALL, SMALL), max_size=6)))
    return SimulatePush.Request(
        footprint=_points(draw(st.just(SQUARE) if valid else FOOTPRINT)), normal_force=draw(pick(st.floats(1e-3, 1e3))),
        support_friction=draw(pick(st.floats(1e-3, 10.0))), contact_friction=draw(pick(st.floats(0.0, 10.0))),
        pusher_radius=draw(pick(st.floats(0.0, 0.01))),
        object_pose=Pose2D(x=draw(pick(st.floats(-0.01, 0.01))), y=draw(pick(st.floats(-0.01, 0.01))),
                           theta=draw(pick(st.floats(-3.0, 3.0)))),
        pusher_path=_points(path), pusher_speed=draw(pick(st.floats(0.01, 0.5))),
        time_step=draw(pick(st.floats(0.02, 0.1))))


@st.composite
def plan_trajectory(draw, valid: bool):
    from discrete_robot_interfaces.srv import PlanTrajectory
    from trajectory_msgs.msg import JointTrajectoryPoint

    pick = (lambda sane: sane) if valid else mostly
    waypoint = st.lists(mostly(st.floats(-1.5, 1.5)), min_size=0, max_size=3)
    sane = st.lists(st.lists(st.floats(-1.5, 1.5), min_size=2, max_size=2), min_size=2, max_size=4)
    waypoints = draw(sane if valid else st.one_of(sane, st.lists(waypoint, max_size=5), st.just([[0.0, 0.0]] * 5000)))
    limits = st.one_of(st.just([]), st.lists(st.floats(1.0, 100.0), min_size=2, max_size=2))
    return PlanTrajectory.Request(
        joint_names=draw(st.sampled_from([ARM_JOINTS, []]) if valid else NAMES),
        waypoints=[JointTrajectoryPoint(positions=p) for p in waypoints],
        max_effort=draw(pick(limits) if valid else mostly(limits, FLOAT_ARRAY)),
        max_velocity=draw(pick(limits) if valid else mostly(limits, FLOAT_ARRAY)),
        time_step_hint=draw(pick(st.floats(0.02, 0.1))),
        method=draw(st.sampled_from(["", "min_time", "min_time"] + ([] if valid else ["min_effort", "fast"]))),
        duration=draw(pick(st.floats(0.5, 3.0))), effort_scale=draw(pick(st.sampled_from([0.0, 0.7, 1.0]))))


@st.composite
def retime_trajectory(draw, valid: bool):
    """A stack's path for retime_trajectory: 2 to 12 points of the 2-link arm about upright (its timing, if any,
    ignored), any joint order; hostile: ragged, empty or huge points, NaN scales, unknown names."""
    from discrete_robot_interfaces.srv import RetimeTrajectory
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

    pick = (lambda sane: sane) if valid else mostly
    point = st.lists(st.floats(1.2, 1.9), min_size=2, max_size=2)
    sane = st.lists(point, min_size=2, max_size=12)
    ragged = st.lists(st.lists(mostly(st.floats(-1.5, 1.5)), min_size=0, max_size=3), max_size=6)
    points = draw(sane if valid else st.one_of(sane, ragged, st.just([[1.5, 0.0]] * 3000)))
    return RetimeTrajectory.Request(
        trajectory=JointTrajectory(joint_names=draw(st.sampled_from([ARM_JOINTS, ARM_JOINTS[::-1]]) if valid
                                                    else NAMES),
                                   points=[JointTrajectoryPoint(positions=p) for p in points]),
        effort_scale=draw(pick(st.sampled_from([0.0, 0.6, 1.0]))),
        velocity_scale=draw(pick(st.sampled_from([0.0, 0.5, 1.0]))))


def _duration(seconds: float):
    from builtin_interfaces.msg import Duration

    if not math.isfinite(seconds):
        return Duration(sec=0, nanosec=0)
    sec = int(max(min(seconds, 2 ** 31 - 1), -(2 ** 31)))
    return Duration(sec=sec, nanosec=int(min(max((seconds - sec) * 1e9, 0), 999_999_999)))


@st.composite
def joint_trajectory(draw):
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

    times = draw(st.lists(mostly(st.floats(0.0, 3.0)), max_size=6))
    points = [JointTrajectoryPoint(positions=draw(st.lists(SMALL, max_size=3)), time_from_start=_duration(t))
              for t in times]
    return JointTrajectory(joint_names=draw(NAMES), points=points)


@st.composite
def effort_command(draw):
    from std_msgs.msg import Float64MultiArray

    return Float64MultiArray(data=draw(FLOAT_ARRAY))


@st.composite
def finger_position(draw):
    from geometry_msgs.msg import Point, PointStamped

    message = PointStamped(point=Point(x=draw(mostly(st.floats(-0.2, 0.2))), y=draw(SMALL)))
    message.header.frame_id = draw(st.sampled_from(["", "world", "world", "map"]))
    return message


@st.composite
def space_torques(draw):
    from std_msgs.msg import Float64MultiArray

    return Float64MultiArray(data=draw(st.one_of(st.lists(st.floats(-5.0, 5.0), min_size=12, max_size=12),
                                                 FLOAT_ARRAY)))


@st.composite
def space_wrench(draw):
    from geometry_msgs.msg import WrenchStamped

    message = WrenchStamped()
    message.header.frame_id = draw(st.sampled_from(SPACE_BODIES + ["", "moon"]))
    for vector in (message.wrench.force, message.wrench.torque):
        vector.x, vector.y, vector.z = draw(SMALL), draw(SMALL), draw(SMALL)
    return message


def _arm_trajectory(draw, valid: bool):
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

    count = draw(st.integers(1, 4))
    if valid:
        times = sorted(draw(st.lists(st.floats(0.05, 0.4), min_size=count, max_size=count, unique=True)))
        points = [JointTrajectoryPoint(positions=draw(st.lists(st.floats(-0.5, 0.5), min_size=2, max_size=2)),
                                       time_from_start=_duration(t)) for t in times]
        return JointTrajectory(joint_names=draw(st.sampled_from([ARM_JOINTS, ARM_JOINTS[::-1]])), points=points)
    times = draw(st.lists(mostly(st.floats(0.0, 0.4)), max_size=5))
    points = [JointTrajectoryPoint(positions=draw(st.lists(SMALL, max_size=3)),
                                   velocities=draw(st.one_of(st.just([]), st.lists(ANY_FLOAT, max_size=3))),
                                   time_from_start=_duration(t)) for t in times]
    return JointTrajectory(joint_names=draw(NAMES), points=points)


@st.composite
def follow_joint_trajectory(draw, valid: bool):
    """FollowJointTrajectory goals of at most 0.4 s (each case waits for its result): duplicate and unknown names in
    the tolerances, negative and non-finite tolerances, stamps in the past, empty and non-monotonic points."""
    from control_msgs.action import FollowJointTrajectory
    from control_msgs.msg import JointTolerance

    goal = FollowJointTrajectory.Goal(trajectory=_arm_trajectory(draw, valid))
    if not valid:
        tolerance = st.builds(lambda name, p, v: JointTolerance(name=name, position=p, velocity=v),
                              st.sampled_from(["joint1", "joint2", "elbow", ""]), mostly(st.floats(-1.0, 1.0)),
                              mostly(st.floats(-1.0, 1.0)))
        goal.path_tolerance = draw(st.lists(tolerance, max_size=3))
        goal.goal_tolerance = draw(st.lists(tolerance, max_size=3))
        goal.goal_time_tolerance = _duration(draw(mostly(st.floats(-1.0, 2.0))))
        goal.trajectory.header.stamp.sec = draw(st.sampled_from([0, 0, 0, 1, 2 ** 31 - 1]))
    return goal


@st.composite
def storm(draw, goals: st.SearchStrategy):
    """A burst: 1-4 clients sending 1-10 goals each at once (each a preemption of the one before, for
    FollowJointTrajectory), each accepted goal canceled with probability ``cancel`` (a cancel storm at 1), and with
    ``kill`` a client process that sends a goal and is SIGKILLed before its result."""
    return {"bursts": draw(st.lists(st.lists(goals, min_size=1, max_size=10), min_size=1, max_size=4)),
            "cancel": draw(st.sampled_from([0.0, 0.0, 0.5, 1.0])), "kill": draw(st.integers(0, 3)) == 0,
            "seed": draw(st.integers(0, 2 ** 31 - 1))}


#: a client process that sends one goal (serialized, hex, in argv) and waits for its result until it is killed
KILLED_CLIENT = """
import sys
import rclpy
from importlib import import_module
from rclpy.action import ActionClient
from rclpy.serialization import deserialize_message
module, name = sys.argv[1].split(":")
action = getattr(import_module(module), name)
rclpy.init()
node = rclpy.create_node("killed_client")
client = ActionClient(node, action, sys.argv[2])
client.wait_for_server(timeout_sec=30.0)
sent = client.send_goal_async(deserialize_message(bytes.fromhex(sys.argv[3]), action.Goal))
rclpy.spin_until_future_complete(node, sent, timeout_sec=30.0)
print("sent", flush=True)
rclpy.spin(node)
"""


STEP_COUNTS = st.one_of(st.integers(0, 200), st.sampled_from([0, 1, 99_999, 100_000, 100_001, 2 ** 32 - 1]))


@st.composite
def simulator_call(draw, namespace: str = "simulation", joints=tuple(ARM_JOINTS)):
    """(service, interface, request) of a simulator's control services, in any order and with any fields."""
    from discrete_robot_interfaces.srv import SetSimulationState, StepSimulation
    from geometry_msgs.msg import Pose, Quaternion, Twist
    from sensor_msgs.msg import JointState
    from std_srvs.srv import Trigger

    kind = draw(st.sampled_from(["pause", "resume", "reset", "step", "step", "set_state", "set_state"]))
    if kind == "step":
        return f"{namespace}/step", "discrete_robot_interfaces.srv:StepSimulation", StepSimulation.Request(
            steps=draw(STEP_COUNTS))
    if kind == "set_state":
        names = draw(mostly(st.lists(st.sampled_from(list(joints)), max_size=len(joints), unique=True),
                            st.lists(st.sampled_from([*joints, "elbow", ""]), max_size=3)))
        values = st.one_of(st.just([]), st.lists(mostly(st.floats(-3.0, 3.0)), min_size=len(names),
                                                 max_size=len(names)), FLOAT_ARRAY)
        request = SetSimulationState.Request(joint_state=JointState(name=names, position=draw(values),
                                                                    velocity=draw(values)))
        request.set_base = draw(st.booleans())
        request.base_pose = Pose(orientation=Quaternion(w=draw(mostly(st.sampled_from([1.0, 0.0]))),
                                                        x=draw(SMALL), y=draw(SMALL), z=draw(SMALL)))
        request.base_pose.position.x = draw(SMALL)
        request.base_twist = Twist()
        request.base_twist.angular.z = draw(SMALL)
        return f"{namespace}/set_state", "discrete_robot_interfaces.srv:SetSimulationState", request
    return f"{namespace}/{kind}", "std_srvs.srv:Trigger", Trigger.Request()


PARAMETER_NAMES = {
    "discrete_robot_node": ["real_time_factor", "kp", "kd", "time_step", "model_file", "controller_name"],
    "space_robot_node": ["real_time_factor", "publish_rate", "frame_prefix"],
    "push_predictor_node": ["support_friction", "contact_friction", "normal_force", "time_step", "pusher_radius",
                            "max_finger_jump", "request_timeout", "object_footprint", "grid_points"],
}


@st.composite
def parameter_call(draw, node: str):
    """(service, interface, request): set_parameters of ``node`` with any name, type (0-9, 99) and value."""
    from rcl_interfaces.msg import Parameter, ParameterValue
    from rcl_interfaces.srv import SetParameters

    def value():
        kind = draw(st.sampled_from([1, 2, 3, 3, 3, 4, 5, 6, 7, 8, 9, 0, 99]))
        field = {1: "bool_value", 2: "integer_value", 3: "double_value", 4: "string_value", 5: "byte_array_value",
                 6: "bool_array_value", 7: "integer_array_value", 8: "double_array_value",
                 9: "string_array_value"}.get(kind)
        message = ParameterValue(type=draw(st.sampled_from([kind, kind, kind, 3, 2])))
        data = {"bool_value": st.booleans(), "integer_value": st.integers(-2 ** 63, 2 ** 63 - 1),
                "double_value": st.one_of(ANY_FLOAT, st.floats(0.0, 2.0)), "string_value": st.text(max_size=20),
                "byte_array_value": st.lists(st.binary(min_size=1, max_size=1), max_size=3),
                "bool_array_value": st.lists(st.booleans(), max_size=3),
                "integer_array_value": st.lists(st.integers(-10, 10), max_size=3),
                "double_array_value": st.lists(ANY_FLOAT, max_size=8),
                "string_array_value": st.lists(st.text(max_size=5), max_size=3)}
        if field is not None:
            setattr(message, field, draw(data[field]))
        return message

    names = st.sampled_from([*PARAMETER_NAMES[node], "no_such_parameter", ""])
    parameters = [Parameter(name=draw(names), value=value()) for _ in range(draw(st.integers(1, 3)))]
    return f"{node}/set_parameters", "rcl_interfaces.srv:SetParameters", SetParameters.Request(
        parameters=parameters)


def _parameters_succeeded(answer) -> bool:
    return bool(answer.results) and all(result.successful for result in answer.results)


def _non_finite_parameter(case, answer) -> str | None:
    """The name of a NaN or ±inf double (array) parameter the node accepted, or None. Only the field of the
    value's declared type counts: a double-typed value's unused array field (or the reverse) is never read."""
    for parameter, result in zip(case[2].parameters, answer.results, strict=False):
        value = parameter.value
        values = {3: [value.double_value], 8: list(value.double_array_value)}.get(value.type, [])
        if result.successful and not all(math.isfinite(v) for v in values):
            return parameter.name
    return None


def _trajectory_succeeded(answer) -> bool:
    return answer.error_code == 0


ARM_READY = [-0.5, 1.0]     # config/table_scene_planar_2link.yaml (the manipulation node's default arm)
ARM_OBJECT_X = 1.1          # m, the same scene's object start (x, 0, 0)


def arm_ready_state():
    """The manipulation node's arm at the scene's ready pose: it plans from the arm's joint states."""
    from sensor_msgs.msg import JointState

    return JointState(name=ARM_JOINTS, position=ARM_READY)


def object_start_pose():
    """The object where the manipulation node's scene starts it, as the arm's simulator would publish it."""
    from geometry_msgs.msg import PoseStamped

    located = PoseStamped()
    located.pose.position.x, located.pose.orientation.w = ARM_OBJECT_X, 1.0
    return located


#: what the manipulation node perceives before the cases (it runs without the arm's simulator)
ARM_AND_OBJECT = (("joint_states", arm_ready_state), ("objects/object/pose", object_start_pose))
#: s a push_object goal the fuzzed node plans may take: its 3 s planning budget, then manipulation_node's
#: SERVER_WAIT_S (10 s) for the arm's action it lacks; the first also loads the planner (11-12 s a goal, the first
#: 21.5 s, on an idle machine), and a loaded machine takes longer. At 15 s, two goals of a smoke run "hung" under load
PUSH_GOAL_S = 120.0


@st.composite
def arm_joint_states(draw):
    from sensor_msgs.msg import JointState

    names = draw(NAMES)
    sane = st.lists(st.floats(-3.2, 3.2), min_size=2, max_size=2)
    return JointState(name=names, position=draw(mostly(sane, FLOAT_ARRAY)), velocity=draw(st.one_of(st.just([]),
                                                                                                     FLOAT_ARRAY)))


@st.composite
def push_at_start(draw):
    """PushObject goals answered in milliseconds, for storms: a goal at its start (succeeds at once) or off the
    table (refused)."""
    from discrete_robot_interfaces.action import PushObject
    from geometry_msgs.msg import Pose2D

    start = Pose2D(x=1.1, y=0.0, theta=0.0)
    goal = draw(st.sampled_from([start, Pose2D(x=5.0, y=0.0, theta=0.0)]))
    return PushObject.Goal(goal=goal, use_start=True, start=start, contact_friction=-1.0)


@st.composite
def push_object(draw):
    """PushObject goals. A goal on the table and in reach is planned (seconds) and then fails for want of an arm
    (the fuzzed node runs alone), so the coordinates range wide: most cases test the refusals, some the planning."""
    from discrete_robot_interfaces.action import PushObject
    from geometry_msgs.msg import Pose2D

    def pose():
        # x over the planar arm's table (config/table_scene_planar_2link.yaml) half the time: about one case in
        # fifty is a goal the node plans
        return Pose2D(x=draw(mostly(st.one_of(st.floats(0.6, 1.6), st.floats(-3.0, 3.0)))),
                      y=draw(mostly(st.floats(-3.0, 3.0))), theta=draw(mostly(st.floats(-7.0, 7.0))))

    return PushObject.Goal(goal=pose(), use_start=draw(st.booleans()), start=pose(),
                           footprint=_points(draw(st.one_of(st.just([]), FOOTPRINT))),
                           normal_force=draw(mostly(st.floats(0.0, 100.0))),
                           support_friction=draw(mostly(st.floats(0.0, 2.0))),
                           contact_friction=draw(mostly(st.floats(-1.0, 2.0))))


@dataclass(frozen=True)
class Target:
    """One service, action or topic of one node, its case strategy, and the topic that shows the node is alive."""

    name: str
    executable: str
    strategy: st.SearchStrategy
    kind: str                    # "service", "action" or "topic"
    interface: str               # "pkg.srv:Type", "pkg.action:Type" or "pkg.msg:Type"
    heartbeat: str | None = None
    heartbeat_interface: str = "sensor_msgs.msg:JointState"
    #: (topic, message factory) pairs: published once the node is up, before the cases, until the heartbeat shows
    primer: tuple | None = None
    #: s an answer may take at least (a push goal that plans takes up to the node's planning budget)
    timeout: float = 0.0
    #: node parameters
    params: dict | None = None
    #: whether an answer is a success (services and PushObject: its ``success`` field)
    succeeded: object = None
    #: (case, answer) -> the name of a non-finite value in a success, or None (default: first_non_finite)
    non_finite: object = None
    #: the most cases of this target whatever ``--cases`` says (a storm or a goal waits seconds for its results)
    max_cases: int | None = None
    #: cases of the DDS smoke run in ``make test`` (test/nodes/test_fuzz_smoke.py); 0 = only in ``make fuzz``
    smoke_cases: int = 100


TARGETS = [
    Target("predict_push", "push_predictor_node", well_formed_or_any(predict_push), "service",
           "discrete_robot_interfaces.srv:PredictPush"),
    Target("simulate_push", "push_predictor_node", well_formed_or_any(simulate_push), "service",
           "discrete_robot_interfaces.srv:SimulatePush"),
    Target("plan_trajectory", "trajectory_planner_node", well_formed_or_any(plan_trajectory), "service",
           "discrete_robot_interfaces.srv:PlanTrajectory"),
    Target("retime_trajectory", "trajectory_planner_node", well_formed_or_any(retime_trajectory), "service",
           "discrete_robot_interfaces.srv:RetimeTrajectory", smoke_cases=30),
    Target("push/finger_position", "push_predictor_node", finger_position(), "topic", "geometry_msgs.msg:PointStamped"),
    Target("joint_trajectory", "discrete_robot_node", joint_trajectory(), "topic",
           "trajectory_msgs.msg:JointTrajectory", "joint_states"),
    Target("joint_effort_commands", "discrete_robot_node", effort_command(), "topic",
           "std_msgs.msg:Float64MultiArray", "joint_states"),
    Target("space_robot/joint_torque_commands", "space_robot_node", space_torques(), "topic",
           "std_msgs.msg:Float64MultiArray", "space_robot/joint_states"),
    Target("space_robot/external_wrench", "space_robot_node", space_wrench(), "topic",
           "geometry_msgs.msg:WrenchStamped", "space_robot/joint_states"),
    Target("push_object", "manipulation_node", push_object(), "action", "discrete_robot_interfaces.action:PushObject",
           "manipulation/markers", "visualization_msgs.msg:MarkerArray", primer=ARM_AND_OBJECT,
           timeout=PUSH_GOAL_S, params={"planning_timeout": 3.0}),
    Target("joint_states", "manipulation_node", arm_joint_states(), "topic", "sensor_msgs.msg:JointState",
           "manipulation/markers", "visualization_msgs.msg:MarkerArray", primer=ARM_AND_OBJECT),
    Target("joint_trajectory_controller/follow_joint_trajectory", "discrete_robot_node",
           well_formed_or_any(follow_joint_trajectory), "action", "control_msgs.action:FollowJointTrajectory",
           "joint_states", succeeded=_trajectory_succeeded, params={"goal_time_tolerance": 0.5}, max_cases=1000,
           smoke_cases=20),
    Target("follow_joint_trajectory storm", "discrete_robot_node", storm(well_formed_or_any(follow_joint_trajectory)),
           "storm", "control_msgs.action:FollowJointTrajectory", "joint_states", succeeded=_trajectory_succeeded,
           params={"goal_time_tolerance": 0.5}, max_cases=300, smoke_cases=10),
    Target("push_object storm", "manipulation_node", storm(push_at_start()), "storm",
           "discrete_robot_interfaces.action:PushObject", "manipulation/markers", "visualization_msgs.msg:MarkerArray",
           primer=ARM_AND_OBJECT, max_cases=300, smoke_cases=10),
    Target("predict_push load", "push_predictor_node", st.just(None), "load",
           "discrete_robot_interfaces.srv:PredictPush", max_cases=1, smoke_cases=0),
    Target("simulation services", "discrete_robot_node", simulator_call(), "calls", "", "joint_states"),
    Target("space_robot/simulation services", "space_robot_node",
           simulator_call("space_robot/simulation", ("arm1_joint1", "arm2_joint1")), "calls", "",
           "space_robot/joint_states"),
    *(Target(f"{node} parameters", node, parameter_call(node), "calls", "", heartbeat,
             succeeded=_parameters_succeeded, non_finite=_non_finite_parameter)
      for node, heartbeat in (("discrete_robot_node", "joint_states"), ("space_robot_node", "space_robot/joint_states"),
                              ("push_predictor_node", None))),
]

#: the targets of the DDS smoke run in ``make test``
SMOKE_TARGETS = [target for target in TARGETS if target.smoke_cases]
#: the action name a storm target's goals go to
STORM_ACTIONS = {"follow_joint_trajectory storm": "joint_trajectory_controller/follow_joint_trajectory",
                 "push_object storm": "push_object"}


@dataclass
class Tally:
    cases: int = 0
    refusals: int = 0
    crashes: int = 0
    hangs: int = 0
    unanswered: int = 0
    goals: int = 0               # storms: goals and cancels sent (refusals and unanswered count these)
    non_finite_successes: int = 0
    latencies: list = field(default_factory=list)
    examples: list = field(default_factory=list)

    def report(self) -> dict:
        latency = np.array(self.latencies) * 1e3
        percentile = (lambda q: float(np.percentile(latency, q))) if latency.size else (lambda q: None)
        requests = self.goals or self.cases
        return {"cases": self.cases, **({"goals_and_cancels": self.goals} if self.goals else {}),
                "refusals": self.refusals,
                "answered": requests - self.refusals - self.hangs if self.latencies else None,
                "crashes": self.crashes, "hangs": self.hangs, "unanswered": self.unanswered,
                "non_finite_successes": self.non_finite_successes, "p50_ms": percentile(50),
                "p99_ms": percentile(99), "examples": self.examples[:5]}


def _interface(path: str):
    import importlib

    module, name = path.split(":")
    return getattr(importlib.import_module(module), name)


def fuzz_target(session, workdir: Path, target: Target, cases: int, timeout: float) -> dict:
    """Send ``cases`` generated cases to ``target``'s live node; the tally as a dict."""
    from discrete_robot.nodes.common import first_non_finite
    from discrete_robot.ros.processes import NodeProcess
    from discrete_robot.ros.session import RosTimeoutError

    interface = _interface(target.interface) if target.interface else None
    tally = Tally()
    node = [NodeProcess(target.executable, workdir / target.name.replace("/", "_"), params=target.params)]

    heartbeat = None if target.heartbeat is None else _interface(target.heartbeat_interface)
    timeout = max(timeout, target.timeout)

    def ready():
        if target.kind == "service":
            session.wait_for_service(interface, target.name, timeout=START_S)
        if target.primer is not None:
            # sent until the node shows it arrived: a restarted node may not be matched yet when it is first sent
            deadline = time.monotonic() + START_S
            while True:
                for topic, message in target.primer:
                    session.publish(topic, message(), wait_for_subscriber=START_S)
                try:
                    session.wait_for_message(target.heartbeat, heartbeat, timeout=1.0)
                    break
                except RosTimeoutError:
                    if time.monotonic() > deadline:
                        raise
        elif heartbeat is not None:
            session.wait_for_message(target.heartbeat, heartbeat, timeout=START_S)
        elif target.kind == "topic":
            session.spin_until(lambda: False, 2.0)

    def ask(case):
        """The answer to a service request or an action goal (a rejected goal: None)."""
        if target.kind == "service":
            return session.call(interface, target.name, case, timeout=timeout)
        if target.kind == "calls":
            name, path, request = case
            return session.call(_interface(path), name, request, timeout=timeout)
        handle = session.send_goal(interface, target.name, case, timeout=timeout)
        return session.goal_result(handle, timeout=timeout).result if handle.accepted else None

    def restart(reason: str):
        tally.crashes += 1
        tally.examples.append(reason)
        node[0].stop()
        node[0] = NodeProcess(target.executable, workdir / f"{target.name.replace('/', '_')}_{tally.crashes}",
                              params=target.params)
        ready()

    succeeded = target.succeeded or (lambda answer: answer.success)
    non_finite = target.non_finite or (lambda case, answer: first_non_finite(answer))
    if target.max_cases is not None:
        cases = min(cases, target.max_cases)

    @settings(max_examples=cases, deadline=None, database=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(case=target.strategy)
    def send(case):
        tally.cases += 1
        if target.kind == "load":
            rng = np.random.default_rng(tally.cases)
            load = run_load(session, interface, "predict_push", lambda: _load_request(rng))
            tally.goals, tally.unanswered, tally.hangs = load["sent"], load["unanswered"], load["unanswered"]
            tally.examples.append(load)
        elif target.kind == "storm":
            start = time.monotonic()
            goals, refused, unanswered = run_storm(session, target, case, timeout)
            tally.latencies.append(time.monotonic() - start)
            tally.goals += goals
            tally.refusals += refused
            tally.unanswered += unanswered
            tally.hangs += unanswered
            if unanswered:
                tally.examples.append(f"{unanswered} of {goals} goals, cancels or results unanswered")
        elif target.kind in ("service", "action", "calls"):
            start = time.monotonic()
            try:
                answer = ask(case)
            except RosTimeoutError as error:
                tally.hangs += 1
                tally.examples.append(str(error))
                if not node[0].alive():
                    restart("died without answering")
                return
            tally.latencies.append(time.monotonic() - start)
            if answer is None or not succeeded(answer):
                tally.refusals += 1
            elif non_finite(case, answer) is not None:
                tally.non_finite_successes += 1
                tally.examples.append(f"success with non-finite {non_finite(case, answer)}")
            if target.kind == "calls" and tally.cases % 50 == 0 and heartbeat is not None:
                try:
                    session.wait_for_message(target.heartbeat, heartbeat, timeout=5.0)
                except RosTimeoutError:
                    tally.hangs += 1
                    tally.examples.append(f"{target.heartbeat} silent after {case[0]}")
        else:
            session.publish(target.name, case, wait_for_subscriber=5.0)
            session.spin_until(lambda: False, 0.002)
            if tally.cases % 50 == 0 and heartbeat is not None:
                try:
                    session.wait_for_message(target.heartbeat, heartbeat, timeout=5.0)
                except RosTimeoutError:
                    tally.hangs += 1
        if not node[0].alive():
            restart(f"node exited with status {node[0].process.returncode}")

    try:
        ready()
        send()
        if not node[0].alive():
            restart("node dead at the end")
    finally:
        node[0].stop()
    return tally.report()


def run_storm(session, target: Target, plan: dict, timeout: float) -> tuple[int, int, int]:
    """One storm ``plan`` against ``target``'s action: (goals sent, refused or failed, unanswered). Unanswered
    counts goal responses, cancel responses and results that did not come within ``timeout`` (after the burst,
    each goal's own length is at most a second)."""
    import random
    import signal
    import subprocess

    from rclpy.action import ActionClient
    from rclpy.serialization import serialize_message

    from discrete_robot.nodes.common import ACTION_QOS

    rng = random.Random(plan["seed"])
    action, name = _interface(target.interface), STORM_ACTIONS[target.name]
    # the session's own clients of this action, kept across cases (a client per case would leave discovery behind)
    clients = vars(session).setdefault("storm_clients", {}).setdefault(target.name, [])
    while len(clients) < len(plan["bursts"]):
        clients.append(ActionClient(session.node, action, name, **ACTION_QOS))
    for client in clients:
        if not client.server_is_ready() and not client.wait_for_server(timeout_sec=timeout):
            return 0, 0, 1
    killed = None
    if plan["kill"]:
        goal = plan["bursts"][0][0]
        killed = subprocess.Popen([sys.executable, "-c", KILLED_CLIENT, target.interface, name,
                                   serialize_message(goal).hex()], stdout=subprocess.PIPE, text=True,
                                  stderr=subprocess.DEVNULL)
    sent = [client.send_goal_async(goal) for client, goals in zip(clients, plan["bursts"], strict=False)
            for goal in goals]
    if killed is not None:
        reader = threading.Thread(target=killed.stdout.readline, daemon=True)
        reader.start()
        session.spin_until(lambda: not reader.is_alive(), 30.0)
        killed.send_signal(signal.SIGKILL)
        killed.wait()
    session.spin_until(lambda: all(f.done() for f in sent), timeout)
    unanswered = sum(not f.done() for f in sent)
    handles = [f.result() for f in sent if f.done()]
    accepted = [h for h in handles if h.accepted]
    refused = len(handles) - len(accepted)
    cancels = [h.cancel_goal_async() for h in accepted if rng.random() < plan["cancel"]]
    results = [h.get_result_async() for h in accepted]
    session.spin_until(lambda: all(f.done() for f in (*results, *cancels)), timeout)
    unanswered += sum(not f.done() for f in (*results, *cancels))
    succeeded = target.succeeded or (lambda answer: answer.success)
    refused += sum(f.done() and not succeeded(f.result().result) for f in results)
    if killed is not None:   # the server still answers after a client died with goals in flight
        probe = clients[0].send_goal_async(plan["bursts"][0][0])
        session.spin_until(probe.done, timeout)
        if not probe.done():
            unanswered += 1
        elif probe.result().accepted:
            result = probe.result().get_result_async()
            session.spin_until(result.done, timeout)
            unanswered += not result.done()
    return len(sent) + len(cancels), refused, unanswered


@functools.cache
def _soak_module():
    """scripts/soak.py, whose valid requests the load sends."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("soak", Path(__file__).with_name("soak.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _load_request(rng: np.random.Generator):
    """A valid PredictPush request, as the soak sends them (scripts/soak.py's predict_push_request)."""
    return _soak_module().predict_push_request(rng)


def run_load(session, interface, name: str, request, clients: int = 16, seconds: float = 30.0,
             keep_all: bool = True, grace: float = 30.0) -> dict:
    """``clients`` clients of service ``name`` (one node, as a multi-client process has them), each with one request
    outstanding at a time, its next sent as soon as its answer comes, for ``seconds``; then ``grace`` s for the
    last answers. ``keep_all``: the clients' QoS keeps every response (KEEP_ALL), else rclpy's default (KEEP_LAST
    10). Returns sent, answered, unanswered and the clients left waiting (stalled)."""
    from rclpy.qos import qos_profile_services_default

    from discrete_robot.nodes.common import SERVICE_QOS

    qos = SERVICE_QOS if keep_all else qos_profile_services_default
    pool = [session.node.create_client(interface, name, qos_profile=qos) for _ in range(clients)]
    for client in pool:
        client.wait_for_service(timeout_sec=30.0)
    session.spin_until(lambda: False, 1.0)
    sent, answered = [0] * clients, [0] * clients
    outstanding: list = [None] * clients
    end = time.monotonic() + seconds

    def pump() -> bool:
        for index, client in enumerate(pool):
            future = outstanding[index]
            if future is not None and future.done():
                answered[index] += 1
                outstanding[index] = future = None
            if future is None and time.monotonic() < end:
                outstanding[index] = client.call_async(request())
                sent[index] += 1
        return time.monotonic() >= end and all(f is None for f in outstanding)

    session.spin_until(pump, seconds + grace, step=0.001)
    for client in pool:
        session.node.destroy_client(client)
    stalled = sum(f is not None and not f.done() for f in outstanding)
    return {"clients": clients, "seconds": seconds, "client_qos": "KEEP_ALL" if keep_all else "KEEP_LAST 10",
            "sent": sum(sent), "answered": sum(answered), "unanswered": sum(sent) - sum(answered),
            "stalled_clients": stalled}


def run(cases: int, only=(), timeout: float = 15.0) -> dict:
    """Fuzz every target (or those named in ``only``); the report."""
    from discrete_robot.ros.processes import ament_environment
    from discrete_robot.ros.session import RosSession

    ament_environment()
    report = {"cases_per_target": cases, "targets": {}}
    with tempfile.TemporaryDirectory(prefix="discrete_robot_fuzz_") as workdir, RosSession("fuzz_client") as session:
        for target in TARGETS:
            if only and target.name not in only:
                continue
            start = time.monotonic()
            report["targets"][target.name] = fuzz_target(session, Path(workdir), target, cases, timeout)
            report["targets"][target.name]["seconds"] = time.monotonic() - start
            print(f"fuzz: {target.name}: {json.dumps(report['targets'][target.name])}", file=sys.stderr, flush=True)
    return report


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=5000, help="generated cases per service, action and topic")
    parser.add_argument("--output", type=Path, default=Path("results/fuzz.json"))
    parser.add_argument("--only", nargs="*", default=(), help="service, action or topic names")
    parser.add_argument("--timeout", type=float, default=15.0, help="s a service may take to answer")
    args = parser.parse_args()
    os.environ.setdefault("ROS_DOMAIN_ID", str(1 + os.getpid() % 101))
    report = run(args.cases, args.only, args.timeout)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(report, indent=2))
    bad = sum(t["crashes"] + t["hangs"] + t["non_finite_successes"] for t in report["targets"].values())
    print(f"wrote {args.output}: {bad} crashes, hangs or non-finite successes")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
