"""Recorded experiments against the live nodes, over ROS.

Each experiment talks to running nodes (bringup or a launch),
returns a summary dict and writes its plots; :func:`run` wraps any of them
with an MCAP recording of every topic and a summary.json.

- ``plan-execute``: plan a minimum-time motion with ``plan_trajectory`` and
  execute it through ``discrete_robot_node``'s FollowJointTrajectory action (a
  goal that arrives while the planner's published copy already runs preempts
  it); compares the executed joint states with the plan.
- ``space``: the space robot under the paper's loads: base pose and joints.
- ``push-sweep``: ``simulate_push`` for a sweep of contact offsets.
"""

import functools
import json
import logging
import math
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path

import numpy as np
from builtin_interfaces.msg import Duration
from control_msgs.action import FollowJointTrajectory
from diagnostic_msgs.msg import DiagnosticArray
from discrete_robot_interfaces.srv import PlanTrajectory, SimulatePush
from geometry_msgs.msg import Point, Pose2D, PoseStamped
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, String
from tqdm import tqdm
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from discrete_robot.cli import to_jsonable
from discrete_robot.errors import DiscreteRobotError
from discrete_robot.geometry2d import rotation2d
from discrete_robot.nodes.common import LATCHED_QOS, duration_seconds, seconds_to_duration_fields
from discrete_robot.plotting import new_figure, save_figure
from discrete_robot.ros.push_experiment import push_to_pose
from discrete_robot.ros.recorder import McapRecorder
from discrete_robot.ros.replay import INPUTS
from discrete_robot.ros.session import RosSession, stamp_seconds

logger = logging.getLogger(__name__)

DEMO_ARM = "planar_2link"          # bringup's arm (and its scene, config/table_scene_planar_2link.yaml)
DEMO_PUSH_GOAL = (1.06, 0.0, 0.35)  # m, m, rad: 4 cm back and 20 degrees round from the scene's start
PLAN_START = (-math.pi / 2, 0.0)  # hanging (gravity -y): the motors have torque to spare at the start
PLAN_GOAL = (0.0, math.pi / 2)
PLANNER_STATE_WAIT = 60.0  # s a plan request is repeated while the planner has not heard the arm
SETTLE_TIME = 2.0  # s the arm holds the start before the planned motion
TORQUE_MARGIN = 0.9  # share of the torque limits the plan may use
AT_REST_SPEED = 1e-3  # rad/s: every joint slower than this counts as having stopped
MAX_OVERTIME = 20.0  # s the arm may take beyond the plan (and 2 s of settling) to stop
ACTION = "joint_trajectory_controller/follow_joint_trajectory"


class ExperimentError(DiscreteRobotError):
    """A live node refused or failed a request during an experiment."""


def _point(positions, seconds: float = 0.0) -> JointTrajectoryPoint:
    sec, nanosec = seconds_to_duration_fields(seconds)
    return JointTrajectoryPoint(positions=[float(p) for p in positions],
                                time_from_start=Duration(sec=sec, nanosec=nanosec))


def _spin_with_progress(session: RosSession, progress: tqdm, seconds: float) -> None:
    """Spin for ``seconds`` while advancing the bar by one unit per second."""
    end = time.monotonic() + seconds
    while (left := end - time.monotonic()) > 0:
        session.spin_until(lambda: False, min(1.0, left))
        progress.update(1)


def urdf_effort_limits(urdf: str, names: list[str]) -> list[float]:
    """The <limit effort> of each named joint in a URDF, N m or N."""
    limits = {joint.get("name"): float(joint.find("limit").get("effort"))
              for joint in ET.fromstring(urdf).iter("joint") if joint.find("limit") is not None}
    return [limits[name] for name in names]


