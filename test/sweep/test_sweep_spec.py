"""A spec is checked completely before anything runs: every bad key is refused with one line naming it, and
the command exits with status 2 without starting Ray. Cases: stable ids and seeds (hypothesis), draws inside
their bounds and distributed as asked (Kolmogorov-Smirnov against scipy's distributions)."""

import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from discrete_robot.errors import InputError
from discrete_robot.sweep.cases import case_id, draw_generator, expand
from discrete_robot.sweep.commands import prepare
from discrete_robot.sweep.experiments import EXPERIMENTS
from discrete_robot.sweep.spec import parse_spec

PREDICT = {"experiment": "predict-push"}
PUSH = {"experiment": "push-to-pose", "fixed": {"model": "planar_2link.yaml", "goal": [1.15, 0.02, 0.3]}}


@pytest.mark.parametrize("raw, message", [
    ({**PUSH, "random": {"support_friction": {"uniform": [-1.0, 0.5]}}},
     "random.support_friction: uniform bounds must satisfy 0 <= lo <= hi, got [-1.0, 0.5]"),
    ({**PREDICT, "random": {"contact_fraction": {"uniform": [0.2, 1.5]}}},
     "random.contact_fraction: uniform bounds must satisfy 0 <= lo <= hi <= 1, got [0.2, 1.5]"),
    ({**PREDICT, "random": {"contact_friction": {"normal": [0.3, -0.1]}}},
     "random.contact_friction: normal needs 0 <= mean and sd >= 0, got [0.3, -0.1]"),
    ({**PREDICT, "random": {"pressure": {"uniform": [0, 1]}}},
     "random.pressure: uniform draws numbers; pressure is a choice (use choice)"),
    ({**PREDICT, "random": {"pressure": {"choice": ["rim", "legs"]}}},
     "random.pressure.choice[1]: expected one of uniform, rim, three_point, got 'legs'"),
    ({**PREDICT, "random": {"pusher_angle": {"beta": [1, 2]}}},
     "random.pusher_angle: the distribution: expected one of uniform, normal, choice, got 'beta'"),
    ({**PREDICT, "grid": {"contact_fraction": []}}, "grid.contact_fraction: expected a non-empty list of values"),
    ({**PREDICT, "grid": {"contact_edge": [0, 7]}}, "grid.contact_edge: the footprint has 4 edges (0 to 3), got 7"),
    ({**PREDICT, "grid": {"contact_fraction": [0.5, 0.5]}}, "grid: two cases have the same inputs"),
    ({**PREDICT, "fixed": {"contact_fraction": 0.5}, "grid": {"contact_fraction": [0.1]}},
     "grid.contact_fraction: also given in fixed"),
    ({**PREDICT, "fixed": {"friction": 0.5}}, "fixed.friction: not an input of predict-push"),
    ({**PREDICT, "fixed": {"footprint": [0, 0, 1, 1, 2, 2]}}, "fixed.footprint has zero area"),
    ({**PREDICT, "fixed": {"pusher_speed": "fast"}}, "fixed.pusher_speed: expected a number, got 'fast'"),
    ({**PREDICT, "fixed": {"contact_edge": 1.5}}, "fixed.contact_edge: expected a whole number, got 1.5"),
    ({**PREDICT, "grid": "contact_edge"}, "grid: expected a mapping of input names to values"),
    ({**PREDICT, "samples": 0}, "samples: must be in [1, 1000000], got 0"),
    ({**PREDICT, "samples": 1e20}, "samples: must be in [1, 1000000], got 100000000000000000000"),
    ({**PREDICT, "samples": float("inf")}, "samples: expected a whole number, got inf"),
    ({**PREDICT, "seed": -1}, "seed: must be in [0, 18446744073709551615], got -1"),
    ({**PREDICT, "seed": 2 ** 64}, "seed: must be in [0, 18446744073709551615], got 18446744073709551616"),
    ({**PREDICT, "seed": 10 ** 38}, "seed: must be in [0, 18446744073709551615], got about 1e38"),
    ({**PREDICT, "seed": 10 ** 400}, "seed: must be in [0, 18446744073709551615], got about 1e400"),
    ({**PREDICT, "fixed": {"footprint": [[0, 0], [1, 0, 3], [1, 1]]}},
     "fixed.footprint: expected a list of numbers, got [[0, 0], [1, 0, 3], [1, 1]]"),
    ({**PREDICT, "fixed": {"footprint": [0.0, 0.0, 1.0, 0.0, [1.0, [1.0]]]}},
     "fixed.footprint: expected a list of numbers, got [0.0, 0.0, 1.0, 0.0, [1.0, [1.0]]]"),
    ({**PREDICT, "random": {"pusher_angle": {"uniform": [[0.1], 0.2]}}},
     "random.pusher_angle.uniform: expected a list of numbers, got [[0.1], 0.2]"),
    ({**PREDICT, "case_timeout": 0}, "case_timeout: must be in [0.001, 1e+07], got 0"),
    ({**PREDICT, "workers": 2}, "workers: unknown spec key"),
    ({"experiment": "push-to-goal"}, "experiment: expected one of push-to-pose, predict-push, min-time, simulate"),
    ({"fixed": {}}, "experiment: missing"),
    ({"experiment": "push-to-pose"}, "fixed.goal: push-to-pose needs it"),
    ({**PUSH, "fixed": {**PUSH["fixed"], "goal": [1.0, 0.0]}}, "fixed.goal: expected 3 values, got 2"),
    ({**PUSH, "fixed": {**PUSH["fixed"], "model": "no_such_arm.yaml"}}, "fixed.model: model file "),
    ({"experiment": "min-time", "fixed": {"waypoints": [[0, 0, 0], [1, 1, 1]]}},
     "fixed.waypoints: each needs 2 values (joint1, joint2)"),
    ({"experiment": "simulate", "fixed": {"dt": 1e-6, "duration": 100.0}},
     "fixed.duration: needs 1e+08 steps, more than the most steps of a case = 10000000"),
    ({**PREDICT, "samples": 1000, "grid": {"contact_fraction": list(np.linspace(0, 1, 1001))}},
     "samples: 1000 samples x 1001 grid combinations make 1001000 cases, more than 1000000"),
], ids=lambda value: value if isinstance(value, str) and len(value) < 40 else None)
def test_a_bad_spec_is_refused_naming_the_key(raw, message):
    with pytest.raises(InputError) as error:
        prepare(raw)
    assert str(error.value).startswith(message), str(error.value)
    assert "\n" not in str(error.value)


