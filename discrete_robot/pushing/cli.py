"""``python -m discrete_robot push predict|simulate --request '{...}'`` (or ``--request @request.json``).

The request holds the PredictPush / SimulatePush service fields (see
discrete_robot_interfaces/srv and docs/pushing.md); the answer is the
service's response fields. ``simulate`` also plots the object's outline over
time, the finger's path and the centers of rotation.
"""

from discrete_robot.cli import LazyCommand

EXAMPLE = ('{"footprint": [[-0.05, -0.05], [0.05, -0.05], [0.05, 0.05], [-0.05, 0.05]], "normal_force": 2.0, '
           '"support_friction": 0.4, "contact_friction": 0.3, "contact_point": [-0.05, 0.02], '
           '"pusher_velocity": [0.1, 0.0]}')


def add_commands(parser, common) -> None:
    sub = parser.add_subparsers(dest="command", required=True)
    for name, help_text in (("predict", "object twist, center of rotation, contact mode and force"),
                            ("simulate", "object poses while the finger follows a path (and a plot)")):
        command = sub.add_parser(name, parents=[common], help=help_text, description=help_text)
        command.add_argument("--request", required=True,
                             help=f"the service's request fields as JSON, or @file.json (e.g. '{EXAMPLE}')")
        command.add_argument("--grid-points", type=int, default=0,
                             help="discretise a uniform pressure into about this many grid points "
                                  "(default 0: exact integration over the footprint)")
        if name == "simulate":
            command.add_argument("--default-time-step", type=float, default=0.01,
                                 help="time step (s) used when the request's time_step is 0 (default 0.01)")
        command.set_defaults(run=LazyCommand(f"discrete_robot.pushing.commands:{name}"))