def plan_execute(session: RosSession, output_dir: Path, progress: tqdm) -> dict:
    """Minimum-time motion of the arm, planned over ROS from the arm's state and executed by the simulator
    through plan_trajectory's ``execute`` (the planner sends the FollowJointTrajectory goal and answers with
    its result).

    The plan uses TORQUE_MARGIN of the arm's torque limits: a minimum-time plan keeps a motor at its
    limit all the time, and the simulator's tracking controller (saturated at the limits) needs the
    rest to correct tracking errors.
    """
    names = list(session.wait_for_message("joint_states", JointState, timeout=20.0).name)
    urdf = session.wait_for_message("robot_description", String, timeout=20.0, qos=LATCHED_QOS).data
    max_effort = [TORQUE_MARGIN * limit for limit in urdf_effort_limits(urdf, names)]
    settle = FollowJointTrajectory.Goal(trajectory=JointTrajectory(joint_names=names,
                                                                   points=[_point(PLAN_START, SETTLE_TIME)]))
    states = []
    subscription = session.node.create_subscription(JointState, "joint_states", states.append, 10)
    _execute(session, settle, SETTLE_TIME + MAX_OVERTIME)
    # DDS matches a new subscription some time after it is made (a discovery heartbeat later when a packet is lost
    # on a busy machine). Made after the settling, it can miss the execution's start or all of it: one run under
    # load recorded a successful execution and then failed without a result, as an empty list of states makes it.
    # Made before and heard from, it has every state of the execution.
    if not session.spin_until(lambda: states, 20.0):
        raise ExperimentError("no joint_states reached the experiment within 20 s of the arm settling")
    states.clear()
    request = PlanTrajectory.Request(joint_names=names, waypoints=[_point(PLAN_GOAL)], max_effort=max_effort,
                                     method="min_time", execute=True)
    deadline = time.monotonic() + PLANNER_STATE_WAIT
    while True:
        response = session.call(PlanTrajectory, "plan_trajectory", request, timeout=60.0 + MAX_OVERTIME)
        # the planner runs in its own process and, on a busy machine, may not have heard the arm yet: it then
        # refuses at once, computing nothing, and is asked again
        if response.success or "state is unknown" not in response.message or time.monotonic() > deadline:
            break
        session.spin_until(lambda: False, 0.5)
    session.node.destroy_subscription(subscription)
    if not response.success:
        raise ExperimentError(f"plan_trajectory failed: {response.message}")
    progress.update(int(response.duration))
    t0 = stamp_seconds(response.trajectory)  # when execution began, simulated time
    plan = response.trajectory
    plan_t = np.array([duration_seconds(p.time_from_start) for p in plan.points])
    plan_q = np.array([p.positions for p in plan.points])
    plan_tau = np.array([p.effort for p in plan.points])
    t = np.array([stamp_seconds(s) for s in states])
    q = np.array([s.position for s in states])
    final_error = np.abs(q[-1] - np.array(PLAN_GOAL))
    during = (t >= t0) & (t <= t0 + plan_t[-1])
    planned = np.column_stack([np.interp(t[during] - t0, plan_t, plan_q[:, j]) for j in range(len(names))])
    tracking = float(np.max(np.abs(q[during] - planned))) if np.any(during) else float("nan")

    plot = save_figure(_plan_execute_figure(names, (plan_t, plan_q, plan_tau), (t - t0, q), max_effort),
                       output_dir, "plan_execute")
    return {"planned_duration_s": response.duration, "plan_points": len(plan.points), "max_effort": max_effort,
            "final_position_error_rad": final_error, "joint_states_received": len(states),
            "action_error_code": response.execution_error_code, "planner_message": response.message,
            "largest_tracking_error_rad": tracking, "plot": plot}


def _plan_execute_figure(names, plan, executed, max_effort):
    """Positions (the plan drawn over the executed motion), the tracking error and the planned torques against
    the time from the start of execution, over the plan's span."""
    plan_t, plan_q, plan_tau = plan
    t, q = executed
    span = (-0.05 * plan_t[-1], 1.2 * plan_t[-1])
    fig, axes = new_figure(1, 3, figsize=(16, 4.2))
    shown = (t >= span[0]) & (t <= span[1])
    for j, name in enumerate(names):
        line, = axes[0].plot(t[shown], q[shown, j], linewidth=4, alpha=0.35, label=f"{name} executed")
        axes[0].plot(plan_t, plan_q[:, j], "--", color=line.get_color(), linewidth=1.2, label=f"{name} planned")
        inside = shown & (t <= plan_t[-1]) & (t >= 0.0)
        error = q[inside, j] - np.interp(t[inside], plan_t, plan_q[:, j])
        axes[1].plot(t[inside], np.degrees(error), color=line.get_color(), label=name)
        if plan_tau.size:
            axes[2].step(plan_t, plan_tau[:, j], where="post", color=line.get_color(), label=f"{name} torque")
            axes[2].hlines([-max_effort[j], max_effort[j]], plan_t[0], plan_t[-1], colors=line.get_color(),
                           linestyles=":", label=f"{name} limits")
    axes[0].set(xlabel="t from execution start [s]", ylabel="q [rad]", title="plan (dashed) over joint_states",
                xlim=span)
    axes[1].set(xlabel="t from execution start [s]", ylabel="executed − planned [deg]", title="tracking error",
                xlim=span)
    axes[1].axhline(0.0, color="grey", linewidth=0.5)
    axes[2].set(xlabel="t from execution start [s]", ylabel="torque [N m]", title="planned torques and limits",
                xlim=span)
    for axis in axes:
        axis.grid(True, alpha=0.3)
        axis.legend(fontsize=7)
    return fig


