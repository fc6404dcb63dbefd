"""The cases of a spec: ``samples`` draws of the random inputs times every combination of the grid.

A case's inputs are complete (every input of the experiment, defaults filled in by the experiment's
``resolve``), so its id, the first 16 hex digits of SHA-256 over the experiment, the inputs (canonical JSON:
sorted keys, shortest round-trip floats), the spec seed and the sample index, names the same computation on
any machine; its seed is the first 63 bits of SHA-256 over (spec seed, case id). Neither depends on the number
of workers, the order in which cases run, or what else the spec holds. Random inputs of sample k are drawn
from a generator seeded by (spec seed, k, the input's name): every grid combination of a sample gets the same
draws (common random numbers, so a grid's cells compare paired), and adding an input leaves the others'
draws as they were.
"""

import hashlib
import itertools
import json
import re
from dataclasses import dataclass

import numpy as np

from discrete_robot.errors import InputError
from discrete_robot.sweep.spec import Spec


@dataclass(frozen=True)
class Case:
    """One computation: its id, sample index, seed and complete inputs (input name -> plain value)."""

    id: str
    sample: int
    seed: int
    inputs: dict


def _digest(text: str) -> bytes:
    return hashlib.sha256(text.encode()).digest()


def case_id(experiment: str, inputs: dict, seed: int, sample: int) -> str:
    """The stable id of a case (module docstring)."""
    canonical = json.dumps({"experiment": experiment, "inputs": inputs, "seed": seed, "sample": sample},
                           sort_keys=True, separators=(",", ":"), allow_nan=False)
    return _digest(canonical).hex()[:16]


def case_seed(spec_seed: int, case: str) -> int:
    """The case's own seed, from the spec seed and the case id (module docstring)."""
    return int.from_bytes(_digest(f"{spec_seed}:{case}")[:8], "big") >> 1


def draw_generator(spec_seed: int, sample: int, name: str) -> np.random.Generator:
    """The generator of input ``name``'s draw in sample ``sample``."""
    return np.random.default_rng([spec_seed, sample, int.from_bytes(_digest(name)[:8], "big")])


def expand(spec: Spec, experiment) -> list[Case]:
    """Every case of ``spec`` for ``experiment``, sample by sample, grid combinations in the spec's order; the
    experiment's ``resolve`` checks each case's inputs together (InputError naming the spec key it came from)."""
    defaults = {i.name: i.default for i in experiment.inputs if i.name not in spec.fixed}
    names = list(spec.grid)
    cases, seen = [], set()
    for sample in range(spec.samples):
        draws = {name: d.draw(draw_generator(spec.seed, sample, name)) for name, d in spec.random.items()}
        for combination in itertools.product(*spec.grid.values()):
            inputs = {**defaults, **spec.fixed, **dict(zip(names, combination, strict=True)), **draws}
            try:
                inputs = experiment.resolve(inputs)
            except InputError as error:
                name = re.match(r"\w*", str(error)).group(0)
                raise InputError(f"{spec.section(name)}.{error}") from None
            identity = case_id(spec.experiment, inputs, spec.seed, sample)
            if identity in seen:
                raise InputError(f"grid: two cases have the same inputs ({identity}); a grid lists a value twice")
            seen.add(identity)
            cases.append(Case(identity, sample, case_seed(spec.seed, identity), inputs))
    return cases
