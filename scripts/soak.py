"""Soak the simulators and the live services: drift, NaNs and resident-memory growth over long runs; JSON report.

    .venv/bin/python scripts/soak.py [--space-steps 1000000] [--arm-steps 1000000] [--requests 10000]
                                     [--plan-requests N] [--output results/soak.json] [--only space_robot ...]

``make soak`` runs every target at its default size. Targets:

- ``space_robot``: the space robot node's simulator (discrete_robot.space.simulation.Simulator on the shipped
  dual-arm model), in process, ``--space-steps`` steps of 1 ms with zero joint torques and no loads, from the
  node's rest configuration given random velocities (at rest nothing would move and nothing could drift).
  Kinetic energy, linear and angular momentum are invariants: their relative drifts are reported.
- ``arm``: the arm node's simulator (discrete_robot.discrete.simulation.FixedStepSimulation, discrete
  integrator, planar_2link, h = 0.02 s as the node), in process, ``--arm-steps`` steps with zero torque from the
  model's initial positions and ``--arm-velocities``; total energy T + V is the invariant.
- ``predict_push`` / ``plan_trajectory``: the live ``push_predictor_node`` / ``trajectory_planner_node``
  started as child processes (as scripts/fuzz.py does), sent ``--requests`` / ``--plan-requests`` small valid
  requests (seeded, varied); failures, hangs, crashes and non-finite answers are counted.
- ``bringup``: the whole system (``bringup``: every node, one process each) under ``--bringup-seconds`` (600) of
  mixed load, round after round, each round's requests outstanding together: predict_push x 4, a plan
  (execute false), a short FollowJointTrajectory goal (every other one canceled), a push_object goal at its
  start, the space robot paused, stepped 100 steps and resumed, and real_time_factor set on both simulators.
  Reported: requests sent, answered and unanswered (no answer within ``--timeout``), per kind, and every
  node's RSS growth after the warm-up (``--bringup-warm-up``, the first minute: JIT, DDS discovery and the
  action servers' kept results, 30 s of them, settle there), read at its end and every twentieth of the rest;
  each node's growth must stay below ``--bringup-rss-limit`` (1 MB).

Memory: resident set size (VmRSS from /proc/<pid>/status; of this process for the simulators, of the node
process for the services), read after a warm-up (the first 1 % of steps or requests: caches, JIT and DDS
discovery settle there), then every 1 % and at the end. ``growth_mb`` = the largest reading after warm-up minus
the warm-up reading (MB = 2^20 bytes); a target passes when it is below ``--rss-limit`` (5 MB), no NaN or ±inf
was seen, every step or request went through, and the node stayed alive. Exit status 1 when any target fails.
"""

import argparse
import contextlib
import gc
import json
import math
import os
import sys
import tempfile
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

ARM_MODEL = "planar_2link.yaml"
ARM_TIME_STEP = 0.001         # s, discrete_robot_node's default time_step
SPACE_MODEL = "space_robot_dual_arm.yaml"
SPACE_TIME_STEP = 0.001       # s, space_robot_node's default time_step
SQUARE = [(-0.05, -0.05), (0.05, -0.05), (0.05, 0.05), (-0.05, 0.05)]
ARM_JOINTS = ["joint1", "joint2"]
TARGET_NAMES = ("space_robot", "arm", "predict_push", "plan_trajectory", "bringup")
TWENTIETHS = 20               # bringup: RSS read at the warm-up's end, then every 5 % of the rest


# ------------------------------------------------------------------------------------------------ memory

