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
- ``non_finite_successes``: a success response holding NaN or ±inf;
- ``p50_ms`` / ``p99_ms``: service latency (actions: goal to result).

Cases come from hypothesis strategies driven by ``@given`` (no shrinking: a fuzz run reports, it does not
stop), so the same module serves the in-test DDS smoke run (``test/nodes/test_fuzz_smoke.py``, a hundred
cases per target).
"""

import argparse
import json
import math
import os
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

NASTY = st.sampled_from([0.0, -0.0, 5e-324, -5e-324, 1e-300, 1e300, -1e300, 1e308, -1e308, math.nan, math.inf,
                         -math.inf])
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
        duration=draw(pick(st.floats(0.5, 3.0))))


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


ARM_READY = [-0.5, 1.0]     # config/table_scene_planar_2link.yaml (the manipulation node's default arm)


def arm_ready_state():
    """The manipulation node's arm at the scene's ready pose: it plans from the arm's joint states."""
    from sensor_msgs.msg import JointState

    return JointState(name=ARM_JOINTS, position=ARM_READY)


@st.composite
def arm_joint_states(draw):
    from sensor_msgs.msg import JointState

    names = draw(NAMES)
    sane = st.lists(st.floats(-3.2, 3.2), min_size=2, max_size=2)
    return JointState(name=names, position=draw(mostly(sane, FLOAT_ARRAY)), velocity=draw(st.one_of(st.just([]),
                                                                                                     FLOAT_ARRAY)))


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
    #: (topic, message factory): published once the node is up, before the cases, until the heartbeat shows
    primer: tuple | None = None
    #: s an answer may take at least (a push goal that plans takes up to the node's planning budget)
    timeout: float = 0.0
    #: node parameters
    params: dict | None = None


TARGETS = [
    Target("predict_push", "push_predictor_node", well_formed_or_any(predict_push), "service",
           "discrete_robot_interfaces.srv:PredictPush"),
    Target("simulate_push", "push_predictor_node", well_formed_or_any(simulate_push), "service",
           "discrete_robot_interfaces.srv:SimulatePush"),
    Target("plan_trajectory", "trajectory_planner_node", well_formed_or_any(plan_trajectory), "service",
           "discrete_robot_interfaces.srv:PlanTrajectory"),
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
           "manipulation/object_pose", "geometry_msgs.msg:PoseStamped", primer=("joint_states", arm_ready_state),
           timeout=15.0, params={"planning_timeout": 3.0}),
    Target("joint_states", "manipulation_node", arm_joint_states(), "topic", "sensor_msgs.msg:JointState",
           "manipulation/object_pose", "geometry_msgs.msg:PoseStamped", primer=("joint_states", arm_ready_state)),
]


@dataclass
class Tally:
    cases: int = 0
    refusals: int = 0
    crashes: int = 0
    hangs: int = 0
    non_finite_successes: int = 0
    latencies: list = field(default_factory=list)
    examples: list = field(default_factory=list)

    def report(self) -> dict:
        latency = np.array(self.latencies) * 1e3
        percentile = (lambda q: float(np.percentile(latency, q))) if latency.size else (lambda q: None)
        return {"cases": self.cases, "refusals": self.refusals,
                "answered": self.cases - self.refusals - self.hangs if self.latencies else None,
                "crashes": self.crashes, "hangs": self.hangs,
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

    interface = _interface(target.interface)
    tally = Tally()
    node = [NodeProcess(target.executable, workdir / target.name.replace("/", "_"), params=target.params)]

    heartbeat = None if target.heartbeat is None else _interface(target.heartbeat_interface)
    timeout = max(timeout, target.timeout)

    def ready():
        if target.kind == "service":
            session.wait_for_service(interface, target.name, timeout=30.0)
        if target.primer is not None:
            # sent until the node shows it arrived: a restarted node may not be matched yet when it is first sent
            topic, message = target.primer
            deadline = time.monotonic() + 30.0
            while True:
                session.publish(topic, message(), wait_for_subscriber=30.0)
                try:
                    session.wait_for_message(target.heartbeat, heartbeat, timeout=1.0)
                    break
                except RosTimeoutError:
                    if time.monotonic() > deadline:
                        raise
        elif heartbeat is not None:
            session.wait_for_message(target.heartbeat, heartbeat, timeout=30.0)
        elif target.kind == "topic":
            session.spin_until(lambda: False, 2.0)

    def ask(case):
        """The answer to a service request or an action goal (a rejected goal: None)."""
        if target.kind == "service":
            return session.call(interface, target.name, case, timeout=timeout)
        handle = session.send_goal(interface, target.name, case, timeout=timeout)
        return session.goal_result(handle, timeout=timeout).result if handle.accepted else None

    def restart(reason: str):
        tally.crashes += 1
        tally.examples.append(reason)
        node[0].stop()
        node[0] = NodeProcess(target.executable, workdir / f"{target.name.replace('/', '_')}_{tally.crashes}",
                              params=target.params)
        ready()

    ready()

    @settings(max_examples=cases, deadline=None, database=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(case=target.strategy)
    def send(case):
        tally.cases += 1
        if target.kind in ("service", "action"):
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
            if answer is None or not answer.success:
                tally.refusals += 1
            elif first_non_finite(answer) is not None:
                tally.non_finite_successes += 1
                tally.examples.append(f"success with non-finite {first_non_finite(answer)}")
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

    send()
    if not node[0].alive():
        restart("node dead at the end")
    node[0].stop()
    return tally.report()


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
