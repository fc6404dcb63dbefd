"""``python -m discrete_robot discrete <command>``: simulate a robot model file; the article's experiments.

``simulate`` runs a model (default: the package's planar_2link.yaml) unforced from an initial
state with the chosen integrator, as discrete_robot_node simulates it (position limits as stops, joint
damping and friction; ``--no-limits`` drops them), prints the final state, the limits reached and the
energy balance, and writes the energy plot ``simulate_<model>_<integrator>.png`` to the output folder.
``experiment`` runs :mod:`discrete_robot.variational.experiments`. The commands themselves are in :mod:`.commands`.
"""

from pathlib import Path

from discrete_robot.cli import LazyCommand
from discrete_robot.discrete import IntegratorKind
from discrete_robot.variational import ALL, Experiment

DEFAULT_MODEL = "planar_2link.yaml"


def add_commands(parser, common) -> None:
    sub = parser.add_subparsers(dest="command", required=True)
    simulate = sub.add_parser("simulate", parents=[common], help="simulate a robot model file and report energy drift",
                              description=__doc__.splitlines()[0])
    simulate.add_argument("--model", type=Path, default=None,
                          help=f"model YAML (docs/model_format.md); default: the package's config/{DEFAULT_MODEL}")
    simulate.add_argument("--integrator", choices=[k.value for k in IntegratorKind], default="discrete",
                          help="discrete (energy-conserving discrete model, default; discrete4 and discrete6: "
                          "composed to order 4 and 6), variational (midpoint), rk45")
    simulate.add_argument("--dt", type=float, default=0.01, help="time step, s (default 0.01)")
    length = simulate.add_mutually_exclusive_group()
    length.add_argument("--steps", type=int, default=None, help="number of steps (default 1000)")
    length.add_argument("--duration", type=float, default=None, help="simulated time, s (instead of --steps)")
    simulate.add_argument("--q0", type=float, nargs="+", default=None,
                          help="initial joint positions, rad or m (default: the model's initial positions)")
    simulate.add_argument("--qd0", type=float, nargs="+", default=None,
                          help="initial joint velocities, rad/s or m/s (default: zero)")
    simulate.add_argument("--no-limits", action="store_true",
                          help="no position stops, damping or friction (the node always has them)")
    simulate.add_argument("--elastic-stops", action="store_true",
                          help="position stops that reverse the joint (restitution 1, T + V kept) instead of "
                               "stopping it (plastic, the default)")
    simulate.set_defaults(run=LazyCommand("discrete_robot.discrete.commands:run_simulate"))
    urdf = sub.add_parser("urdf", parents=[common], help="write the URDF of a model file (as robot_description)")
    urdf.add_argument("--model", type=Path, required=True, help="model YAML (docs/model_format.md)")
    urdf.add_argument("--output", type=Path, default=None, help="URDF file to write (default: print it)")
    urdf.set_defaults(run=LazyCommand("discrete_robot.discrete.commands:run_urdf"))
    add_experiment_command(sub, common)


def add_experiment_command(subparsers, common) -> None:
    """Add ``experiment <name> [--duration S]`` to the ``discrete`` capability's sub-commands."""
    parser = subparsers.add_parser(
        "experiment", parents=[common],
        help="reproduce the variational-integrator examples of Lee, Leok & McClamroch against RK45",
        description="the variational-integrator examples of Lee, Leok & McClamroch against RK45 at equal CPU time")
    parser.add_argument("name", choices=[e.value for e in Experiment] + [ALL],
                        help="which example (all: every one in turn)")
    parser.add_argument("--duration", type=float, default=None,
                        help="simulated time instead of the article's (s; normalised units for the dumbbell)")
    parser.set_defaults(run=LazyCommand("discrete_robot.variational.experiments:run_experiment"))
