"""The unified command line: ``python -m discrete_robot <capability> <command> ...``.

Each capability owns a module with ``add_commands(parser, common)`` that adds
its sub-commands to ``parser``; every sub-command parser takes ``common`` as a
parent (for ``--json`` and ``--output-dir``) and sets ``run=function`` where
``function(args)`` returns a JSON-serialisable result. Capability modules are
imported only when their capability is asked for, so ``--help`` stays fast and
one capability's dependencies never slow another down.
"""

import argparse
import dataclasses
import enum
import importlib
import json
import logging
import sys
from pathlib import Path

import numpy as np
import yaml

from discrete_robot.errors import DiscreteRobotError

CAPABILITIES = {
    "discrete": ("discrete_robot.discrete.cli", "discrete dynamic robot model and variational integrators"),
    "space": ("discrete_robot.space.cli", "multi-arm free-floating space robot"),
    "push": ("discrete_robot.pushing.cli", "quasistatic pushing prediction (minimum power)"),
    "plan": ("discrete_robot.planning.cli", "minimum-time and minimum-effort trajectory planning"),
    "experiment": ("discrete_robot.ros.cli", "recorded experiments against the live ROS 2 nodes"),
}


def to_jsonable(value):
    """Convert numpy arrays and scalars, enums, dataclasses and paths into plain JSON types."""
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return to_jsonable(value.tolist())
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, Path):
        return str(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return to_jsonable(dataclasses.asdict(value))
    return value


def lazy(target: str):
    """The command function ``module:function``, imported only when the command runs.

    Capability ``cli`` modules declare arguments only and point at their ``commands`` module through
    this, so building a parser (``--help``) imports no numerical library or compiled kernel.
    """
    module, name = target.split(":")

    def run(args):
        return getattr(importlib.import_module(module), name)(args)

    return run


def common_options() -> argparse.ArgumentParser:
    """Options shared by every sub-command: machine-readable output and where files go."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--json", action="store_true", help="print the result as one JSON document")
    common.add_argument("--output-dir", type=Path, default=Path("results"),
                        help="folder for plots and data files (default: results/)")
    common.add_argument("-v", "--verbose", action="store_true", help="log progress to stderr")
    return common


def build_parser(capability: str | None) -> argparse.ArgumentParser:
    """The argument parser, with the sub-commands of ``capability`` loaded."""
    parser = argparse.ArgumentParser(prog="python -m discrete_robot",
                                     description="discrete_robot: robot dynamics, space robots, pushing and planning")
    capabilities = parser.add_subparsers(dest="capability", metavar="capability", required=True)
    common = common_options()
    for name, (module, summary) in CAPABILITIES.items():
        sub = capabilities.add_parser(name, help=summary, description=summary)
        if name == capability:
            importlib.import_module(module).add_commands(sub, common)
    return parser


def render(result, as_json: bool) -> str:
    """Text for the terminal: one JSON document, or the same data as readable YAML; text as it is."""
    if isinstance(result, str):
        return result.rstrip()
    plain = to_jsonable(result)
    if as_json:
        return json.dumps(plain)
    return yaml.safe_dump(plain, sort_keys=False, default_flow_style=None, width=100).rstrip()


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    capability = next((a for a in argv if not a.startswith("-")), None)
    parser = build_parser(capability if capability in CAPABILITIES else None)
    args = parser.parse_args(argv)
    if not hasattr(args, "run"):
        parser.parse_args([args.capability, "--help"])
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")
    try:
        result = args.run(args)
    except DiscreteRobotError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if result is not None:
        print(render(result, args.json))
    # a command whose document reports failure (an experiment that missed its goal) fails too
    return 1 if isinstance(result, dict) and result.get("success") is False else 0
