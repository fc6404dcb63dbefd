"""The sweep spec (YAML): which experiment, which inputs are fixed, gridded or drawn, and how cases run.

    experiment: push-to-pose                 # a name of discrete_robot.sweep.experiments.EXPERIMENTS
    seed: 3                                  # default 0
    samples: 4                               # draws of the random inputs (default 1)
    fixed: {goal: [0.5, 0.06, 0.5]}          # input name -> value
    grid: {contact_friction: [0.2, 0.4]}     # input name -> values: every combination
    random: {support_friction: {uniform: [0.3, 0.6]}}   # uniform [lo, hi] | normal [mean, sd] | choice [...]
    case_timeout: 300                        # s of computation per case (default 300)
    batch: 1                                 # most cases per Ray task (default: the experiment's)
    retries: 1                               # re-runs of a task whose worker died (default 1)

Every key and value is checked here, before anything runs; a bad one raises InputError with one line naming
it (``random.support_friction: uniform bounds must satisfy 0 <= lo <= hi, got [-1.0, 0.5]``). Inputs are
named as the experiment's command-line options with ``_`` for ``-``; what each accepts is its :class:`Input`.
A ``normal`` draw is truncated to the input's range (drawn by the inverse CDF of the truncated law, so a draw
is one uniform number whatever the bounds).
"""

import hashlib
import json
import math
import reprlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from discrete_robot.config_files import load_yaml
from discrete_robot.errors import InputError
from discrete_robot.validation import finite_scalar, finite_vector, one_of, whole_number

KEYS = ("experiment", "seed", "samples", "fixed", "grid", "random", "case_timeout", "batch", "retries")
DISTRIBUTIONS = ("uniform", "normal", "choice")
#: the most cases one spec may make (the grid's and samples' product is checked before any case is built)
MAX_CASES = 1_000_000
DEFAULT_CASE_TIMEOUT = 300.0
#: one input kind per way a value is checked and stored (a Parquet column type each: sweep.results)
KINDS = ("number", "integer", "boolean", "choice", "text", "vector", "matrix")
#: the default of an input the spec must give
REQUIRED = "required"
#: the largest spec seed (the draws' generator takes any whole number; a seed is 64 bits as elsewhere)
MAX_SEED = 2 ** 64 - 1
#: a value as a message shows it: nesting, long lists and texts cut short (one line of bounded length whatever
#: the spec holds)
_SHOWN = reprlib.Repr()
_SHOWN.maxlevel, _SHOWN.maxlist, _SHOWN.maxdict, _SHOWN.maxstring, _SHOWN.maxother = 3, 6, 6, 60, 60


def _shown(value) -> str:
    return _SHOWN.repr(value)


def number_list(value, what: str, size: int = 0) -> np.ndarray:
    """``value`` as a float vector when it is a list of ``size`` (0: any) finite numbers, or InputError naming
    ``what`` (a nested or ragged list included: numpy would raise on it, or build an object array)."""
    if not isinstance(value, list | tuple) or not all(
            isinstance(v, int | float | np.integer | np.floating) and not isinstance(v, bool) for v in value):
        raise InputError(f"{what}: expected a list of numbers, got {_shown(value)}")
    return finite_vector(value, size or len(value), what)


@dataclass(frozen=True)
class Input:
    """One input of an experiment: ``kind`` (KINDS), its default (None: the experiment fills it in from others,
    REQUIRED: the spec must give it), the range [low, high] of a number (of each entry of a vector or matrix),
    the length of a vector (0: any), the choices of a choice, and what it means (with units)."""

    name: str
    kind: str
    default: object = None
    help: str = ""
    low: float = -math.inf
    high: float = math.inf
    size: int = 0
    choices: tuple = ()

    def check(self, value, what: str):
        """``value`` in this input's plain Python type (floats for numbers, lists for vectors), or InputError
        naming ``what``."""
        if value is None and self.default is None:
            return None
        if self.kind == "number":
            if isinstance(value, bool):
                raise InputError(f"{what}: expected a number, got {_shown(value)}")
            return finite_scalar(value, what, self.low, self.high)
        if self.kind == "integer":
            return whole_number(value, what, self.low, self.high)
        if self.kind == "boolean":
            if not isinstance(value, bool):
                raise InputError(f"{what}: expected true or false, got {_shown(value)}")
            return value
        if self.kind == "choice":
            return one_of(value, self.choices, what)
        if self.kind == "text":
            if not isinstance(value, str) or not value:
                raise InputError(f"{what}: expected a non-empty text, got {_shown(value)}")
            return value
        if self.kind == "vector":
            return self._vector(value, what, self.size)
        rows = value if isinstance(value, list | tuple) else None
        if not rows or len(rows) < 2:
            raise InputError(f"{what}: expected a list of at least 2 rows of numbers, got {_shown(value)}")
        checked = [self._vector(row, f"{what}[{k}]", len(rows[0]) if isinstance(rows[0], list | tuple) else 0)
                   for k, row in enumerate(rows)]
        return checked

    def _vector(self, value, what: str, size: int) -> list[float]:
        array = number_list(value, what, size)
        if array.size and not (np.all(array >= self.low) and np.all(array <= self.high)):
            raise InputError(f"{what}: every value must be in [{self.low:g}, {self.high:g}], got {array.tolist()}")
        return [float(v) for v in array]


