"""Implementations of the ``planning`` commands (their arguments: :mod:`.cli`, which imports this module only
when a command runs, so ``--help`` loads no numerical module)."""

import json
from pathlib import Path

import numpy as np

from discrete_robot.cli import Report
from discrete_robot.config_files import read_text
from discrete_robot.discrete.dynamic_model import DiscreteDynamicModel
from discrete_robot.errors import InputError
from discrete_robot.model.description import load_model, package_config_path
from discrete_robot.model.dynamics import RigidBodySystem
from discrete_robot.planning.cli import DEFAULT_MODEL, SPHERICAL_PENDULUM
from discrete_robot.planning.collocation import arm_point_to_point_rk, pendulum_swing_up_rk
from discrete_robot.planning.constraints import JointLimits
from discrete_robot.planning.continuous_topp import time_optimal_segment
from discrete_robot.planning.dmoc import pendulum_swing_up_dmoc
from discrete_robot.planning.dmoc_sparse import min_effort
from discrete_robot.planning.min_time import plan_min_time, plan_min_time_nlp, replay
from discrete_robot.planning.path import WaypointPath
from discrete_robot.planning.planner import TrajectoryPlanner, min_effort_trajectory, min_time_trajectory
from discrete_robot.planning.prediction import predict_execution
from discrete_robot.plotting import new_figure, save_figure


def parse_vector(text: str, what: str) -> np.ndarray:
    """'a,b,c' -> array; InputError naming the option on anything else."""
    try:
        values = np.array([float(v) for v in text.split(",")])
    except ValueError:
        raise InputError(f"{what}: expected comma-separated numbers, got {text!r}") from None
    if not np.all(np.isfinite(values)):
        raise InputError(f"{what}: values must be finite, got {text!r}")
    return values


def _model(path):
    return load_model(path if path else package_config_path(DEFAULT_MODEL))


def _waypoints(args, model) -> np.ndarray:
    if args.waypoints:
        points = [parse_vector(text, f"waypoint {i}") for i, text in enumerate(args.waypoints)]
        if any(p.size != model.dof for p in points):
            raise InputError(f"--waypoints: each needs {model.dof} values ({', '.join(model.joint_names)})")
        return np.array(points)
    return np.array([np.zeros(model.dof), np.array([np.pi / 2, np.pi / 4])]) if model.dof == 2 else \
        np.array([model.initial_positions, model.initial_positions + 0.5])


def _limits(args, model) -> JointLimits:
    effort = parse_vector(args.max_effort, "--max-effort") if args.max_effort else None
    velocity = parse_vector(args.max_velocity, "--max-velocity") if args.max_velocity else None
    return JointLimits.from_model(model, effort, velocity)


def plot_min_time(plan, output_dir: Path, name: str = "min_time") -> list[Path]:
    """Torques (held over each step) against ±limits, and joint velocities and path speed against time."""
    fig, axes = new_figure(2, 1, sharex=True)
    for r, joint in enumerate(plan.joint_names):
        line, = axes[0].step(plan.t[:-1], plan.torques[:, r], where="post", label=joint)
        for sign in (1.0, -1.0):
            axes[0].axhline(sign * plan.effort_limits[r], color=line.get_color(), linestyle="--", linewidth=0.8)
        axes[1].plot(plan.t, plan.qd[:, r], marker=".", markersize=3, label=f"{joint} q̇")
        if np.isfinite(plan.velocity_limits[r]):
            axes[1].axhline(plan.velocity_limits[r], color="grey", linestyle=":", linewidth=0.8)
    if np.all(np.isfinite(plan.path_speed)):
        axes[1].plot(plan.t, plan.path_speed, "k--", label="path speed ṡ")
    axes[0].set(ylabel="torque F(k) [N m]", title=f"minimum time {plan.duration:.4f} s, {plan.steps} steps "
                                                  "(dashed: limits)")
    axes[1].set(xlabel="t [s]", ylabel="velocity [rad/s]", title="velocity profile")
    for axis in axes:
        axis.legend(fontsize=8)
    return [save_figure(fig, output_dir, name)]


def min_time_command(args) -> dict:
    model = _model(args.model)
    limits = _limits(args, model)
    path = WaypointPath(_waypoints(args, model), smooth=args.smooth)
    discrete = DiscreteDynamicModel(RigidBodySystem(model))
    plan = plan_min_time_nlp(discrete, path, limits, args.grid_points) if args.nlp else \
        plan_min_time(discrete, path, limits, args.grid_points)
    replay_error = float(np.max(np.abs(replay(discrete, plan) - plan.q)))
    timed = min_time_trajectory(plan, discrete.system)
    predicted = predict_execution(model, timed.t, timed.positions, timed.velocities, timed.accelerations,
                                  timed.efforts, system=discrete.system)
    return {"model": model.name, "predicted": predicted.message(), "joint_names": plan.joint_names,
            "duration": plan.duration,
            "planner": plan.method, "steps": plan.steps, "inserted_switch_nodes": plan.inserted_nodes,
            "planning_time_s": plan.planning_time, "replay_position_error": replay_error,
            "min_torque_utilisation": float(np.min(plan.torque_utilisation)),
            "max_torque_utilisation": float(np.max(plan.torque_utilisation)),
            "t": plan.t, "dt": plan.dt, "torques": plan.torques, "positions": plan.q, "velocities": plan.qd,
            "plots": plot_min_time(plan, args.output_dir)}