def test_the_command_refuses_a_bad_spec_in_one_line_with_status_2_before_any_work(tmp_path):
    spec = tmp_path / "spec.yaml"
    spec.write_text("experiment: push-to-pose\nfixed: {goal: [0.5, 0.06, 0.5]}\n"
                    "random: {support_friction: {uniform: [-1.0, 0.5]}}\n")
    result = subprocess.run([sys.executable, "-m", "discrete_robot", "sweep", "run", str(spec), "--output-dir",
                             str(tmp_path / "out")], capture_output=True, text=True, timeout=300)
    assert result.returncode == 2
    assert result.stderr.strip() == ("error: random.support_friction: uniform bounds must satisfy 0 <= lo <= hi, "
                                     "got [-1.0, 0.5]")
    assert not (tmp_path / "out").exists()


def nested(depth: int) -> list:
    value = [0.0]
    for _ in range(depth):
        value = [value]
    return value


def test_a_list_nested_10000_deep_is_refused_in_one_short_line():
    with pytest.raises(InputError) as error:
        prepare({**PREDICT, "fixed": {"footprint": nested(10_000)}})
    assert str(error.value) == "fixed.footprint: expected a list of numbers, got [[[[...]]]]"


def test_the_largest_seed_is_accepted():
    spec, _, cases = prepare({**PREDICT, "seed": 2 ** 64 - 1, "samples": 2,
                              "random": {"pusher_angle": {"uniform": [-0.5, 0.5]}}})
    assert spec.seed == 2 ** 64 - 1 and len({case.inputs["pusher_angle"] for case in cases}) == 2


def billion_laughs() -> str:
    """9**9 strings in a few hundred bytes (as test_config_files.py)."""
    text = 'experiment: predict-push\nfixed:\n  footprint: &a [1, 1, 1, 1, 1, 1, 1, 1, 1]\n'
    for name, previous in zip("bcdefghi", "abcdefgh", strict=True):
        text += f"x{name}: &{name} [{', '.join([f'*{previous}'] * 9)}]\n"
    return text


