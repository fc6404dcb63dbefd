"""``python -m discrete_robot plan ...``: minimum-time and minimum-effort planning from the command line.

    python -m discrete_robot plan min-time --model config/planar_2link.yaml --waypoints 0,0 1.5708,0.7854 \\
        --max-effort 20,10 --grid-points 100 --json
    python -m discrete_robot plan min-effort --system spherical-pendulum --duration 1 --h 0.033 --json
    python -m discrete_robot plan min-effort --model config/planar_2link.yaml --waypoints 0,0 1.5708,0.7854 \\
        --duration 1.5 --h 0.05 --json
    python -m discrete_robot plan retime --model ur5.urdf --trajectory path.json --effort-scale 0.9 --json
    python -m discrete_robot plan convergence --model config/planar_2link.yaml --waypoints 0,0 1.5708,0.7854 \\
        --max-effort 20,10 --grids 20,40,80,160,320 --json

Plots (PNG) go to --output-dir: for min-time the torques against their limits and the velocity profile,
for min-effort the controls and the states, for convergence the duration error against the grid.
"""

import argparse

from discrete_robot.cli import LazyCommand

DEFAULT_MODEL = "planar_2link.yaml"
SPHERICAL_PENDULUM = "spherical-pendulum"


def add_commands(parser, common) -> None:
    sub = parser.add_subparsers(dest="command", required=True)

    def model_options(p):
        p.add_argument("--model", default=None, help="robot model file (default: the shipped config/planar_2link.yaml)")
        p.add_argument("--waypoints", nargs="+", default=None, metavar="Q1,Q2,...",
                       help="joint positions, rad; first = start, last = goal (default: (0,0) -> (π/2, π/4))")
        p.add_argument("--max-effort", default=None, help="torque limits per joint, N m (default: the model file's)")
        p.add_argument("--max-velocity", default=None, help="velocity limits per joint, rad/s (default: the model's)")

    p = sub.add_parser("min-time", parents=[common], help="minimum-time path following on the discrete model")
    model_options(p)
    p.add_argument("--grid-points", type=int, default=100, help="path nodes over the whole path (default 100)")
    p.add_argument("--smooth", action="store_true",
                   help="pass interior waypoints without stopping (spline path, planned by the NLP)")
    p.add_argument("--nlp", action="store_true", help="use the generic SLSQP formulation instead of reachability")
    p.set_defaults(run=LazyCommand("discrete_robot.planning.commands:min_time_command"))

    p = sub.add_parser("min-effort", parents=[common],
                       help="fixed-time minimum-effort motion by DMOC (arms: IPOPT on the discrete model, with the "
                            "model's effort and velocity limits; and the Runge–Kutta comparison)")
    model_options(p)
    p.add_argument("--system", choices=["arm", SPHERICAL_PENDULUM], default="arm",
                   help="'arm' (the --model file) or the article's spherical pendulum swing-up")
    p.add_argument("--duration", type=float, default=1.0, help="motion time, s (default 1)")
    p.add_argument("--h", type=float, default=0.033, help="time step, s (default 0.033, the article's)")
    p.add_argument("--guess", choices=["line", "min_time"], default="line",
                   help="arms: DMOC's start guess, the straight line with gravity compensation (default) or the "
                        "minimum-time plan slowed to the duration")
    p.add_argument("--compare-rk", action=argparse.BooleanOptionalAction, default=None,
                   help="also solve the problem on a Runge–Kutta (Heun) discretisation with SLSQP (default: for the "
                        "spherical pendulum, the article's comparison; not for arms, where it does not converge on "
                        "the 6-joint arm)")
    p.set_defaults(run=LazyCommand("discrete_robot.planning.commands:min_effort_command"))

    p = sub.add_parser("retime", parents=[common],
                       help="retime a stack's joint path (JSON: joint_names, positions) for minimum time under the "
                            "model's limits, with its predicted execution")
    p.add_argument("--model", default=None, help="robot model file (default: the shipped config/planar_2link.yaml)")
    p.add_argument("--trajectory", required=True, metavar="FILE.json",
                   help='{"joint_names": [...], "positions": [[...], ...]}, any joint order; timing ignored')
    p.add_argument("--effort-scale", type=float, default=0.0,
                   help="fraction of the effort limits, in (0, 1]; 0 (default) = the largest of 1, 0.9, ..., 0.5 "
                        "whose predicted execution meets its tolerances; 1 = the true minimum time")
    p.add_argument("--velocity-scale", type=float, default=1.0, help="fraction of the velocity limits (default 1)")
    p.add_argument("--interpolation", choices=["spline", "blend"], default="spline",
                   help="the path through the points: not-a-knot cubic spline over a uniform parameter (toppra's, "
                        "default) or straight segments with circular blends (TOTG's, 0.1 rad deviation)")
    p.set_defaults(run=LazyCommand("discrete_robot.planning.commands:retime_command"))

    p = sub.add_parser("convergence", parents=[common],
                       help="min-time duration on refined grids against the continuous time optimum")
    model_options(p)
    p.add_argument("--grids", default="20,40,80,160,320", help="grid sizes (default 20,40,80,160,320)")
    p.set_defaults(run=LazyCommand("discrete_robot.planning.commands:convergence_command"))