@dataclass(frozen=True)
class Distribution:
    """A random input: ``kind`` uniform (lo, hi), normal (mean, sd; truncated to [low, high]) or choice (values)."""

    kind: str
    values: tuple
    low: float = -math.inf
    high: float = math.inf

    def draw(self, rng: np.random.Generator):
        u = rng.random()
        if self.kind == "uniform":
            lo, hi = self.values
            return float(lo + (hi - lo) * u)
        if self.kind == "normal":
            mean, sd = self.values
            if sd == 0.0:
                return float(mean)
            from scipy.stats import truncnorm

            a, b = (self.low - mean) / sd, (self.high - mean) / sd
            return float(np.clip(truncnorm.ppf(u, a, b, loc=mean, scale=sd), self.low, self.high))
        return self.values[min(int(u * len(self.values)), len(self.values) - 1)]


@dataclass(frozen=True)
class Spec:
    """A checked spec (module docstring); ``raw`` is the mapping it was read from (kept with the results)."""

    experiment: str
    seed: int
    samples: int
    fixed: dict
    grid: dict
    random: dict
    case_timeout: float
    batch: int
    retries: int
    raw: dict = field(default_factory=dict)

    def section(self, name: str) -> str:
        """Where input ``name`` comes from: fixed, grid, random, or default."""
        return next((s for s in ("fixed", "grid", "random") if name in getattr(self, s)), "default")

    @property
    def case_count(self) -> int:
        return self.samples * math.prod(len(values) for values in self.grid.values())


def spec_digest(raw: dict) -> str:
    """The content hash of a spec mapping (SHA-256 of its canonical JSON: sorted keys, plain types), which
    ``--resume`` compares: the same mapping whatever its YAML formatting, comments or key order, and any other
    value (``3`` against ``3.0``, a default written out) another spec."""
    from discrete_robot.cli import to_jsonable

    canonical = json.dumps(to_jsonable(raw), sort_keys=True, separators=(",", ":"), default=repr)
    return hashlib.sha256(canonical.encode()).hexdigest()


def spec_text(raw: dict) -> str:
    """A spec mapping as the YAML kept with its results (``DIR/spec.yaml``), plain types only."""
    import yaml

    from discrete_robot.cli import to_jsonable

    return yaml.safe_dump(to_jsonable(raw), sort_keys=False)


def read_spec(path) -> dict:
    """The spec file's mapping, read as every start-up file is (:func:`discrete_robot.config_files.load_yaml`: a
    regular file of at most 10 MB, nested at most 64 deep, no YAML aliases; ModelError naming the file), or
    InputError when it is not a mapping."""
    path = Path(path)
    raw = load_yaml(path, "spec")
    if not isinstance(raw, dict):
        raise InputError(f"spec {path}: expected a mapping with experiment, fixed, grid, random, ...")
    return raw


def _mapping(raw: dict, key: str) -> dict:
    value = raw.get(key) or {}
    if not isinstance(value, dict):
        raise InputError(f"{key}: expected a mapping of input names to values, got {_shown(value)}")
    return value


def _input(inputs: dict, section: str, name, experiment: str) -> Input:
    if name not in inputs:
        raise InputError(f"{section}.{name}: not an input of {experiment} (inputs: {', '.join(inputs)})")
    return inputs[name]


