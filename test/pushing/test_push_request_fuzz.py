"""Generated PredictPush / SimulatePush requests (NaN, ±inf, extremes, denormals, empty and odd-sized arrays,
clockwise and degenerate footprints) through the request parsing and the core: either the project's own
refusal (an InputError-family error naming the field) or an answer whose every number is finite, within a
bounded time."""

import numpy as np
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from discrete_robot.budget import limited
from discrete_robot.errors import DiscreteRobotError
from discrete_robot.pushing.prediction import predict_push
from discrete_robot.pushing.requests import (
    parse_predict_request,
    parse_simulate_request,
    prediction_fields,
)
from discrete_robot.pushing.simulation import simulate_push

NASTY = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.sampled_from(
    [0.0, -0.0, 5e-324, -5e-324, 1e-300, 1e300, -1e300, 1e308, np.nan, np.inf, -np.inf]))
SANE = st.floats(-0.2, 0.2)


def mostly(sane, nasty=NASTY):
    """``sane`` five times in six: each request has several fields, and most requests should get past the
    first check so that the later ones and the solver are exercised too."""
    return st.one_of(sane, sane, sane, sane, sane, nasty)


POINT = st.one_of(st.lists(SANE, min_size=2, max_size=2), st.lists(mostly(SANE), min_size=0, max_size=4))
SQUARE = [[-0.05, -0.05], [0.05, -0.05], [0.05, 0.05], [-0.05, 0.05]]
FOOTPRINT = mostly(st.just(SQUARE), st.one_of(st.just(SQUARE[::-1]), st.lists(POINT, max_size=6)))
#: on the square's left edge (most), or anywhere
CONTACT = mostly(st.builds(lambda t: [-0.05, t], st.floats(-0.05, 0.05)), POINT)
SCALAR = mostly(st.floats(0.01, 3.0))


def _finite(value) -> bool:
    if isinstance(value, dict):
        return all(_finite(v) for v in value.values())
    if isinstance(value, list | tuple):
        return all(_finite(v) for v in value)
    return not isinstance(value, float) or np.isfinite(value)


def _predict_is_refused_or_finite(fields: dict) -> None:
    """Parse and predict: a refusal of the project's own kind with a message, or an all-finite answer."""
    try:
        request = parse_predict_request(fields)
        prediction = predict_push(request.obj, request.contact_point, request.pusher_velocity,
                                  request.contact_friction, request.pusher_radius)
    except DiscreteRobotError as error:
        assert str(error)
        event("refused")
        return
    event("answered")
    assert _finite(prediction_fields(prediction))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(footprint=FOOTPRINT, normal_force=SCALAR, support_friction=SCALAR, contact_friction=SCALAR,
       contact_point=CONTACT, pusher_velocity=POINT, pusher_radius=st.one_of(st.just(0.0), SCALAR))
def test_predict_requests_are_refused_or_answered_with_finite_numbers(**fields):
    _predict_is_refused_or_finite(fields)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(footprint=FOOTPRINT, normal_force=SCALAR, support_friction=SCALAR, contact_friction=SCALAR,
       object_pose=mostly(st.just([0.3, 0.0, 0.0]), POINT),
       pusher_path=mostly(st.builds(lambda y: [[0.0, y], [0.5, y]], st.floats(-0.1, 0.1)),
                          st.lists(POINT, max_size=5)),
       pusher_speed=SCALAR, time_step=mostly(st.floats(0.01, 1.0)), pusher_radius=st.one_of(st.just(0.0), SCALAR))
def test_simulate_requests_are_refused_or_answered_with_finite_numbers_in_bounded_time(**fields):
    try:
        request = parse_simulate_request(fields, default_time_step=0.01)
        with limited(2.0):
            trajectory = simulate_push(request.obj, request.initial_pose, request.pusher_path, request.pusher_speed,
                                       request.time_step, request.contact_friction, request.pusher_radius)
    except DiscreteRobotError as error:
        assert str(error)
        event("refused")
        return
    event("answered")
    assert np.all(np.isfinite(trajectory.times)) and np.all(np.isfinite(trajectory.poses))


@settings(max_examples=150, deadline=None)
@given(scale=st.floats(1e-3, 10.0), normal_force=st.floats(1e-6, 1e9), support_friction=st.floats(1e-6, 1e3),
       contact_friction=st.floats(0.0, 1e3), along=st.floats(-1.0, 1.0),
       velocity=st.tuples(st.floats(-1e3, 1e3), st.floats(-1e3, 1e3)), pusher_radius=st.floats(0.0, 0.01))
def test_well_formed_predict_requests_at_extreme_magnitudes_are_answered_finitely(scale, along, velocity, **fields):
    """Every field valid but anywhere in its range (micrometre to ten-metre objects, µN to GN, speeds to 1 km/s):
    the answer is finite, or a refusal of the project's own kind."""
    footprint = [[scale * x, scale * y] for x, y in SQUARE]
    request_fields = {**fields, "footprint": footprint, "contact_point": [-0.05 * scale, 0.05 * scale * along],
                      "pusher_velocity": list(velocity)}
    _predict_is_refused_or_finite(request_fields)