def _execute(session: RosSession, goal, timeout: float, feedback=None):
    """Send ``goal`` to the arm's FollowJointTrajectory action and wait for its result (ExperimentError unless
    it succeeds)."""
    return _result(session, session.send_goal(FollowJointTrajectory, ACTION, goal, feedback=feedback), timeout)


def _result(session: RosSession, handle, timeout: float):
    """The result of a sent goal; ExperimentError unless it was accepted and succeeded."""
    if not handle.accepted:
        raise ExperimentError(f"{ACTION} rejected the goal")
    result = session.goal_result(handle, timeout).result
    if result.error_code != FollowJointTrajectory.Result.SUCCESSFUL:
        raise ExperimentError(f"{ACTION} failed ({result.error_code}): {result.error_string}")
    return result


def space(session: RosSession, output_dir: Path, progress: tqdm, seconds: float = 10.0) -> dict:
    """The free-floating space robot under the paper's loads: base pose, joints, momentum and energy over time,
    and the node's momentum drift (after the applied loads' impulse) from its diagnostics."""
    poses, joints, momenta, drifts = [], [], [], []

    def on_momentum(msg):       # no header: stamped with the base pose of the same tick, published before it
        if poses:
            momenta.append((stamp_seconds(poses[-1]), list(msg.data)))

    def on_diagnostics(msg):
        for status in msg.status:
            values = {v.key: v.value for v in status.values}
            drift = [float(values[k]) for k in values if "momentum_drift" in k and k.startswith("linear")]
            if "space_robot" in status.name and drift and poses:
                drifts.append((stamp_seconds(poses[-1]), drift[0]))

    subscriptions = [session.node.create_subscription(PoseStamped, "space_robot/base_pose", poses.append, 10),
                     session.node.create_subscription(JointState, "space_robot/joint_states", joints.append, 10),
                     session.node.create_subscription(Float64MultiArray, "space_robot/momentum", on_momentum, 10),
                     session.node.create_subscription(DiagnosticArray, "/diagnostics", on_diagnostics, 10)]
    _spin_with_progress(session, progress, seconds)
    for subscription in subscriptions:
        session.node.destroy_subscription(subscription)
    if not poses:
        raise ExperimentError("no message on space_robot/base_pose")
    t = np.array([stamp_seconds(p) for p in poses])
    position = np.array([[p.pose.position.x, p.pose.position.y, p.pose.position.z] for p in poses])
    quaternion = np.array([[p.pose.orientation.w, p.pose.orientation.x, p.pose.orientation.y, p.pose.orientation.z]
                           for p in poses])
    attitude_change = 2 * np.arccos(np.clip(np.abs(quaternion @ quaternion[0]), 0.0, 1.0))
    joint_series = (np.array([stamp_seconds(m) for m in joints]), np.array([m.position for m in joints]),
                    list(joints[0].name)) if joints else None
    plot = save_figure(space_figure(t, position, attitude_change, joint_series, momenta, drifts), output_dir,
                       "space_robot")
    return {"base_poses_received": len(poses), "joint_states_received": len(joints),
            "momentum_messages": len(momenta), "largest_momentum_drift": max((d for _, d in drifts), default=None),
            "base_displacement_m": position[-1] - position[0], "base_rotation_rad": attitude_change[-1],
            "plot": plot}


