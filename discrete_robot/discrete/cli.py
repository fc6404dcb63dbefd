"""``python -m discrete_robot discrete <command>``: simulate a robot model file; the article's experiments.

``simulate`` runs a model (default: the package's planar_2link.yaml) unforced from an initial
state with the chosen integrator, prints the final state and the energy drift, and writes the
energy plot ``simulate_<model>_<integrator>.png`` to the output folder. ``experiment`` comes from
:mod:`discrete_robot.variational.experiments`.
"""

import time
from pathlib import Path

import numpy as np

from discrete_robot.discrete.integrators import IntegratorKind
from discrete_robot.discrete.simulation import FixedStepSimulation
from discrete_robot.errors import InputError
from discrete_robot.model.description import load_model, package_config_path
from discrete_robot.model.dynamics import RigidBodySystem
from discrete_robot.model.urdf import to_urdf
from discrete_robot.plotting import new_figure, save_figure
from discrete_robot.validation import per_joint_values
from discrete_robot.variational.experiments import add_experiment_command

DEFAULT_MODEL = "planar_2link.yaml"


def add_commands(parser, common) -> None:
    sub = parser.add_subparsers(dest="command", required=True)
    simulate = sub.add_parser("simulate", parents=[common], help="simulate a robot model file and report energy drift",
                              description=__doc__.splitlines()[0])
    simulate.add_argument("--model", type=Path, default=None,
                          help=f"model YAML (docs/model_format.md); default: the package's config/{DEFAULT_MODEL}")
    simulate.add_argument("--integrator", choices=[k.value for k in IntegratorKind], default="discrete",
                          help="discrete (energy-conserving discrete model, default), variational (midpoint), rk45")
    simulate.add_argument("--dt", type=float, default=0.01, help="time step, s (default 0.01)")
    length = simulate.add_mutually_exclusive_group()
    length.add_argument("--steps", type=int, default=None, help="number of steps (default 1000)")
    length.add_argument("--duration", type=float, default=None, help="simulated time, s (instead of --steps)")
    simulate.add_argument("--q0", type=float, nargs="+", default=None,
                          help="initial joint positions, rad or m (default: the model's initial positions)")
    simulate.add_argument("--qd0", type=float, nargs="+", default=None,
                          help="initial joint velocities, rad/s or m/s (default: zero)")
    simulate.set_defaults(run=run_simulate)
    urdf = sub.add_parser("urdf", parents=[common], help="write the URDF of a model file (as robot_description)")
    urdf.add_argument("--model", type=Path, required=True, help="model YAML (docs/model_format.md)")
    urdf.add_argument("--output", type=Path, default=None, help="URDF file to write (default: print it)")
    urdf.set_defaults(run=run_urdf)
    add_experiment_command(sub, common)


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
