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


@pytest.mark.parametrize(("name", "shown"), [
    ("elbow", "elbow"), ("coude_é", "coude_é"), ("wrist\u202e1", "wrist\\u202e1"),
    ("a\u2066b\u2069", "a\\u2066b\\u2069"),
    ("line\nbreak", "line\\nbreak"), ("bell\x07", "bell\\x07"), ("zero\u200bwidth", "zero\\u200bwidth"),
])
def test_printable_escapes_control_and_bidirectional_characters_only(name, shown):
    from discrete_robot.validation import printable

    assert printable(name) == shown


@given(st.text())
def test_printable_leaves_nothing_that_reorders_or_breaks_a_line(name):
    import unicodedata

    from discrete_robot.validation import printable

    assert all(unicodedata.category(character) not in {"Cc", "Cf", "Zl", "Zp"} for character in printable(name))


def test_plausible_refuses_a_finite_value_beyond_the_bound_naming_it():
    from discrete_robot.errors import ModelError
    from discrete_robot.validation import MAX_LENGTH, plausible

    assert plausible(-MAX_LENGTH, MAX_LENGTH, "link 'a': com", "m") == -MAX_LENGTH
    for value in (1e308, [0.0, -1.0001e3, 0.0], np.nan):
        with pytest.raises(ModelError, match=r"^link 'a': com: must be within ±1000 m"):
            plausible(value, MAX_LENGTH, "link 'a': com", "m")


def test_model_size_bounds_links_and_the_discrete_steps_16_n4_bytes():
    from discrete_robot.errors import ModelError
    from discrete_robot.validation import MAX_STEP_BYTES, discrete_step_bytes, model_size

    assert discrete_step_bytes(64) == 16 * 64 ** 4 <= MAX_STEP_BYTES < discrete_step_bytes(65)
    model_size(1000, 64, "arm")
    with pytest.raises(ModelError, match=r"^arm: 1001 links, more than the 1000"):
        model_size(1001, 6, "arm")
    with pytest.raises(ModelError, match=r"^arm: 65 joints need 2.86e\+08 bytes .* at most 64 joints\)$"):
        model_size(65, 65, "arm")


#: the RTPS 2.x well-known ports (OMG DDSI-RTPS 2.5, 9.6.2.3): PB + DG · domain + d0 for discovery multicast,
#: PB = 7400, DG = 250, d0 = 0; a UDP port is 16 bits
RTPS_PORT_BASE, RTPS_DOMAIN_GAIN, LARGEST_UDP_PORT = 7400, 250, 65535


@pytest.mark.parametrize("middleware", [None, "", "rmw_fastrtps_cpp", "rmw_fastrtps_dynamic_cpp", "rmw_cyclonedds_cpp"])
def test_a_dds_domain_id_whose_discovery_port_passes_16_bits_is_refused_naming_the_variable(middleware):
    from discrete_robot.validation import dds_domain_id

    largest = (LARGEST_UDP_PORT - RTPS_PORT_BASE) // RTPS_DOMAIN_GAIN
    environ = {} if middleware is None else {"RMW_IMPLEMENTATION": middleware}
    for domain in (0, 101, largest):
        dds_domain_id({**environ, "ROS_DOMAIN_ID": str(domain)})
    for domain in (largest + 1, 1000):
        with pytest.raises(InputError, match=rf"ROS_DOMAIN_ID.*\[0, {largest}\], got {domain}"):
            dds_domain_id({**environ, "ROS_DOMAIN_ID": str(domain)})


@pytest.mark.parametrize("environ", [{}, {"ROS_DOMAIN_ID": ""}, {"ROS_DOMAIN_ID": "abc"},
                                     {"ROS_DOMAIN_ID": "240", "RMW_IMPLEMENTATION": "rmw_zenoh_cpp"}])
def test_a_domain_id_that_is_not_a_dds_port_problem_is_left_to_rcl_and_the_middleware(environ):
    from discrete_robot.validation import dds_domain_id

    dds_domain_id(environ)