def rss_mb(pid: int | str = "self") -> float:
    """Resident set size of process ``pid`` (default this one), MB (2^20 bytes), from /proc/<pid>/status."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024.0
    raise RuntimeError(f"no VmRSS in /proc/{pid}/status")


@dataclass
class MemoryTrack:
    """RSS readings of one process: the one after warm-up, the largest after it, and the last."""

    pid: int | str = "self"
    start: float | None = None
    peak: float = -math.inf
    end: float | None = None
    next_due: int | None = None

    def update(self, done: int, total: int) -> None:
        """Read after ``done`` of ``total`` steps or requests if due: at the end of the warm-up, then once per
        further 1 %, and at the end (a reading here collects garbage, ~10 ms: not at every checkpoint)."""
        every = warm_up_count(total)
        if done >= (self.next_due or every) or done == total:
            self.read()
            self.next_due = done + every

    def read(self) -> float:
        # In this process, collect cyclic garbage first: a reading should see what is kept, not what is pending.
        if self.pid == "self":
            gc.collect()
        value = rss_mb(self.pid)
        if self.start is None:
            self.start = value
        self.peak = max(self.peak, value)
        self.end = value
        return value

    def report(self, limit_mb: float) -> dict:
        growth = None if self.start is None else self.peak - self.start
        return {"rss_start_mb": self.start, "rss_end_mb": self.end,
                "rss_peak_mb": None if self.start is None else self.peak, "growth_mb": growth,
                "rss_passed": growth is not None and growth < limit_mb}


# ------------------------------------------------------------------------------------------------ schedule

def warm_up_count(total: int) -> int:
    """Steps or requests before the reference RSS reading: the first 1 % (at least one)."""
    return max(1, total // 100)


def checkpoints(total: int, every: int):
    """The step counts at which a long run pauses to check: every ``every`` steps, the warm-up's end, the last."""
    marks = set(range(every, total + 1, every)) | {total, warm_up_count(total)}
    return sorted(m for m in marks if 0 < m <= total)


class Progress:
    """Prints ``name: done/total`` with rate and ETA to stderr at most every ``period`` s."""

    def __init__(self, name: str, total: int, unit: str, period: float = 10.0):
        self.name, self.total, self.unit, self.period = name, total, unit, period
        self.start = self.last = time.monotonic()

    def update(self, done: int) -> None:
        now = time.monotonic()
        if now - self.last < self.period and done < self.total:
            return
        self.last = now
        rate = done / max(now - self.start, 1e-9)
        eta = (self.total - done) / rate if rate > 0 else math.inf
        print(f"soak: {self.name}: {done}/{self.total} {self.unit} ({100.0 * done / self.total:.0f} %, "
              f"{rate:.0f}/s, ETA {eta:.0f} s)", file=sys.stderr, flush=True)


def relative(change: float, reference: float) -> float:
    """|change| / |reference|; inf when the reference is zero but the change is not (no scale to judge by)."""
    if reference == 0.0:
        return 0.0 if change == 0.0 else math.inf
    return abs(change) / abs(reference)


# ------------------------------------------------------------------------------------------------ simulators