def space_figure(t, position, attitude_change, joints, momenta, drifts):
    """Base position and rotation, the arm joints, momentum and kinetic energy, and the momentum drift against
    simulated time. ``joints``: (times, positions (k, n), names) or None; ``momenta``: (t, the momentum
    message's data); ``drifts``: (t, linear momentum drift) from the diagnostics."""
    fig, axes = new_figure(2, 2, figsize=(13, 7.5))
    t0 = t[0]
    for k, axis_name in enumerate("xyz"):
        axes[0, 0].plot(t - t0, position[:, k] - position[0, k], label=f"base {axis_name}")
    axes[0, 0].set(xlabel="t [s]", ylabel="displacement [m]", title="base position and rotation")
    axes[0, 0].legend(fontsize=7, loc="upper left")
    twin = axes[0, 0].twinx()
    twin.plot(t - t0, np.degrees(attitude_change), color="black", linestyle="--", label="base rotation")
    twin.set_ylabel("rotation from start [deg]")
    twin.legend(fontsize=7, loc="lower right")
    if joints is not None:
        joint_t, joint_q, names = joints
        for j, name in enumerate(names):
            axes[0, 1].plot(joint_t - t0, joint_q[:, j], linewidth=1, label=name)
        axes[0, 1].legend(fontsize=6, ncol=2)
    axes[0, 1].set(xlabel="t [s]", ylabel="q [rad]", title="arm joints")
    if momenta:
        momentum_t = np.array([m[0] for m in momenta]) - t0
        data = np.array([m[1] for m in momenta])
        axes[1, 0].plot(momentum_t, np.linalg.norm(data[:, :3], axis=1), label="|P| [kg m/s]")
        axes[1, 0].plot(momentum_t, np.linalg.norm(data[:, 3:6], axis=1), label="|L| about the CoM [kg m²/s]")
        axes[1, 0].plot(momentum_t, data[:, 6], label="kinetic energy [J]")
        axes[1, 0].legend(fontsize=7)
    axes[1, 0].set(xlabel="t [s]", title="momentum and kinetic energy (the applied loads change them)")
    if drifts:
        drift_t, drift = np.array(drifts).T
        axes[1, 1].semilogy(drift_t - t0, np.maximum(drift, 1e-18), "o-", label="linear momentum drift")
        axes[1, 1].legend(fontsize=7)
    axes[1, 1].set(xlabel="t [s]", ylabel="|P − P₀ − ∫F dt| [kg m/s]",
                   title="conservation: momentum less the loads' impulse (/diagnostics)")
    for axis in axes.flat:
        axis.grid(True, alpha=0.3)
    return fig


def push_sweep(session: RosSession, output_dir: Path, progress: tqdm) -> dict:
    """A 10 cm square pushed along +x by a round finger at contact offsets across its face."""
    half = 0.05
    offsets = np.linspace(-0.8 * half, 0.8 * half, 7)
    square = [Point(x=x, y=y) for x, y in ((-half, -half), (half, -half), (half, half), (-half, half))]
    friction = {"normal_force": 2.0, "support_friction": 0.4, "contact_friction": 0.3, "pusher_radius": 0.01}
    paths, finals = [], []
    for offset in offsets:
        request = SimulatePush.Request(
            footprint=square, **friction, object_pose=Pose2D(x=0.0, y=0.0, theta=0.0),
            pusher_path=[Point(x=-0.2, y=float(offset)), Point(x=0.15, y=float(offset))],
            pusher_speed=0.05, time_step=0.02)
        response = session.call(SimulatePush, "simulate_push", request, timeout=60.0)
        if not response.success:
            raise ExperimentError(f"simulate_push failed at offset {offset:.3f} m: {response.message}")
        paths.append(np.array([[p.x, p.y] for p in response.object_poses]))
        final = response.object_poses[-1]
        finals.append((final.x, final.y, final.theta))
        progress.update(1)
    rotations = [theta for _, _, theta in finals]
    plot = save_figure(push_sweep_figure(half, offsets, paths, finals, friction), output_dir, "push_sweep")
    return {"offsets_m": offsets, "final_rotation_rad": rotations, "plot": plot}


