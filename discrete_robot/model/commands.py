"""Implementations of the ``model`` commands (their arguments: :mod:`.cli`)."""

import math

import numpy as np
from transforms3d.euler import mat2euler

from discrete_robot.errors import InputError
from discrete_robot.validation import finite_vector


def xacro_arguments(pairs: list[str]) -> dict[str, str]:
    """``NAME:=VALUE`` strings (as ``ros2 launch`` and ``xacro`` take them) as a mapping; InputError otherwise."""
    arguments = {}
    for pair in pairs:
        name, separator, value = pair.partition(":=")
        if not separator or not name:
            raise InputError(f"--xacro-arg: expected NAME:=VALUE, got '{pair}'")
        arguments[name] = value
    return arguments


def _limit(value: float):
    return None if math.isinf(value) else float(value)


def describe(model, q=None) -> dict:
    """The model's joints, links and masses (and, at q, its mass matrix, gravity torques and link poses)."""
    from discrete_robot.model.dynamics import RigidBodySystem
    from discrete_robot.model.urdf import link_poses

    def joint_row(link, leader=None):
        joint = link.joint
        rows = []
        for k, name in enumerate(joint.dof_names):
            kind = joint.type.value
            if kind == "revolute" and math.isinf(joint.lower[k]) and math.isinf(joint.upper[k]):
                kind = "continuous"
            rows.append({"name": name, "type": kind, "lower": _limit(joint.lower[k]), "upper": _limit(joint.upper[k]),
                         "velocity": _limit(joint.velocity[k]), "effort": _limit(joint.effort[k]),
                         "damping": float(joint.damping[k]), "friction": float(joint.friction[k]),
                         "mimic_leader": leader})
        return rows

    joints = [row for link in model.links for row in joint_row(link)]
    joints += [row for follower in model.mimic for row in joint_row(follower.link, follower.leader)]
    bodies = [(model.base.name, model.base.mass)] + [(link.name, link.mass) for link in model.links] \
        + [(follower.link.name, follower.link.mass) for follower in model.mimic]
    result = {"joints": joints, "links": [{"name": name, "mass": float(mass)} for name, mass in bodies],
              "total_mass": float(sum(mass for _, mass in bodies)), "dof": model.dof,
              "joint_names": list(model.joint_names)}
    if q is not None:
        q = finite_vector(q, model.dof, f"--q (one per joint: {', '.join(model.joint_names)})")
        result["mass_matrix"] = RigidBodySystem(model).mass_matrix(q) if not model.base.floating else None
        result["gravity_torques"] = RigidBodySystem(model).potential_gradient(q) if not model.base.floating \
            else None
        result["link_poses"] = {name: {"xyz": T[:3, 3], "rpy": np.array(mat2euler(T[:3, :3], axes="sxyz"))}
                                for name, T in link_poses(model, q).items()}
    return result


#: the time step at which ``model info`` measures the step cost (the node's default), s
STEP_COST_DT = 1e-3
#: CPU seconds the measurement lasts at least
STEP_COST_SECONDS = 0.2
#: models with more DOFs (followers included) than this are not timed: one step costs O(n⁴) and its workspace O(n⁴)
STEP_COST_MAX_DOF = 40


def step_cost(model) -> float | None:
    """CPU seconds per discrete step at :data:`STEP_COST_DT` (what the node pays per step at its default): the
    least per-step time of held-zero-torque runs (compiled ``held_steps``, :class:`.FixedStepSimulation`) from the
    initial positions at rest, no joint stops, repeated until :data:`STEP_COST_SECONDS` of CPU time; None for a
    floating base or a model beyond :data:`STEP_COST_MAX_DOF`. A measurement: informative, machine-dependent."""
    import time

    from discrete_robot.discrete.simulation import FixedStepSimulation
    from discrete_robot.model.dynamics import RigidBodySystem

    if model.base.floating or model.dof + len(model.mimic) > STEP_COST_MAX_DOF:
        return None
    simulation = FixedStepSimulation(RigidBodySystem(model), "discrete", STEP_COST_DT, model.initial_positions,
                                     np.zeros(model.dof))
    zero = np.zeros(model.dof)
    simulation.step(2, zero)                     # compilation caches, Newton's guesses
    best, spent, count = math.inf, 0.0, 10
    while spent < STEP_COST_SECONDS:
        start = time.process_time()
        simulation.step(count, zero)
        elapsed = time.process_time() - start
        best, spent, count = min(best, elapsed / count), spent + elapsed, min(2 * count, 1000)
    return best


def _cell(value) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def table(rows: list[dict], columns: list[str]) -> list[str]:
    """Rows as aligned text columns under a header."""
    cells = [columns] + [[_cell(row[c]) for c in columns] for row in rows]
    widths = [max(len(line[i]) for line in cells) for i in range(len(columns))]
    return ["  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True)).rstrip()
            for line in cells]


def render_text(info: dict, model) -> str:
    lines = [f"robot '{model.name}': {info['dof']} DOF, total mass {info['total_mass']:.4g} kg, base "
             f"'{model.base.name}' ({'floating' if model.base.floating else 'fixed'})", "", "joints:"]
    lines += table(info["joints"], ["name", "type", "lower", "upper", "velocity", "effort", "damping", "friction",
                                    "mimic_leader"])
    lines += ["", "links (masses with their fixed links lumped in):"]
    lines += table(info["links"], ["name", "mass"])
    if model.frames:
        lines += [f"fixed frames: {', '.join(frame.name for frame in model.frames)}"]
    lines += ["", "joint_names: " + " ".join(info["joint_names"])]
    if info.get("step_cost_s") is not None:
        cost = info["step_cost_s"]
        lines += [f"step cost at dt = {STEP_COST_DT * 1e3:g} ms: {cost * 1e3:.3f} ms CPU "
                  f"({cost / STEP_COST_DT:.1%} of real time; {model.dof} DOF, {len(model.mimic)} mimic)"]
    if "mass_matrix" in info:
        if info["mass_matrix"] is not None:
            lines += ["", "mass_matrix (kg m², kg):"]
            lines += ["  " + " ".join(f"{v:10.4g}" for v in row) for row in info["mass_matrix"]]
            lines += ["gravity_torques (N m, N): " + " ".join(f"{v:.4g}" for v in info["gravity_torques"])]
        lines += ["", "link_poses (xyz m, rpy rad):"]
        lines += table([{"frame": name, "xyz": " ".join(f"{v:.4f}" for v in pose["xyz"]),
                         "rpy": " ".join(f"{v:.4f}" for v in pose["rpy"])}
                        for name, pose in info["link_poses"].items()], ["frame", "xyz", "rpy"])
    return "\n".join(lines)


def info_command(args):
    from discrete_robot.model.description import load_model

    model = load_model(args.model, xacro_args=xacro_arguments(args.xacro_arg), floating_base=args.floating_base)
    info = describe(model, args.q)
    info["step_cost_s"] = step_cost(model)
    return info if args.json else render_text(info, model)
