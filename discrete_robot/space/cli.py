"""``python -m discrete_robot space simulate``: the free-floating multi-arm robot over time.

    python -m discrete_robot space simulate --config config/space_robot_dual_arm.yaml \\
        --duration 10 --dt 0.01 --times 0,5,10 [--force BODY:X,Y,Z:FX,FY,FZ:FRAME ...] [--plot] --json

Each ``--force`` is a constant force on BODY at the point X,Y,Z of BODY's frame, its components in
FRAME (``body`` or ``world``); any ``--force`` replaces the default loads (the paper's scenario).
"""

import numpy as np

from discrete_robot.errors import InputError
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
    robot = load_space_robot(args.config)
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


def add_commands(parser, common) -> None:
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("simulate", parents=[common], help="simulate the space robot (default: the paper's scenario)",
                       description=__doc__.splitlines()[0])
    p.add_argument("--config", default=None,
                   help="model file (docs/model_format.md, floating base); default: the shipped "
                        "config/space_robot_dual_arm.yaml (the paper's Table 1 robot)")
    p.add_argument("--duration", type=float, default=10.0, help="simulated time, s (default 10)")
    p.add_argument("--dt", type=float, default=0.01, help="largest integration step, s (default 0.01)")
    p.add_argument("--times", default=None,
                   help="output times t1,t2,... in s (default: every whole second from 0 to the duration)")
    p.add_argument("--force", action="append", default=[], metavar="BODY:X,Y,Z:FX,FY,FZ:FRAME",
                   help="constant force (N) on BODY at point X,Y,Z (m, BODY frame), components in FRAME "
                        "body|world; repeatable; replaces the paper's default loads")
    p.add_argument("--plot", action="store_true",
                   help="write CoM displacement and attitude figures of every body to --output-dir")
    p.set_defaults(run=simulate_command)
