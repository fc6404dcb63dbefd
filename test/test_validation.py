"""validation: the one home of boundary checks refuses what would overflow or allocate without bound, and names
the field in its message."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from discrete_robot.errors import InputError
from discrete_robot.validation import bounded_count, finite_scalar, positive_step


@given(st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=5), st.none()))
def test_finite_scalar_returns_a_finite_float_in_range_or_names_the_field(value):
    try:
        number = finite_scalar(value, "pusher_speed", low=0.0, high=10.0)
    except InputError as error:
        assert str(error).startswith("pusher_speed: ")
    else:
        assert np.isfinite(number) and 0.0 <= number <= 10.0


def test_a_denormal_step_is_refused_before_the_step_count_overflows():
    with pytest.raises(InputError, match=r"time_step: must be in \[1e-09"):
        positive_step(5e-324, "time_step")
    assert positive_step(1e-3, "time_step") == 1e-3


@given(st.one_of(st.floats(min_value=0.0), st.just(np.nan)))
def test_bounded_count_is_an_int_within_the_limit_or_refused(count):
    try:
        steps = bounded_count(count, 1000, "simulate_push", "max_steps")
    except InputError as error:
        assert "simulate_push" in str(error)
    else:
        assert isinstance(steps, int) and 0 <= steps <= 1000

