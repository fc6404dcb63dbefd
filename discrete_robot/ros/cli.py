"""``python -m discrete_robot experiment <name>``: recorded experiments against the live nodes.

With ``--start-bringup`` (the default for ``demo``) the composed bringup is
started first and stopped (Ctrl-C semantics) at the end; otherwise the nodes
must already run (a launch file or ``bringup``).
"""

import logging
import time
from pathlib import Path

from discrete_robot.errors import InputError

logger = logging.getLogger(__name__)

DEMO_OVERRIDES = {"apply_paper_loads": True}  # the space robot runs the paper's scenario in the demo
#: the experiments (run by :mod:`.experiments`), here so that ``--help`` imports no ROS module
SUMMARIES = {"plan-execute": "min-time plan executed on the discrete model",
             "space": "space robot under the paper's loads",
             "push-sweep": "push simulation over contact offsets"}
ALL = list(SUMMARIES)


def add_commands(parser, common) -> None:
    names = parser.add_subparsers(dest="name", metavar="name", required=True)
    summaries = {**SUMMARIES, "demo": "start the composed bringup, run every experiment, stop"}
    for name, summary in summaries.items():
        sub = names.add_parser(name, parents=[common], help=summary, description=summary)
        sub.add_argument("--start-bringup", action="store_true",
                         help="start the composed bringup for the run (demo always does)")
        sub.add_argument("--no-record", action="store_true", help="do not write an MCAP file")
        sub.set_defaults(run=run_experiments)


def run_experiments(args) -> dict:
    from discrete_robot.ros.processes import NodeProcess, ament_environment

    ament_environment()
    from discrete_robot.ros.experiments import run

    names = ALL if args.name == "demo" else [args.name]
    output_dir = Path(args.output_dir)
    bringup = None
    if args.name == "demo" or args.start_bringup:
        bringup = NodeProcess("bringup", output_dir / "logs", params=DEMO_OVERRIDES)
        time.sleep(1.0)
        if not bringup.alive():
            raise InputError(f"bringup exited at start:\n{bringup.log()[-2000:]}")
    try:
        summary = run(names, output_dir, record=not args.no_record)
    finally:
        if bringup is not None:
            status = bringup.stop(timeout=5.0)
            logger.info("bringup stopped with status %s", status)
    summary["next_steps"] = {
        "plots": sorted(str(p) for p in output_dir.glob("*.png")),
        "foxglove": f"open {summary.get('mcap', {}).get('path', '')} in Foxglove Studio (File > Open local file)",
        "rviz": "with a system ROS 2: ros2 bag play <mcap> & ros2 launch discrete_robot bringup.launch.py",
    }
    return summary
