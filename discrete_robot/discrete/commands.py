"""Implementations of the ``discrete`` commands (their arguments: :mod:`.cli`, which imports this module only
when a command runs, so ``--help`` loads no numerical module)."""

import time

import numpy as np

from discrete_robot.discrete.cli import DEFAULT_MODEL
from discrete_robot.discrete.dissipation import Dissipation
from discrete_robot.discrete.simulation import FixedStepSimulation
from discrete_robot.errors import InputError
from discrete_robot.model.description import load_model, package_config_path
from discrete_robot.model.dynamics import RigidBodySystem
from discrete_robot.model.lagrangian import kinetic_energy
from discrete_robot.model.urdf import to_urdf
from discrete_robot.plotting import new_figure, save_figure
from discrete_robot.validation import per_joint_values, positive_step

#: the most points `discrete simulate` records (a longer run is sampled every ceil(steps / RECORDS) steps)
RECORDS = 2000


def run_urdf(args):
    """The URDF text (printed as it is), or a summary when it was written to --output."""
    text = to_urdf(load_model(args.model))
    if args.output is None:
        return text
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(text)
    return {"model": args.model, "urdf": args.output}


def run_simulate(args) -> dict:
    """Simulate the model unforced as discrete_robot_node does: its position limits as plastic stops and its joint
    damping and friction, unless ``--no-limits``.

    Energy balance: E_k + W_k + S_k = E_0, with W_k the work of the dissipative forces (the discrete model
    applies them at each (sub-)step's mean velocity v̄ = Δq/h, :mod:`.dissipation`, so W grows by −h F(v̄)·v̄
    over it, exactly, and the simulation sums it; for the other integrators the same sum over whole steps) and
    S_k the energy lost in the steps that ended at a stop. The reported drift is max_k |E_k + W_k + S_k − E_0| / E_s:
    for the discrete model, round-off. The scale E_s is the larger of |E_0| and the peak kinetic energy, the
    energy the motion exchanges: E_0 alone is zero for an arm released at rest where V = 0, which made the ratio
    meaningless.
    """
    from tqdm import tqdm

    model = load_model(args.model if args.model is not None else package_config_path(DEFAULT_MODEL))
    system = RigidBodySystem(model)
    positive_step(args.dt, "--dt")
    if args.duration is not None:
        positive_step(args.duration, "--duration")
        steps = int(np.ceil(args.duration / args.dt - 1e-9))
    else:
        steps = 1000 if args.steps is None else args.steps
    if steps < 1:
        raise InputError(f"--steps must be at least 1, got {steps}")
    q = per_joint_values(args.q0, model.initial_positions, "--q0", model.joint_names)
    qd = per_joint_values(args.qd0, np.zeros(model.dof), "--qd0", model.joint_names)
    limited = not args.no_limits
    dissipation = Dissipation.from_model(model) if limited else None
    simulation = FixedStepSimulation(system, args.integrator, args.dt, q, qd,
                                     model.lower if limited else None, model.upper if limited else None,
                                     dissipation, model.joint_names, elastic_stops=args.elastic_stops)
    tau = np.zeros(model.dof)
    # held torques: chunks of `every` steps are compiled runs (held_steps), the state recorded between chunks;
    # an integrator that does not account its dissipation has it summed here, from each step's mean velocity
    every = 1 if dissipation is not None and simulation.dissipated_energy is None else -(-steps // RECORDS)
    ends = np.minimum(np.arange(every, steps + every, every), steps)
    records = ends.shape[0]
    energy, dissipated = np.empty(records + 1), np.zeros(records + 1)
    energy[0] = simulation.energy()
    stop_energy, stops_kinetic = np.zeros(records + 1), 0.0
    peak_speed = np.abs(simulation.qd)
    peak_kinetic = kinetic_energy(system, simulation.q, simulation.qd)
    start, done = time.process_time(), 0
    for k, end in enumerate(tqdm(ends, desc="simulate", unit="record", disable=None, leave=False)):
        before = simulation.q
        simulation.step(int(end - done), tau)
        done = end
        if dissipation is not None and simulation.dissipated_energy is not None:
            dissipated[k + 1] = simulation.dissipated_energy
        elif dissipation is not None:
            mean_velocity = (simulation.q - before) / args.dt
            dissipated[k + 1] = dissipated[k] - args.dt * float(dissipation.forces(mean_velocity) @ mean_velocity)
        else:
            dissipated[k + 1] = dissipated[k]
        energy[k + 1] = simulation.energy()
        # a chunk that ended a step at a stop: all the energy it lost beyond the dissipated work is the stop's (the
        # impact's kinetic energy and the potential energy of the position it was put back to)
        stopped = simulation.stop_energy > stops_kinetic
        stops_kinetic = simulation.stop_energy
        stop_energy[k + 1] = stop_energy[k] + (
            energy[k] - energy[k + 1] - (dissipated[k + 1] - dissipated[k]) if stopped else 0.0)
        np.maximum(peak_speed, np.abs(simulation.qd), out=peak_speed)
        peak_kinetic = max(peak_kinetic, kinetic_energy(system, simulation.q, simulation.qd))
    q, qd = simulation.q, simulation.qd
    at_lower, at_upper = simulation.reached_lower, simulation.reached_upper
    cpu = time.process_time() - start
    t = np.concatenate(([0.0], ends)) * args.dt
    scale = max(abs(energy[0]), peak_kinetic, np.finfo(float).tiny)
    balance = (energy + dissipated + stop_energy - energy[0]) / scale
    fig, ax = new_figure()
    ax.plot(t, balance, label="(E + W_dissipated + E_stops − E₀) / E_s")
    if limited:
        ax.plot(t, (energy - energy[0]) / scale, "--", label="(E − E₀) / E_s")
    ax.set_xlabel("t [s]")
    ax.set_ylabel("relative energy")
    ax.set_title(f"{model.name}: {args.integrator}, h = {args.dt} s" + ("" if limited else ", no limits"))
    ax.legend(fontsize=8)
    ax.grid(True)
    plot = save_figure(fig, args.output_dir, f"simulate_{model.name}_{args.integrator}")
    names = list(model.joint_names)
    limits_reached = {names[i]: ("lower and upper" if at_lower[i] and at_upper[i] else
                                 "lower" if at_lower[i] else "upper")
                      for i in np.flatnonzero(at_lower | at_upper)}
    over_speed = {names[i]: round(float(peak_speed[i]), 3)
                  for i in np.flatnonzero(peak_speed > np.asarray(model.velocity_limits, float))}
    return {"model": model.name, "integrator": args.integrator, "dt": args.dt, "steps": steps,
            "duration": float(t[-1]), "limits": "position stops, damping and friction as the node" if limited
            else "none (--no-limits)", "joint_names": names, "q": q, "qd": qd,
            "position_limits_reached": limits_reached,
            "velocity_limits_exceeded_rad_s": over_speed,
            "energy_initial": float(energy[0]), "energy_final": float(energy[-1]),
            "energy_dissipated_J": float(dissipated[-1]), "energy_removed_by_joint_stops_J": float(stop_energy[-1]),
            "max_relative_energy_drift": float(np.max(np.abs(balance))), "recorded_every_steps": int(every),
            "cpu_seconds": cpu, "plot": plot}