def plot_optimal_control(solutions, output_dir: Path, name: str) -> list[Path]:
    fig, axes = new_figure(2, 1, sharex=True)
    for solution, style in zip(solutions, ("-", "--"), strict=False):
        controls = solution.controls
        t = solution.t[:controls.shape[0]]
        for r in range(controls.shape[1]):
            axes[0].step(t, controls[:, r], style, where="post", label=f"{solution.method} u{r}")
        for r in range(solution.q.shape[1]):
            axes[1].plot(solution.t, solution.q[:, r], style, label=f"{solution.method} q{r}")
    axes[0].set(ylabel="control [N m]", title="minimum-effort controls")
    axes[1].set(xlabel="t [s]", ylabel="q", title="states")
    for axis in axes:
        axis.legend(fontsize=7, ncol=2)
    return [save_figure(fig, output_dir, name)]


def min_effort_command(args) -> dict:
    predicted = None
    if args.system == SPHERICAL_PENDULUM:
        solutions = [pendulum_swing_up_dmoc(args.duration, args.h)]
        if args.compare_rk is not False:
            solutions.append(pendulum_swing_up_rk(args.duration, args.h))
        name, system_name = "min_effort_spherical_pendulum", SPHERICAL_PENDULUM
    else:
        model = _model(args.model)
        waypoints = _waypoints(args, model)
        system = RigidBodySystem(model)
        limits = _limits(args, model)
        solutions = [min_effort(DiscreteDynamicModel(system), waypoints[0], waypoints[-1], args.duration, args.h,
                                limits, guess=args.guess, via=waypoints[1:-1])]
        if args.compare_rk:
            if len(waypoints) != 2:
                raise InputError("--compare-rk: the Heun transcription plans point to point (two --waypoints)")
            solutions.append(arm_point_to_point_rk(system, waypoints[0], waypoints[-1], args.duration, args.h,
                                                   limits.effort))
        name, system_name = f"min_effort_{model.name}", model.name
        if solutions[0].outcome.success:    # the plan as the node would answer it, and its execution
            timed = min_effort_trajectory(solutions[0], waypoints[-1], system)
            predicted = predict_execution(model, timed.t, timed.positions, timed.velocities, timed.accelerations,
                                          timed.efforts, system=system).message()
    return {"system": system_name, "duration": args.duration, **({"predicted": predicted} if predicted else {}),
            "solutions": [dict(s.summary(), controls=s.controls) for s in solutions],
            "plots": plot_optimal_control(solutions, args.output_dir, name)}


def convergence_command(args) -> dict:
    """Durations of the discrete plan on refined grids against the continuous time optimum (one segment)."""
    model = _model(args.model)
    waypoints = _waypoints(args, model)
    if len(waypoints) != 2:
        raise InputError("convergence compares one straight segment: give exactly two --waypoints")
    limits = _limits(args, model)
    grids = [int(g) for g in parse_vector(args.grids, "--grids")]
    system = RigidBodySystem(model)
    discrete = DiscreteDynamicModel(system)
    continuous = time_optimal_segment(system, waypoints[0], waypoints[1], limits.effort).duration
    rows = []
    for points in grids:
        plan = plan_min_time(discrete, WaypointPath(waypoints), limits, points)
        rows.append({"grid_points": points, "steps": plan.steps, "duration": plan.duration,
                     "error": plan.duration - continuous, "planning_time_s": plan.planning_time})
    errors = np.abs([row["error"] for row in rows])
    for row, previous in zip(rows[1:], errors[:-1], strict=True):
        row["observed_order"] = float(np.log2(previous / abs(row["error"])))
    fig, axis = new_figure()
    axis.loglog([row["steps"] for row in rows], errors, "o-", label="|T_N − T_continuous|")
    axis.loglog([rows[0]["steps"], rows[-1]["steps"]],
                [errors[0], errors[0] * (rows[0]["steps"] / rows[-1]["steps"]) ** 2], "k:", label="slope −2")
    axis.set(xlabel="steps N", ylabel="duration error [s]",
             title=f"min-time duration → continuous optimum {continuous:.6f} s")
    axis.legend()
    return {"model": model.name, "continuous_duration": continuous, "rows": rows,
            "plots": [save_figure(fig, args.output_dir, "min_time_convergence")]}


def retime_command(args) -> Report:
    """A stack's path from a JSON file ``{"joint_names": [...], "positions": [[...], ...]}`` retimed for minimum
    time (planning.retime), with its predicted execution (planning.prediction)."""
    try:
        document = json.loads(read_text(args.trajectory, "--trajectory"))
    except json.JSONDecodeError as error:
        raise InputError(f"--trajectory {args.trajectory}: not JSON ({error})") from None
    if not isinstance(document, dict) or not {"joint_names", "positions"} <= document.keys():
        raise InputError(f"--trajectory {args.trajectory}: expected an object with 'joint_names' and 'positions'")
    planner = TrajectoryPlanner(_model(args.model))
    plan = planner.retime(document["positions"], document["joint_names"], args.effort_scale, args.velocity_scale,
                          interpolation=args.interpolation)
    predicted = plan.predicted.summary()
    result = {"duration": plan.duration, "effort_scale": plan.details["effort_scale"],
              "planning_time_s": plan.details["planning_time_s"],
              "trajectory": {"joint_names": list(plan.joint_names), "t": plan.t, "positions": plan.positions,
                             "velocities": plan.velocities, "accelerations": plan.accelerations,
                             "efforts": plan.efforts},
              "predicted": predicted}
    text = (f"retimed {len(plan.t)} points ({plan.details['interpolation']}): {plan.duration:.4f} s at effort "
            f"scale {plan.details['effort_scale']}, planned in {plan.details['planning_time_s']:.3f} s\n"
            f"{plan.predicted.message()}\n"
            + "\n".join(f"  {name}: largest tracking error {predicted['max_tracking_error'][name]:.3g} rad, peak "
                        f"effort {100.0 * predicted['peak_effort_fraction'][name]:.0f} %" for name in plan.joint_names))
    return Report(result, text)
