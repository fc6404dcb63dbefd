"""``python -m discrete_robot sweep run SPEC.yaml --output-dir DIR [--workers N] [--address ADDR] [--resume]``.

Arguments only: the command is :func:`discrete_robot.sweep.commands.run`, imported when it runs (Ray and
pyarrow later still, when cases are to be computed).
"""

from pathlib import Path

from discrete_robot.cli import LazyCommand


def add_commands(parser, common) -> None:
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", parents=[common], help="run a sweep spec on a local Ray instance or a cluster",
                         description="run the cases of a sweep spec (docs/sweeps.md); results in "
                                     "OUTPUT_DIR/results.parquet, summary.json and plots")
    run.add_argument("spec", type=Path, help="the sweep spec (YAML): experiment, seed, samples, fixed, grid, random")
    run.add_argument("--workers", type=int, default=None,
                     help="worker processes (default: every core, or every CPU of the --address cluster; a local "
                          "instance runs at most one per core)")
    run.add_argument("--address", default=None,
                     help="HOST:PORT of an existing Ray cluster (`ray start --head` on one machine, `ray start "
                          "--address` on the others), e.g. 10.0.0.1:6379 (default: a local Ray instance)")
    run.add_argument("--resume", action="store_true",
                     help="keep the cases already ok in OUTPUT_DIR/results.parquet and compute the others (the "
                          "same spec only: compared with OUTPUT_DIR/spec.yaml by content hash)")
    run.add_argument("--no-progress", dest="progress", action="store_false", help="no progress bar on stderr")
    run.set_defaults(run=LazyCommand("discrete_robot.sweep.commands:run"))
