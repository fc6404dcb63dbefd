"""The unified command line: ``python -m discrete_robot <capability> <command> ...``.

Each capability owns a module with ``add_commands(parser, common)`` that adds
its sub-commands to ``parser``; every sub-command parser takes ``common`` as a
parent (for ``--json`` and ``--output-dir``) and sets ``run=function`` where
``function(args)`` returns a JSON-serialisable result. Capability modules are
imported only when their capability is asked for, so ``--help`` stays fast and
one capability's dependencies never slow another down.

Quiet by default: a command prints a summary of at most :data:`SUMMARY_LINES` lines (its own text when it
returns a :class:`Report`, else its document with long arrays reduced to their size and range); the whole
document is printed by ``--json`` and, when the summary left something out, written to
``<output-dir>/<capability>_<command>.json``.
"""

import argparse
import dataclasses
import enum
import importlib
import json
import logging
import re
import sys
from pathlib import Path

import numpy as np
import yaml

from discrete_robot.errors import DiscreteRobotError

CAPABILITIES = {
    "model": ("discrete_robot.model.cli", "robot model files (YAML, URDF, xacro): joints, links, M(q), g(q)"),
    "discrete": ("discrete_robot.discrete.cli", "discrete dynamic robot model and variational integrators"),
    "space": ("discrete_robot.space.cli", "multi-arm free-floating space robot"),
    "push": ("discrete_robot.pushing.cli", "quasistatic pushing prediction (minimum power)"),
    "plan": ("discrete_robot.planning.cli", "minimum-time and minimum-effort trajectory planning"),
    "experiment": ("discrete_robot.ros.cli", "recorded experiments against the live ROS 2 nodes"),
    "sweep": ("discrete_robot.sweep.cli", "experiment sweeps on Ray: many cases, one table of results"),
}


#: most lines a command prints without --json
SUMMARY_LINES = 20
#: a list longer than this is summarised by its size and range
SHORT_LIST = 6
#: a value that starts with '-' but is data: a comma-separated list of numbers (argparse itself reads one plain
#: negative number as a value, also inside nargs="+")
_NEGATIVE_LIST = re.compile(r"-\.?\d[\d.eE+\-]*(,[\d.eE+\-]*)+")


class Report(dict):
    """A command's whole document (``--json``, files) with the short text a person reads in the terminal."""

    def __init__(self, document: dict, text: str):
        super().__init__(document)
        self.text = text


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


class LazyCommand:
    """The command function ``module:function``, imported only when the command is chosen (:func:`parse`).

    Capability ``cli`` modules declare arguments only and point at their ``commands`` module through
    this, so building a parser (``--help``) imports no numerical library or compiled kernel.
    """

    def __init__(self, target: str):
        self.module, self.name = target.split(":")

    def load(self):
        return getattr(importlib.import_module(self.module), self.name)

    def __call__(self, args):
        return self.load()(args)


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


def _abridged(value, depth: int):
    """``value`` with every list longer than :data:`SHORT_LIST` (or nested) replaced by its size and range, and
    what lies deeper than ``depth`` levels by its size."""
    if isinstance(value, dict):
        if depth <= 0:
            return f"{{{len(value)} entries}}"
        return {k: _abridged(v, depth - 1) for k, v in value.items()}
    if isinstance(value, list):
        array = np.asarray(value, dtype=object)
        numeric = array.size > 0 and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in array.flat)
        if numeric and (array.ndim > 1 or array.size > SHORT_LIST):
            finite = np.asarray(array, dtype=float)
            shape = "x".join(str(n) for n in array.shape)
            return f"[{shape} values, {np.nanmin(finite):.4g} .. {np.nanmax(finite):.4g}]"
        if len(value) > SHORT_LIST or (depth <= 0 and not numeric):
            return f"[{len(value)} items]"
        return [_abridged(v, depth - 1) for v in value]
    return value


def render(result, as_json: bool) -> str:
    """Text for the terminal: one JSON document; a Report's own text; otherwise the document as YAML, long
    arrays reduced to their size and range, at most SUMMARY_LINES lines."""
    return rendered(result, as_json)[0]


def rendered(result, as_json: bool) -> tuple[str, bool]:
    """:func:`render`'s text, and whether it holds the whole result."""
    if isinstance(result, str):
        return result.rstrip(), True
    plain = to_jsonable(result)
    if as_json:
        return json.dumps(plain), True
    if isinstance(result, Report):
        return result.text.rstrip(), False
    full = yaml.safe_dump(plain, sort_keys=False, default_flow_style=None, width=100).rstrip()
    if len(full.splitlines()) <= SUMMARY_LINES:
        return full, True
    for depth in (4, 3, 2, 1):      # the deepest summary that fits
        lines = yaml.safe_dump(_abridged(plain, depth), sort_keys=False, default_flow_style=None,
                               width=100).splitlines()
        if len(lines) <= SUMMARY_LINES:
            break
    if len(lines) > SUMMARY_LINES:
        lines = lines[:SUMMARY_LINES - 1] + [f"... ({len(lines) - SUMMARY_LINES + 1} more lines)"]
    return "\n".join(lines), False


def joined_negative_values(argv: list[str]) -> list[str]:
    """``--option -0.05,-0.05`` as ``--option=-0.05,-0.05``: argparse reads a value that starts with '-' as an
    option unless it is one plain negative number."""
    joined = []
    for token in argv:
        if (joined and _NEGATIVE_LIST.fullmatch(token) and joined[-1].startswith("--")
                and "=" not in joined[-1]):
            joined[-1] = f"{joined[-1]}={token}"
        else:
            joined.append(token)
    return joined


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line read, and the chosen command's modules imported: ``run(args)`` then runs it."""
    argv = joined_negative_values(sys.argv[1:] if argv is None else argv)
    words = [a for a in argv if not a.startswith("-")]
    capability = words[0] if words else None
    parser = build_parser(capability if capability in CAPABILITIES else None)
    args = parser.parse_args(argv)
    if not hasattr(args, "run"):
        parser.parse_args([args.capability, "--help"])
    if isinstance(args.run, LazyCommand):
        args.run = args.run.load()
    args.words = words[:2]      # names the document's file
    return args


def main(argv: list[str] | None = None) -> int:
    return run(parse(argv))


def run(args: argparse.Namespace) -> int:
    """Run the parsed command, print its summary and write its document; the process status."""
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")
    try:
        result = args.run(args)
    except DiscreteRobotError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if result is not None:
        text, whole = rendered(result, args.json)
        if not whole:
            path = Path(args.output_dir) / f"{'_'.join(args.words)}.json"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(to_jsonable(result), indent=1))
            text += f"\nfull result: {path} (or --json)"
        print(text)
    global interrupted_run
    interrupted_run = isinstance(result, dict) and bool(result.get("interrupted"))
    # a command whose document reports failure (an experiment that missed its goal) fails too
    return 1 if isinstance(result, dict) and result.get("success") is False else 0


#: the last :func:`main` ended on a Ctrl-C with its summary written (``python -m discrete_robot`` then exits at once)
interrupted_run = False
