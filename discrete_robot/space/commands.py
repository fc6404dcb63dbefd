"""Implementations of the ``space`` commands (their arguments: :mod:`.cli`, which imports this module only
when a command runs, so ``--help`` loads no numerical module)."""

import numpy as np

from discrete_robot.errors import InputError
from discrete_robot.model.description import load_model
from discrete_robot.space.robot import SpaceRobot
from discrete_robot.space.scenario import (
    load_record,
    load_space_robot,
    parse_force,
    parse_times,
    plot_scenario,
    run_scenario,
    sample_record,
)

PLOT_SAMPLES = 201  # points per curve of the figures


def simulate_command(args) -> dict:
    if not (np.isfinite(args.duration) and args.duration > 0.0):
        raise InputError(f"--duration must be a positive finite number of seconds, got {args.duration}")
    # a URDF's root link is the free-floating base (a YAML file says so itself)
    robot = SpaceRobot.from_model(load_model(args.config, floating_base=True)) if args.config else load_space_robot()
    loads = [parse_force(text, robot) for text in args.force] if args.force else None
    times = parse_times(args.times) if args.times else np.arange(int(np.floor(args.duration)) + 1, dtype=float)
    run_times = times
    if args.plot:
        run_times = np.union1d(times, np.linspace(0.0, args.duration, PLOT_SAMPLES))
    result = run_scenario(robot, args.duration, args.dt, run_times, loads)
    wanted = set(np.unique(times).tolist())
    output = {
        "robot": robot.name,
        "loads": [load_record(load) for load in result.loads],
        "samples": [sample_record(robot, s) for s in result.samples if s.time in wanted],
    }
    if args.plot:
        output["plots"] = plot_scenario(result, args.output_dir)
    return output