@pytest.mark.parametrize("text, message", [
    ("experiment: predict-push\nseed: 123456789012345678901234567890123456789\n",
     "seed: must be in [0, 18446744073709551615], got about 1e38"),
    ("experiment: predict-push\nsamples: 1.0e+20\n", "samples: must be in [1, 1000000], got 100000000000000000000"),
    ("experiment: predict-push\nsamples: 1e20\n", "samples: expected a whole number, got '1e20'"),
    ("experiment: predict-push\nsamples: .inf\n", "samples: expected a whole number, got inf"),
    ("experiment: predict-push\nfixed: {footprint: [[0, 0], [1, 0, 3], [1, 1]]}\n",
     "fixed.footprint: expected a list of numbers, got [[0, 0], [1, 0, 3], [1, 1]]"),
    ("experiment: predict-push\nfixed: {footprint: " + "[" * 10_000 + "]" * 10_000 + "}\n",
     "spec {spec}: invalid YAML (while increasing flow level exceeded maximum nesting depth"),
    (billion_laughs(), "spec {spec}: YAML aliases are not accepted (*a, line 4): write the value out"),
], ids=["seed", "samples", "samples-text", "samples-inf", "ragged", "nested", "aliases"])
def test_the_command_refuses_bad_numbers_and_shapes_in_one_line(tmp_path, text, message):
    """What gave tracebacks (issue 41): one ``error:`` line naming the field, status 2, before any work."""
    spec = tmp_path / "spec.yaml"
    spec.write_text(text)
    result = subprocess.run([sys.executable, "-m", "discrete_robot", "sweep", "run", str(spec), "--output-dir",
                             str(tmp_path / "out")], capture_output=True, text=True, timeout=300)
    assert result.returncode == 2, result.stderr[-2000:]
    assert result.stderr.startswith("error: " + message.format(spec=spec)), result.stderr[-2000:]
    assert result.stderr.count("\n") == 1
    assert not (tmp_path / "out").exists()


def test_the_cases_are_samples_times_the_grid_and_fill_every_input():
    spec, experiment, cases = prepare({**PREDICT, "samples": 3, "grid": {"contact_edge": [0, 1],
                                                                          "pressure": ["uniform", "rim"]},
                                       "random": {"pusher_angle": {"uniform": [-0.5, 0.5]}}})
    assert len(cases) == spec.case_count == 12
    assert all(set(case.inputs) == {i.name for i in experiment.inputs} for case in cases)
    assert len({case.id for case in cases}) == len({case.seed for case in cases}) == 12
    # common random numbers: every grid combination of a sample has the same draw
    for sample in range(3):
        assert len({case.inputs["pusher_angle"] for case in cases if case.sample == sample}) == 1


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2 ** 40), extra=st.floats(0.01, 0.99), reverse=st.booleans())
def test_ids_and_seeds_depend_on_the_case_only(seed, extra, reverse):
    """A case's id and seed do not change when the grid lists other values, in another order."""
    fractions = [0.25, 0.5, 0.75]
    base = {**PREDICT, "seed": seed, "samples": 2, "random": {"pusher_angle": {"normal": [0.0, 0.3]}}}
    _, _, cases = prepare({**base, "grid": {"contact_fraction": fractions}})
    more = sorted({*fractions, extra}, reverse=reverse)
    _, _, other = prepare({**base, "grid": {"contact_fraction": more}})
    kept = {(c.id, c.seed, c.inputs["pusher_angle"]) for c in other}
    assert {(c.id, c.seed, c.inputs["pusher_angle"]) for c in cases} <= kept
    _, _, again = prepare({**base, "seed": seed + 1, "grid": {"contact_fraction": fractions}})
    assert not {c.id for c in cases} & {c.id for c in again}


def test_draws_follow_their_laws_within_the_inputs_range():
    """2000 draws of each law against scipy's CDF (the normal truncated to the input's range [0, inf))."""
    spec = parse_spec({**PREDICT, "samples": 2000, "random": {
        "contact_friction": {"normal": [0.1, 0.2]}, "pusher_angle": {"uniform": [-0.4, 0.8]},
        "pressure": {"choice": ["uniform", "rim"]}}}, EXPERIMENTS)
    cases = expand(spec, EXPERIMENTS["predict-push"])
    friction = np.array([c.inputs["contact_friction"] for c in cases])
    angle = np.array([c.inputs["pusher_angle"] for c in cases])
    assert friction.min() >= 0.0 and angle.min() >= -0.4 and angle.max() <= 0.8
    assert stats.kstest(friction, stats.truncnorm(-0.5, np.inf, loc=0.1, scale=0.2).cdf).pvalue > 1e-3
    assert stats.kstest(angle, stats.uniform(-0.4, 1.2).cdf).pvalue > 1e-3
    rims = sum(c.inputs["pressure"] == "rim" for c in cases)
    assert stats.binomtest(rims, len(cases)).pvalue > 1e-3
    # the draw of an input comes from its own generator: the same whatever other inputs are drawn
    assert angle[5] == pytest.approx(-0.4 + 1.2 * draw_generator(0, 5, "pusher_angle").random(), rel=1e-15)


def test_a_case_id_hashes_its_inputs_and_seed():
    inputs = {"a": 1.0, "b": [0.1, 0.2]}
    assert case_id("x", inputs, 0, 0) == case_id("x", dict(reversed(inputs.items())), 0, 0)
    assert len({case_id("x", inputs, 0, 0), case_id("x", inputs, 1, 0), case_id("x", inputs, 0, 1),
                case_id("x", {**inputs, "a": 1.0 + 1e-15}, 0, 0), case_id("y", inputs, 0, 0)}) == 5
