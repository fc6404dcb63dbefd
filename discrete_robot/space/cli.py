"""``python -m discrete_robot space simulate``: the free-floating multi-arm robot over time.

    python -m discrete_robot space simulate --config config/space_robot_dual_arm.yaml \\
        --duration 10 --dt 0.01 --times 0,5,10 [--force BODY:X,Y,Z:FX,FY,FZ:FRAME ...] [--plot] --json

Each ``--force`` is a constant force on BODY at the point X,Y,Z of BODY's frame, its components in
FRAME (``body`` or ``world``); any ``--force`` replaces the default loads (the paper's scenario).
"""

from discrete_robot.cli import LazyCommand


def add_commands(parser, common) -> None:
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("simulate", parents=[common], help="simulate the space robot (default: the paper's scenario)",
                       description=__doc__.splitlines()[0])
    p.add_argument("--config", default=None,
                   help="model file: YAML (docs/model_format.md, floating base), or URDF/xacro whose root link is "
                        "the floating base (zero gravity); default: the shipped config/space_robot_dual_arm.yaml "
                        "(the paper's Table 1 robot)")
    p.add_argument("--duration", type=float, default=10.0, help="simulated time, s (default 10)")
    p.add_argument("--dt", type=float, default=0.01, help="largest integration step, s (default 0.01)")
    p.add_argument("--times", default=None,
                   help="output times t1,t2,... in s (default: every whole second from 0 to the duration)")
    p.add_argument("--force", action="append", default=[], metavar="BODY:X,Y,Z:FX,FY,FZ:FRAME",
                   help="constant force (N) on BODY at point X,Y,Z (m, BODY frame), components in FRAME "
                        "body|world; repeatable; replaces the paper's default loads")
    p.add_argument("--plot", action="store_true",
                   help="write CoM displacement and attitude figures of every body to --output-dir")
    p.set_defaults(run=LazyCommand("discrete_robot.space.commands:simulate_command"))