def soak_space_robot(steps: int, speed: float, seed: int, rss_limit: float) -> dict:
    """Step the space robot's simulator ``steps`` times by 1 ms with zero torques; drifts, NaNs and RSS."""
    from discrete_robot.errors import ConvergenceError
    from discrete_robot.model.description import load_model, package_config_path
    from discrete_robot.space.robot import SpaceRobot
    from discrete_robot.space.simulation import Simulator
    from discrete_robot.space.state import rest_state

    robot = SpaceRobot.from_model(load_model(package_config_path(SPACE_MODEL)))
    rng = np.random.default_rng(seed)
    # The node starts at rest; give it random velocities so energy and momenta are not all zero.
    state = replace(rest_state(robot), base_velocity=speed * rng.normal(size=3),
                    base_angular_velocity=speed * rng.normal(size=3), joint_rates=speed * rng.normal(size=robot.dof))
    simulator = Simulator(robot, state)
    start = simulator.sample().momentum
    memory, progress = MemoryTrack(), Progress("space_robot", steps, "steps")
    worst = {"energy": 0.0, "linear_momentum": 0.0, "angular_momentum": 0.0}
    nans, done, error, drift = 0, 0, None, dict(worst)
    began = time.monotonic()
    # A sample costs ~4 steps; a thousand checkpoints keep drift and NaN checks well under 1 % of the run.
    for mark in checkpoints(steps, max(1, steps // 1000)):
        try:
            while done < mark:
                simulator.step(SPACE_TIME_STEP)
                done += 1
        except ConvergenceError as failure:
            error = str(failure)
            if "non-finite" in error:   # the step refuses a state that turns NaN: that is a NaN seen
                nans += 1
            break
        sample = simulator.sample()
        now = sample.momentum
        values = np.concatenate([now.linear, now.angular, [now.kinetic_energy], sample.body_positions.ravel(),
                                 sample.joint_positions])
        if not np.all(np.isfinite(values)):
            nans += 1
        drift = {"energy": relative(now.kinetic_energy - start.kinetic_energy, start.kinetic_energy),
                 "linear_momentum": relative(np.linalg.norm(now.linear - start.linear), np.linalg.norm(start.linear)),
                 "angular_momentum": relative(np.linalg.norm(now.angular - start.angular),
                                              np.linalg.norm(start.angular))}
        worst = {key: max(worst[key], value) for key, value in drift.items()}
        memory.update(mark, steps)
        progress.update(done)
    report = {"steps": done, "steps_requested": steps, "time_step_s": SPACE_TIME_STEP,
              "simulated_s": simulator.time, "kinetic_energy_start_J": start.kinetic_energy,
              "energy_drift": drift["energy"], "energy_drift_max": worst["energy"],
              "linear_momentum_drift": drift["linear_momentum"],
              "linear_momentum_drift_max": worst["linear_momentum"],
              "angular_momentum_drift": drift["angular_momentum"],
              "angular_momentum_drift_max": worst["angular_momentum"],
              "nans": nans, "error": error, "seconds": time.monotonic() - began, **memory.report(rss_limit)}
    report["passed"] = bool(report.pop("rss_passed") and nans == 0 and error is None and done == steps)
    return report


def soak_arm(steps: int, velocities, rss_limit: float) -> dict:
    """Step the arm's discrete-model simulator ``steps`` times with zero torque; energy drift, NaNs and RSS."""
    from discrete_robot.discrete.integrators import IntegratorKind
    from discrete_robot.discrete.simulation import FixedStepSimulation
    from discrete_robot.errors import ConvergenceError
    from discrete_robot.model.description import load_model, package_config_path
    from discrete_robot.model.dynamics import RigidBodySystem

    model = load_model(package_config_path(ARM_MODEL))
    # As discrete_robot_node builds it; the velocities make E0 = T0 nonzero (V = 0 at the initial positions).
    simulation = FixedStepSimulation(RigidBodySystem(model), IntegratorKind.DISCRETE, ARM_TIME_STEP,
                                     model.initial_positions, np.asarray(velocities, dtype=float))
    zero = np.zeros(model.dof)
    energy0 = simulation.energy()
    memory, progress = MemoryTrack(), Progress("arm", steps, "steps")
    nans, done, error, drift, worst = 0, 0, None, 0.0, 0.0
    began = time.monotonic()
    # A step costs ~1-3 ms, so checking the state and energy every 100 steps costs nothing that shows.
    for mark in checkpoints(steps, max(1, min(100, steps // 100))):
        try:
            simulation.step(mark - done, lambda t, q, qd: zero)
        except ConvergenceError as failure:
            error = str(failure)
            break
        done = mark
        energy = simulation.energy()
        if not (np.all(np.isfinite(simulation.q)) and np.all(np.isfinite(simulation.qd)) and math.isfinite(energy)):
            nans += 1
        drift = relative(energy - energy0, energy0)
        worst = max(worst, drift)
        memory.update(mark, steps)
        progress.update(done)
    report = {"steps": done, "steps_requested": steps, "time_step_s": ARM_TIME_STEP,
              "simulated_s": simulation.time, "energy_start_J": energy0, "energy_drift": drift,
              "energy_drift_max": worst, "nans": nans, "error": error, "seconds": time.monotonic() - began,
              **memory.report(rss_limit)}
    report["passed"] = bool(report.pop("rss_passed") and nans == 0 and error is None and done == steps)
    return report


# ------------------------------------------------------------------------------------------------ services

def predict_push_request(rng: np.random.Generator):
    """A valid PredictPush request: the 10 cm square pushed on its left side, contact and velocity varied."""
    from discrete_robot_interfaces.srv import PredictPush
    from geometry_msgs.msg import Point, Vector3

    return PredictPush.Request(
        footprint=[Point(x=x, y=y) for x, y in SQUARE], normal_force=10.0, support_friction=0.5,
        contact_friction=0.3, pusher_radius=0.005, contact_point=Point(x=-0.05, y=float(rng.uniform(-0.04, 0.04))),
        pusher_velocity=Vector3(x=0.1, y=float(rng.uniform(-0.05, 0.05))))


def plan_trajectory_request(rng: np.random.Generator):
    """A valid, small PlanTrajectory request: min_time between two random planar_2link configurations."""
    from discrete_robot_interfaces.srv import PlanTrajectory
    from trajectory_msgs.msg import JointTrajectoryPoint

    waypoints = rng.uniform(-1.2, 1.2, size=(2, 2))
    return PlanTrajectory.Request(joint_names=ARM_JOINTS,
                                  waypoints=[JointTrajectoryPoint(positions=p.tolist()) for p in waypoints],
                                  method="min_time")


@dataclass(frozen=True)
class Service:
    """A node's service, the executable serving it, and a builder of valid requests."""

    name: str
    executable: str
    interface: object            # () -> the service type (imported late: the simulators need no ROS)
    request: object              # rng -> request


def _service_type(name: str):
    """``discrete_robot_interfaces.srv.<name>``, imported when first needed."""
    import discrete_robot_interfaces.srv

    return getattr(discrete_robot_interfaces.srv, name)


SERVICES = {
    "predict_push": Service("predict_push", "push_predictor_node", lambda: _service_type("PredictPush"),
                            predict_push_request),
    "plan_trajectory": Service("plan_trajectory", "trajectory_planner_node",
                               lambda: _service_type("PlanTrajectory"), plan_trajectory_request),
}


@dataclass
class ServiceTally:
    requests: int = 0
    failures: int = 0            # success = false to a valid request
    hangs: int = 0
    non_finite: int = 0
    crashed: bool = False
    latencies: list = field(default_factory=list)
    examples: list = field(default_factory=list)


def soak_service(session, workdir: Path, service: Service, requests: int, timeout: float, seed: int,
                 rss_limit: float, params: dict) -> dict:
    """Send ``requests`` valid requests to ``service``'s live node; counts, latency and the node's RSS."""
    from discrete_robot.nodes.common import first_non_finite
    from discrete_robot.ros.processes import NodeProcess
    from discrete_robot.ros.session import RosTimeoutError

    interface = service.interface()
    rng = np.random.default_rng(seed)
    node = NodeProcess(service.executable, workdir / service.name, params=params or None)
    tally, memory = ServiceTally(), MemoryTrack(pid=node.process.pid)
    progress = Progress(service.name, requests, "requests")
    began = time.monotonic()
    try:
        session.wait_for_service(interface, service.name, timeout=30.0)
        for index in range(1, requests + 1):
            tally.requests = index
            start = time.monotonic()
            try:
                answer = session.call(interface, service.name, service.request(rng), timeout=timeout)
            except RosTimeoutError:
                tally.hangs += 1
                tally.examples.append(f"request {index}: no answer within {timeout} s")
                answer = None
            if not node.alive():
                # A restarted node's RSS would say nothing about this one's growth: the target ends here.
                tally.crashed = True
                tally.examples.append(f"request {index}: node exited with status {node.process.returncode}")
                break
            if answer is not None:
                tally.latencies.append(time.monotonic() - start)
                if not answer.success:
                    tally.failures += 1
                    tally.examples.append(f"request {index}: {answer.message}")
                elif first_non_finite(answer) is not None:
                    tally.non_finite += 1
                    tally.examples.append(f"request {index}: non-finite {first_non_finite(answer)}")
            memory.update(index, requests)
            progress.update(index)
    finally:
        node.stop()
    latency = np.array(tally.latencies) * 1e3
    report = {"requests": tally.requests, "requests_requested": requests, "failures": tally.failures,
              "hangs": tally.hangs, "crashed": tally.crashed, "nans": tally.non_finite,
              "p50_ms": float(np.percentile(latency, 50)) if latency.size else None,
              "p99_ms": float(np.percentile(latency, 99)) if latency.size else None,
              "examples": tally.examples[:5], "seconds": time.monotonic() - began, **memory.report(rss_limit)}
    report["passed"] = bool(report.pop("rss_passed") and not (tally.failures or tally.hangs or tally.non_finite
                                                              or tally.crashed) and tally.requests == requests)
    return report


# ------------------------------------------------------------------------------------------------ bringup

def _node_pids(pid: int) -> dict[str, int]:
    """The node processes bringup ``pid`` started, by executable name (/proc/<pid>/task/<pid>/children)."""
    pids = {}
    for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split():
        with_args = Path(f"/proc/{child}/cmdline").read_bytes().split(b"\0")
        names = [Path(arg.decode()).name for arg in with_args[:2] if arg]
        node = next((name for name in names if name.endswith("_node")), None)
        if node is not None:
            pids[node] = int(child)
    return pids


def _round_requests(rng: np.random.Generator) -> list[list[tuple[str, str, object, str]]]:
    """One round of the mixed load, in phases sent one after the other (the space robot is paused before it is
    stepped, and stepped before it resumes): (kind, interface path, request or goal, name) each."""
    from builtin_interfaces.msg import Duration
    from control_msgs.action import FollowJointTrajectory
    from discrete_robot_interfaces.action import PushObject
    from discrete_robot_interfaces.srv import StepSimulation
    from geometry_msgs.msg import Pose2D
    from rcl_interfaces.srv import SetParameters
    from rclpy.parameter import Parameter
    from std_srvs.srv import Trigger
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

    target = rng.uniform(-0.5, 0.5, size=2)
    arm = FollowJointTrajectory.Goal(trajectory=JointTrajectory(joint_names=ARM_JOINTS, points=[
        JointTrajectoryPoint(positions=target.tolist(), time_from_start=Duration(nanosec=300_000_000))]))
    start = Pose2D(x=1.1, y=0.0, theta=0.0)
    factor = float(rng.choice([0.5, 1.0, 2.0]))

    def rtf():
        return SetParameters.Request(parameters=[Parameter("real_time_factor", value=factor).to_parameter_msg()])

    requests = [("service", "discrete_robot_interfaces.srv:PredictPush", predict_push_request(rng), "predict_push")
                for _ in range(4)]
    plan = plan_trajectory_request(rng)
    plan.waypoints = plan.waypoints[1:]   # one waypoint: planned from the arm's measured state
    plan.execute = False
    requests += [
        ("service", "discrete_robot_interfaces.srv:PlanTrajectory", plan, "plan_trajectory"),
        ("action", "control_msgs.action:FollowJointTrajectory", arm,
         "joint_trajectory_controller/follow_joint_trajectory"),
        ("action", "discrete_robot_interfaces.action:PushObject",
         PushObject.Goal(goal=start, use_start=True, start=start, contact_friction=-1.0), "push_object"),
        ("service", "std_srvs.srv:Trigger", Trigger.Request(), "space_robot/simulation/pause"),
        ("service", "rcl_interfaces.srv:SetParameters", rtf(),
         "discrete_robot_node/set_parameters"),
        ("service", "rcl_interfaces.srv:SetParameters", rtf(), "space_robot_node/set_parameters"),
    ]
    return [requests, [("service", "discrete_robot_interfaces.srv:StepSimulation", StepSimulation.Request(steps=100),
                        "space_robot/simulation/step")],
            [("service", "std_srvs.srv:Trigger", Trigger.Request(), "space_robot/simulation/resume")]]


def _send_phase(session, phase, clients: dict, counts: dict, interface, timeout: float, cancel: bool) -> list:
    """Send one phase's requests and goals together and wait for their answers (up to ``timeout``); counts them
    in ``counts`` (clients made on first use, keep-all). Returns the accepted goals' (name, result future),
    a FollowJointTrajectory goal canceled first when ``cancel``."""
    from rclpy.action import ActionClient

    from discrete_robot.nodes.common import ACTION_QOS, SERVICE_QOS

    pending = []
    for kind, path, request, name in phase:
        counts.setdefault(name, {"sent": 0, "answered": 0, "unanswered": 0, "refused": 0})["sent"] += 1
        if name not in clients:
            clients[name] = (session.node.create_client(interface(path), name, qos_profile=SERVICE_QOS)
                             if kind == "service" else ActionClient(session.node, interface(path), name, **ACTION_QOS))
            wait = clients[name].wait_for_service if kind == "service" else clients[name].wait_for_server
            wait(timeout_sec=60.0)
        client = clients[name]
        pending.append((kind, name, client.call_async(request) if kind == "service" else client.send_goal_async(
            request)))
    session.spin_until(lambda: all(f.done() for _, _, f in pending), timeout)
    results = []
    for kind, name, future in pending:
        tally = counts[name]
        if not future.done():
            tally["unanswered"] += 1
        elif kind == "service":
            tally["answered"] += 1
            tally["refused"] += int(not getattr(future.result(), "success", True))
        elif not future.result().accepted:
            tally["answered"] += 1
            tally["refused"] += 1
        else:
            if cancel and name.endswith("follow_joint_trajectory"):
                future.result().cancel_goal_async()
            results.append((name, future.result().get_result_async()))
    return results


def soak_bringup(session, workdir: Path, seconds: float, timeout: float, seed: int, rss_limit: float,
                 warm_up: float) -> dict:
    """The whole system under ``seconds`` of mixed load (module docstring); counts per kind and RSS per node,
    growth judged from the end of the first ``warm_up`` s (at most half the run) on."""
    import importlib

    from sensor_msgs.msg import JointState

    from discrete_robot.ros.processes import NodeProcess

    def interface(path):
        module, name = path.split(":")
        return getattr(importlib.import_module(module), name)

    rng = np.random.default_rng(seed)
    bringup = NodeProcess("bringup", workdir / "bringup")
    counts: dict[str, dict[str, int]] = {}
    clients: dict[str, object] = {}
    memory: dict[str, MemoryTrack] = {}
    rounds, began = 0, time.monotonic()
    warm_up = min(warm_up, seconds / 2)
    try:
        session.wait_for_message("joint_states", JointState, timeout=120.0)
        session.wait_for_message("space_robot/joint_states", JointState, timeout=120.0)
        memory = {node: MemoryTrack(pid=pid) for node, pid in _node_pids(bringup.process.pid).items()}
        began = time.monotonic()     # the load's time, from the system's first states on
        while time.monotonic() - began < seconds and bringup.alive():
            rounds += 1
            results = []
            for phase in _round_requests(rng):
                results += _send_phase(session, phase, clients, counts, interface, timeout, cancel=rounds % 2 == 1)
            session.spin_until(lambda futures=results: all(f.done() for _, f in futures), timeout)
            for name, future in results:
                counts[name]["answered" if future.done() else "unanswered"] += 1
            elapsed = time.monotonic() - began
            due = 1 + int((TWENTIETHS - 1) * (elapsed - warm_up) / (seconds - warm_up))
            for track in memory.values():   # the first reading at the warm-up's end, then every twentieth
                with contextlib.suppress(OSError, RuntimeError):
                    if elapsed >= warm_up:
                        track.update(min(TWENTIETHS, due), TWENTIETHS)
            if rounds % 20 == 0:
                unanswered = sum(c["unanswered"] for c in counts.values())
                print(f"soak: bringup: {elapsed:.0f} of {seconds:.0f} s, {rounds} rounds, {unanswered} unanswered",
                      file=sys.stderr, flush=True)
    finally:
        alive = bringup.alive()
        bringup.stop()
    unanswered = sum(c["unanswered"] for c in counts.values())
    nodes = {node: track.report(rss_limit) for node, track in memory.items()}
    report = {"seconds": time.monotonic() - began, "warm_up_s": warm_up, "rss_limit_mb": rss_limit,
              "rounds": rounds, "requests": counts,
              "sent": sum(c["sent"] for c in counts.values()), "unanswered": unanswered,
              "alive_at_end": alive, "nodes": nodes}
    report["passed"] = bool(alive and unanswered == 0 and all(n["rss_passed"] for n in nodes.values()))
    return report


# ------------------------------------------------------------------------------------------------ driver

def run(args) -> dict:
    """Soak every target (or those in ``args.only``); the report."""
    report = {"rss_limit_mb": args.rss_limit, "seed": args.seed, "targets": {}}
    only = set(args.only or TARGET_NAMES)

    def record(name: str, result: dict) -> None:
        report["targets"][name] = result
        print(f"soak: {name}: {json.dumps(result)}", file=sys.stderr, flush=True)

    if "space_robot" in only:
        record("space_robot", soak_space_robot(args.space_steps, args.space_speed, args.seed, args.rss_limit))
    if "arm" in only:
        record("arm", soak_arm(args.arm_steps, args.arm_velocities, args.rss_limit))
    services = [name for name in SERVICES if name in only]
    if services or "bringup" in only:
        from discrete_robot.ros.processes import ament_environment
        from discrete_robot.ros.session import RosSession

        ament_environment()
        counts = {"predict_push": args.requests, "plan_trajectory": args.plan_requests or args.requests}
        params = {"plan_trajectory": {"grid_points": args.grid_points}}
        with tempfile.TemporaryDirectory(prefix="discrete_robot_soak_") as workdir, \
                RosSession("soak_client") as session:
            for name in services:
                record(name, soak_service(session, Path(workdir), SERVICES[name], counts[name], args.timeout,
                                          args.seed, args.rss_limit, params.get(name, {})))
            if "bringup" in only:
                record("bringup", soak_bringup(session, Path(workdir), args.bringup_seconds, args.timeout,
                                               args.seed, args.bringup_rss_limit, args.bringup_warm_up))
    return report


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--space-steps", type=int, default=1_000_000, help="space robot steps of 1 ms")
    parser.add_argument("--space-speed", type=float, default=0.5,
                        help="scale of the random initial velocities of the space robot, m/s and rad/s")
    parser.add_argument("--arm-steps", type=int, default=1_000_000,
                        help=f"arm steps of {ARM_TIME_STEP} s (each takes ~0.1 ms of CPU)")
    parser.add_argument("--arm-velocities", type=float, nargs=2, default=[1.0, -1.0],
                        help="initial joint velocities of the arm, rad/s")
    parser.add_argument("--requests", type=int, default=10_000, help="requests to each service")
    parser.add_argument("--bringup-seconds", type=float, default=600.0,
                        help="s of mixed load on the whole bringup")
    parser.add_argument("--bringup-warm-up", type=float, default=60.0,
                        help="s of the bringup run before its reference RSS reading (at most half the run)")
    parser.add_argument("--bringup-rss-limit", type=float, default=1.0,
                        help="largest RSS growth of a bringup node after its warm-up, MB")
    parser.add_argument("--plan-requests", type=int, default=None,
                        help="requests to plan_trajectory (default: --requests)")
    parser.add_argument("--grid-points", type=int, default=20,
                        help="trajectory_planner_node's grid_points: small plans keep the soak fast")
    parser.add_argument("--timeout", type=float, default=15.0, help="s a service may take to answer")
    parser.add_argument("--rss-limit", type=float, default=5.0, help="largest RSS growth after warm-up, MB")
    parser.add_argument("--seed", type=int, default=0, help="seeds the initial velocities and the requests")
    parser.add_argument("--output", type=Path, default=Path("results/soak.json"))
    parser.add_argument("--only", nargs="*", default=(), choices=TARGET_NAMES, help="targets to run")
    args = parser.parse_args()
    for name in ("space_steps", "arm_steps", "requests"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1")
    if args.plan_requests is not None and args.plan_requests < 1:
        parser.error("--plan-requests must be at least 1")
    os.environ.setdefault("ROS_DOMAIN_ID", str(1 + os.getpid() % 101))
    report = run(args)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(report, indent=2))
    failed = [name for name, target in report["targets"].items() if not target["passed"]]
    print(f"wrote {args.output}: {len(report['targets']) - len(failed)} passed"
          + (f", failed: {', '.join(failed)}" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
