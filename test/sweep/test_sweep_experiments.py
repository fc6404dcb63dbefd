"""The experiments and the support distributions against what does not depend on them: the midpoint rule
along a rim converges to the rim's closed-form friction torque; three legs carry the weight with forces and
moments balanced; a mirrored push turns the square the other way; a minimum-time plan under torque limits
scaled by s takes 1/sqrt(s) the time (no gravity, no velocity limit: the equations of motion keep their form
under t -> t / sqrt(s), tau -> s tau, the discrete ones too)."""

import math

import numpy as np
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from discrete_robot.model.description import package_config_path
from discrete_robot.pushing.object_model import make_pushed_object
from discrete_robot.pushing.polygon import closest_on_outline, contains
from discrete_robot.pushing.support import leg_shares, rim_support, three_point_support
from discrete_robot.sweep.commands import prepare
from discrete_robot.sweep.experiments import EXPERIMENTS

SQUARE = np.array([[-0.05, -0.05], [0.05, -0.05], [0.05, 0.05], [-0.05, 0.05]])


def mean_distance_from_centre(points, weights) -> float:
    """The friction torque of a unit rotation about the centroid per unit mu N, m, through the object model."""
    obj = make_pushed_object(SQUARE, 0.5, 1.0, support_points=points, support_weights=weights)
    return obj.support.pivot_torque * obj.scale


def test_a_rim_converges_to_the_closed_form_torque_of_the_square_outline():
    """Mean distance of a square's outline (half side a) from its centre: (1/2a) int_-a^a sqrt(a^2 + t^2) dt =
    a (sqrt 2 + asinh 1) / 2; the midpoint rule errs by O(n^-2)."""
    a = 0.05
    exact = a * (math.sqrt(2.0) + math.asinh(1.0)) / 2.0
    errors = [abs(mean_distance_from_centre(*rim_support(SQUARE, n)) - exact) / exact for n in (16, 64)]
    assert errors[1] < 1e-3 and errors[0] / errors[1] == pytest.approx(16.0, rel=0.05)
    points, weights = rim_support(SQUARE, 64)
    assert max(closest_on_outline(SQUARE, p)[1] for p in points) < 1e-15
    np.testing.assert_allclose(weights @ points / weights.sum(), 0.0, atol=1e-16)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2 ** 32), width=st.floats(0.02, 0.3), height=st.floats(0.02, 0.3))
def test_three_legs_balance_the_weight_at_the_centroid(seed, width, height):
    footprint = np.array([[0.0, 0.0], [width, 0.0], [width, height], [0.0, height]])
    legs, shares = three_point_support(footprint, np.random.default_rng(seed))
    assert contains(footprint, legs).all()
    assert shares.sum() == pytest.approx(1.0, abs=1e-12) and shares.min() >= 0.05
    np.testing.assert_allclose(shares @ legs, [width / 2, height / 2], atol=1e-12 * max(width, height))
    np.testing.assert_allclose(leg_shares(legs, legs[0]), [1.0, 0.0, 0.0], atol=1e-9)


@pytest.mark.parametrize("pressure", ["uniform", "rim", "three_point"])
def test_a_mirrored_push_turns_the_square_the_other_way(pressure):
    """Contact at fraction f and direction theta against 1 - f and -theta on the same edge: the mirror image
    about the edge's perpendicular bisector (a three-legged stool is not symmetric: only its own mirror would
    be, so for it the sense may differ but the push at the centre still does not turn a uniform or rim base)."""
    _, experiment, cases = prepare({"experiment": "predict-push", "fixed": {"pressure": pressure},
                                    "grid": {"contact_fraction": [0.2, 0.8], "pusher_angle": [-0.3, 0.3]}})
    results = {(c.inputs["contact_fraction"], c.inputs["pusher_angle"]): experiment.function(c.inputs, c.seed)
               for c in cases}
    if pressure == "three_point":
        assert {r["rotation"] for r in results.values()} <= {-1, 1}
        return
    for (fraction, angle), result in results.items():
        mirror = results[(round(1.0 - fraction, 12), -angle)]
        assert mirror["omega"] == pytest.approx(-result["omega"], rel=1e-9)
        assert mirror["vx"] == pytest.approx(-result["vx"], rel=1e-9, abs=1e-15)
        assert mirror["vy"] == pytest.approx(result["vy"], rel=1e-9)
        assert {result["mode"], mirror["mode"]} in ({"sticking"}, {"sliding_left", "sliding_right"})
    centre = experiment.function({**cases[0].inputs, "contact_fraction": 0.5, "pusher_angle": 0.0}, 0)
    assert centre["rotation"] == 0 and abs(centre["omega"]) < 1e-12