def push_sweep_figure(half: float, offsets, paths, finals, friction: dict):
    """Object paths with the start and final footprints (a square of half-width ``half``, m), and the final
    rotation against the contact offset, with the friction values in the title."""
    fig, axes = new_figure(1, 2, figsize=(13, 4.8))
    outline = np.array([[-half, -half], [half, -half], [half, half], [-half, half], [-half, -half]])
    axes[0].plot(outline[:, 0], outline[:, 1], color="black", linewidth=1.5, label="footprint at the start")
    for offset, path, (x, y, theta) in zip(offsets, paths, finals, strict=True):
        line, = axes[0].plot(path[:, 0], path[:, 1], label=f"offset {offset * 100:+.1f} cm")
        moved = outline @ rotation2d(theta).T + [x, y]
        axes[0].plot(moved[:, 0], moved[:, 1], color=line.get_color(), linewidth=0.8, alpha=0.7)
    axes[0].set(xlabel="x [m]", ylabel="y [m]", title="object centre paths and final footprints", aspect="equal")
    axes[0].legend(fontsize=7, loc="center left", bbox_to_anchor=(1.0, 0.5))
    degrees = np.degrees([theta for _, _, theta in finals])
    # a push through the centre does not turn the square and either side turns it the other way: the curve
    # jumps there, so each side is drawn on its own
    for side in (offsets < 0.0, offsets > 0.0):
        axes[1].plot(offsets[side] * 100, degrees[side], "o-", color="tab:blue")
    axes[1].plot(offsets[offsets == 0.0] * 100, degrees[offsets == 0.0], "o", color="tab:blue")
    axes[1].axhline(0.0, color="grey", linewidth=0.5)
    axes[1].set(xlabel="contact offset from the centre line [cm]", ylabel="final rotation [deg]",
                title="rotation vs offset")
    fig.suptitle(f"{200 * half:g} cm square pushed along +x: support μ = {friction['support_friction']}, finger "
                 f"μ = {friction['contact_friction']}, normal force {friction['normal_force']} N, finger radius "
                 f"{100 * friction['pusher_radius']:g} cm", fontsize=10)
    return fig


#: each experiment's function (session, output directory, progress bar) -> summary, by the name ``ros.cli`` lists
#: with its one-line summary (there, so that ``--help`` imports no ROS module; this module never imports the CLI)
EXPERIMENTS: dict[str, Callable[[RosSession, Path, tqdm], dict]] = {
    "plan-execute": plan_execute, "space": space, "push-sweep": push_sweep,
    "push-to-pose": functools.partial(push_to_pose, model_name=DEMO_ARM, goal=DEMO_PUSH_GOAL)}
STEPS = {"plan-execute": 12, "space": 10, "push-sweep": 7, "push-to-pose": 2}  # progress-bar units of each


def run(names: list[str], output_dir: Path, record: bool = True, functions: dict | None = None,
        inputs: dict | None = None) -> dict:
    """Run the named experiments against the live nodes; record every topic to ``output_dir/<name>.mcap``, with
    ``inputs`` (text by name: what a replay needs, discrete_robot.ros.replay) as its metadata. ``functions``
    replaces the experiments' functions by name (an experiment run with the user's arguments)."""
    functions = EXPERIMENTS | (functions or {})
    output_dir = Path(output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)
    summary = {"experiments": {}, "output_dir": output_dir.resolve()}
    mcap_path = output_dir / ("experiments.mcap" if len(names) > 1 else f"{names[0]}.mcap")
    with RosSession("discrete_robot_experiments") as session, \
            tqdm(total=sum(STEPS[n] for n in names), unit="step", desc="experiments") as progress:
        recorder = McapRecorder(session.node, mcap_path) if record else None
        if recorder is not None:
            recorder.discover()
            session.node.create_timer(0.5, recorder.discover)  # topics that appear later are recorded too
            # DDS matches the recorder's subscriptions some time after they are made: an experiment that ends at
            # once (a refused goal) would otherwise leave an empty file on a busy machine
            session.spin_until(recorder.receiving_states, 30.0)
        try:
            done = 0
            for name in names:
                progress.set_description(name)
                summary["experiments"][name] = functions[name](session, output_dir, progress)
                done += STEPS[name]
                progress.update(done - progress.n)  # experiments whose length varies end on their mark
        finally:
            if recorder is not None:
                if inputs:
                    recorder.add_metadata(INPUTS, inputs)
                summary["mcap"] = {"path": mcap_path.resolve(), "messages": recorder.close()}
    (output_dir / "summary.json").write_text(json.dumps(to_jsonable(summary), indent=2))
    return summary
