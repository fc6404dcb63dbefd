"""``python -m discrete_robot model info``: a user's first check of a robot file (YAML, URDF or xacro).

    python -m discrete_robot model info --model ur5_robot.urdf [--q 0 -1.2 1.2 0 0 0] [--json]

It lists the joints (name, type, lower, upper, velocity, effort, damping, friction, mimic leader), the links with
their masses, the total mass, the number of DOF and the joint names in model order; with ``--q``, also the mass
matrix, the gravity torques and every link frame's world pose at q. ``--json`` keys: joints, links, total_mass,
dof, joint_names, mass_matrix, gravity_torques, link_poses.
"""

from discrete_robot.cli import LazyCommand


def add_commands(parser, common) -> None:
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("info", parents=[common], help="joints, links, masses (and M(q), g(q), poses at --q)",
                       description=__doc__.splitlines()[0])
    p.add_argument("--model", required=True, help="model file: .yaml/.yml, .urdf, .xacro or .urdf.xacro")
    p.add_argument("--q", type=float, nargs="+", default=None, metavar="Q",
                   help="joint positions in model order (rad or m): adds mass_matrix, gravity_torques, link_poses")
    p.add_argument("--xacro-arg", action="append", default=[], metavar="NAME:=VALUE",
                   help="a xacro argument (repeatable)")
    p.add_argument("--floating-base", action="store_true", help="a URDF's root link is a free-floating base")
    p.set_defaults(run=LazyCommand("discrete_robot.model.commands:info_command"))
