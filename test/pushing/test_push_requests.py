"""Request parsing (discrete_robot.pushing.requests): built objects are reused only for identical fields, and the
one-pass point check refuses exactly what the point-by-point check does, naming the point."""

import numpy as np
import pytest

from discrete_robot.errors import InputError
from discrete_robot.pushing.requests import MAX_COORDINATE, parse_predict_request

SQUARE = [[-0.05, -0.05], [0.05, -0.05], [0.05, 0.05], [-0.05, 0.05]]


def _fields(footprint, **changes) -> dict:
    fields = {"footprint": footprint, "normal_force": 2.0, "support_friction": 0.5, "contact_friction": 0.3,
              "contact_point": [-0.05, 0.0], "pusher_velocity": [0.1, 0.0]}
    return {**fields, **changes}


def test_an_object_is_built_once_for_identical_fields_and_never_shared_between_different_ones():
    first = parse_predict_request(_fields(SQUARE)).obj
    assert parse_predict_request(_fields([list(p) for p in SQUARE], contact_friction=0.9)).obj is first
    wider = [[2.0 * x, y] for x, y in SQUARE]
    other = parse_predict_request(_fields(wider)).obj
    assert other is not first
    np.testing.assert_array_equal(other.footprint, wider)
    heavier = parse_predict_request(_fields(SQUARE, normal_force=4.0)).obj
    assert heavier is not first and heavier.normal_force == 4.0
    assert parse_predict_request(_fields(SQUARE)).obj is first


def test_points_in_any_accepted_form_parse_alike():
    as_dicts = [{"x": x, "y": y} for x, y in SQUARE]
    with_z = [[x, y, 0.0] for x, y in SQUARE]
    reference = parse_predict_request(_fields(SQUARE)).obj.footprint
    for footprint in (as_dicts, with_z, tuple(tuple(p) for p in SQUARE)):
        np.testing.assert_array_equal(parse_predict_request(_fields(footprint)).obj.footprint, reference)


@pytest.mark.parametrize("bad, message", [(np.nan, "footprint[2].y: must be finite"),
                                          (2 * MAX_COORDINATE, "footprint[2].y: must be in"),
                                          ("a", "footprint[2]: expected numbers")])
def test_a_bad_point_is_refused_naming_it(bad, message):
    footprint = [list(p) for p in SQUARE]
    footprint[2][1] = bad
    with pytest.raises(InputError, match=message.replace("[", r"\[").replace("]", r"\]")):
        parse_predict_request(_fields(footprint))