def test_min_time_scales_as_one_over_the_root_of_the_torque_scale(tmp_path):
    model = yaml.safe_load(package_config_path("planar_2link.yaml").read_text())
    model["gravity"] = [0.0, 0.0, 0.0]
    for link in model["links"]:
        link["joint"]["limits"]["velocity"] = [1e6]
    path = tmp_path / "no_gravity.yaml"
    path.write_text(yaml.safe_dump(model))
    _, experiment, cases = prepare({"experiment": "min-time", "fixed": {"model": str(path), "grid_points": 40},
                                    "grid": {"torque_scale": [0.25, 1.0, 4.0]}})
    durations = {c.inputs["torque_scale"]: experiment.function(c.inputs, c.seed)["duration_s"] for c in cases}
    assert durations[0.25] > durations[1.0] > durations[4.0]
    for scale, duration in durations.items():
        assert duration * math.sqrt(scale) == pytest.approx(durations[1.0], rel=1e-6)


def test_every_experiment_declares_what_it_returns():
    for experiment in EXPERIMENTS.values():
        _, _, cases = prepare({"experiment": experiment.name, **(
            {"fixed": {"model": "planar_2link.yaml", "goal": [1.15, 0.0, 0.0], "time_step": 0.005}}
            if experiment.name == "push-to-pose" else {"fixed": {"duration": 0.05}} if experiment.name == "simulate"
            else {})})
        metrics = experiment.function(cases[0].inputs, cases[0].seed)
        assert set(metrics) == {m.name for m in experiment.metrics}


@pytest.mark.parametrize("offset", [0.0, 0.004])
def test_a_goal_its_start_meets_succeeds_at_once(offset):
    """A goal the start already meets (the same pose, or 4 mm off within the 1 cm tolerance): no push is planned
    (the planner's finger path would have one point), as manipulation_node answers such a goal at once; the error
    is the distance between the poses, the object stays where it is."""
    start = [0.45, 0.0, 0.2]
    goal = [0.45 + offset, 0.0, 0.2]
    _, experiment, cases = prepare({"experiment": "push-to-pose", "fixed": {"start": start, "goal": goal}})
    result = experiment.function(cases[0].inputs, cases[0].seed)
    assert result == {"success": True, "position_error_m": pytest.approx(offset, rel=1e-12, abs=0.0),
                      "angle_error_rad": 0.0, "pushes": 0, "simulated_s": 0.0, "penetration_m": 0.0,
                      "final_pose": start}


def test_simulate_offers_the_composed_integrators_and_they_keep_the_energy():
    """The simulate experiment takes every integrator a simulation can choose (its spec listed three); the
    composed discrete models keep T + V of the unforced arm, a conservative system, to rounding."""
    _, experiment, cases = prepare({"experiment": "simulate", "fixed": {"dt": 0.01, "duration": 2.0, "q0": [0.5, 0.2]},
                                    "grid": {"integrator": ["discrete4", "discrete6"]}})
    assert [c.inputs["integrator"] for c in cases] == ["discrete4", "discrete6"]
    for case in cases:
        result = experiment.function(case.inputs, case.seed)
        assert result["energy_initial"] > 1.0 and result["energy_drift"] < 1e-9, result
