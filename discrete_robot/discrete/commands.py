"""Implementations of the ``discrete`` commands (their arguments: :mod:`.cli`, which imports this module only
when a command runs, so ``--help`` loads no numerical module)."""

import time

import numpy as np

from discrete_robot.discrete.cli import DEFAULT_MODEL
from discrete_robot.discrete.simulation import FixedStepSimulation
from discrete_robot.errors import InputError
from discrete_robot.model.description import load_model, package_config_path
from discrete_robot.model.dynamics import RigidBodySystem
from discrete_robot.model.urdf import to_urdf
from discrete_robot.plotting import new_figure, save_figure
from discrete_robot.validation import per_joint_values


def run_urdf(args):
    """The URDF text (printed as it is), or a summary when it was written to --output."""
    text = to_urdf(load_model(args.model))
    if args.output is None:
        return text
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(text)
    return {"model": args.model, "urdf": args.output}


def run_simulate(args) -> dict:
    model = load_model(args.model if args.model is not None else package_config_path(DEFAULT_MODEL))
    system = RigidBodySystem(model)
    if not (np.isfinite(args.dt) and args.dt > 0.0):
        raise InputError(f"--dt must be a positive number of seconds, got {args.dt}")
    if args.duration is not None:
        if not (np.isfinite(args.duration) and args.duration > 0.0):
            raise InputError(f"--duration must be a positive number of seconds, got {args.duration}")
        steps = int(np.ceil(args.duration / args.dt - 1e-9))
    else:
        steps = 1000 if args.steps is None else args.steps
    if steps < 1:
        raise InputError(f"--steps must be at least 1, got {steps}")
    q = per_joint_values(args.q0, model.initial_positions, "--q0", model.joint_names)
    qd = per_joint_values(args.qd0, np.zeros(model.dof), "--qd0", model.joint_names)
    simulation = FixedStepSimulation(system, args.integrator, args.dt, q, qd)
    tau = np.zeros(model.dof)
    energy = np.empty(steps + 1)
    energy[0] = simulation.energy()
    start = time.process_time()
    for k in range(steps):
        simulation.advance(args.dt, lambda t, q, qd: tau)
        energy[k + 1] = simulation.energy()
    q, qd = simulation.q, simulation.qd
    cpu = time.process_time() - start
    t = np.arange(steps + 1) * args.dt
    scale = max(abs(energy[0]), np.finfo(float).tiny)
    drift = (energy - energy[0]) / scale
    fig, ax = new_figure()
    ax.plot(t, drift)
    ax.set_xlabel("t [s]")
    ax.set_ylabel("(E − E₀) / |E₀|")
    ax.set_title(f"{model.name}: {args.integrator}, h = {args.dt} s")
    ax.grid(True)
    plot = save_figure(fig, args.output_dir, f"simulate_{model.name}_{args.integrator}")
    return {"model": model.name, "integrator": args.integrator, "dt": args.dt, "steps": steps,
            "duration": float(t[-1]), "joint_names": list(model.joint_names), "q": q, "qd": qd,
            "energy_initial": float(energy[0]), "energy_final": float(energy[-1]),
            "max_relative_energy_drift": float(np.max(np.abs(drift))), "cpu_seconds": cpu, "plot": plot}