def _distribution(spec: Input, raw, what: str) -> Distribution:
    if not isinstance(raw, dict) or len(raw) != 1:
        raise InputError(f"{what}: expected one of {{uniform: [lo, hi]}}, {{normal: [mean, sd]}}, "
                         f"{{choice: [values]}}, got {_shown(raw)}")
    (kind, values), = raw.items()
    one_of(kind, DISTRIBUTIONS, f"{what}: the distribution")
    if kind == "choice":
        if not isinstance(values, list) or not values:
            raise InputError(f"{what}: choice needs a non-empty list of values, got {_shown(values)}")
        return Distribution(kind, tuple(spec.check(v, f"{what}.choice[{k}]") for k, v in enumerate(values)))
    if spec.kind != "number":
        raise InputError(f"{what}: {kind} draws numbers; {spec.name} is a {spec.kind} (use choice)")
    pair = number_list(values, f"{what}.{kind}", 2)
    upper = f" <= {spec.high:g}" if math.isfinite(spec.high) else ""
    lower = f"{spec.low:g} <= " if math.isfinite(spec.low) else ""
    if kind == "uniform" and not spec.low <= pair[0] <= pair[1] <= spec.high:
        raise InputError(f"{what}: uniform bounds must satisfy {lower}lo <= hi{upper}, got {pair.tolist()}")
    if kind == "normal" and not (spec.low <= pair[0] <= spec.high and pair[1] >= 0.0):
        raise InputError(f"{what}: normal needs {lower}mean{upper} and sd >= 0, got {pair.tolist()}")
    return Distribution(kind, (float(pair[0]), float(pair[1])), spec.low, spec.high)


def parse_spec(raw: dict, experiments: dict) -> Spec:
    """Check every key of ``raw`` against the experiment it names (``experiments``: name -> Experiment with
    ``inputs`` and ``batch``); InputError naming the first bad key."""
    unknown = [key for key in raw if key not in KEYS]
    if unknown:
        raise InputError(f"{unknown[0]}: unknown spec key (keys: {', '.join(KEYS)})")
    if "experiment" not in raw:
        raise InputError(f"experiment: missing (one of {', '.join(experiments)})")
    experiment = experiments[one_of(raw["experiment"], tuple(experiments), "experiment")]
    inputs = {spec.name: spec for spec in experiment.inputs}
    fixed, grid, random = (_mapping(raw, key) for key in ("fixed", "grid", "random"))
    seen: dict[str, str] = {}
    for section, values in (("fixed", fixed), ("grid", grid), ("random", random)):
        for name in values:
            _input(inputs, section, name, experiment.name)
            if name in seen:
                raise InputError(f"{section}.{name}: also given in {seen[name]} (an input is fixed, gridded or "
                                 "drawn)")
            seen[name] = section
    missing = [spec.name for spec in experiment.inputs if spec.default == REQUIRED and spec.name not in seen]
    if missing:
        raise InputError(f"fixed.{missing[0]}: {experiment.name} needs it (give it in fixed, grid or random)")
    checked_grid = {}
    for name, values in grid.items():
        if not isinstance(values, list) or not values:
            raise InputError(f"grid.{name}: expected a non-empty list of values, got {_shown(values)}")
        checked_grid[name] = [inputs[name].check(v, f"grid.{name}[{k}]") for k, v in enumerate(values)]
    spec = Spec(
        experiment=experiment.name,
        seed=whole_number(raw.get("seed", 0), "seed", 0, MAX_SEED),
        samples=whole_number(raw.get("samples", 1), "samples", 1, MAX_CASES),
        fixed={name: inputs[name].check(v, f"fixed.{name}") for name, v in fixed.items()},
        grid=checked_grid,
        random={name: _distribution(inputs[name], v, f"random.{name}") for name, v in random.items()},
        case_timeout=finite_scalar(raw.get("case_timeout", DEFAULT_CASE_TIMEOUT), "case_timeout", 1e-3, 1e7),
        batch=whole_number(raw.get("batch", experiment.batch), "batch", 1, 100_000),
        retries=whole_number(raw.get("retries", 1), "retries", 0, 10),
        raw=raw)
    if spec.case_count > MAX_CASES:
        raise InputError(f"samples: {spec.samples} samples x {spec.case_count // spec.samples} grid combinations "
                         f"make {spec.case_count} cases, more than {MAX_CASES}")
    return spec
