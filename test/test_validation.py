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



@pytest.mark.parametrize("name", ["joint_trajectory_controller", "arm/controller", "/abs/name", "~/private", "_x1"])
def test_valid_ros_names_pass(name):
    from discrete_robot.validation import ros_name_problem

    assert ros_name_problem(name) is None


@pytest.mark.parametrize("name", ["a b/../c", "", "a//b", "a/", "1abc", "a/2b", "a-b", "~x", "a/./b", "ä"])
def test_invalid_ros_names_are_refused_with_the_name(name):
    from discrete_robot.validation import ros_name_problem

    problem = ros_name_problem(name)
    assert problem is not None and (repr(name) in problem or name == "")


def test_a_frame_prefix_may_end_in_a_slash_but_not_start_with_one():
    from discrete_robot.validation import ros_name_problem

    assert ros_name_problem("space_robot/", relative_only=True, trailing_slash=True) is None
    assert ros_name_problem("/space_robot/", relative_only=True, trailing_slash=True) is not None
    assert ros_name_problem("space robot/", relative_only=True, trailing_slash=True) is not None


def test_energy_bound_is_the_whole_mass_crossing_the_reach_in_one_step():
    from discrete_robot.validation import energy_in_proportion

    # 2 kg, 1 m, h = 1 ms: m (L/h)^2 = 2e6 J, independent of the code under test
    assert energy_in_proportion(1.99e6, 2.0, 1.0, 1e-3, "initial state") == 1.99e6
    assert energy_in_proportion(-1.99e6, 2.0, 1.0, 1e-3, "initial state") == -1.99e6
    for energy in (2.01e6, -2.01e6, np.inf, np.nan):
        with pytest.raises(InputError, match="^initial state: the state's energy"):
            energy_in_proportion(energy, 2.0, 1.0, 1e-3, "initial state")
