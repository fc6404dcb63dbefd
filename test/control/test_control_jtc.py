"""joint_trajectory_controller's contract in the core: goal checks, tolerances, interpolation and the goal life
cycle, each against an independent statement of it (upstream's rules, np.interp, scipy's Hermite spline, the
quintic's boundary conditions)."""

from types import SimpleNamespace as Msg

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from discrete_robot.control.joint_trajectory_controller import (
    FLOAT_EPSILON,
    ControllerSettings,
    ErrorCode,
    JointTrajectoryController,
    effective_cmd_timeout,
    effective_deceleration,
    goal_tolerances,
    resolve_tolerance,
    shortest_angle,
    unwrap_start,
    validate_trajectory,
)
from discrete_robot.control.trajectory import MAX_POINTS, Interpolation, JointNamesError, TrajectoryReference
from discrete_robot.errors import InputError

JOINTS = ("joint1", "joint2")


def _time(seconds: float) -> Msg:
    whole = int(np.floor(seconds))
    return Msg(sec=whole, nanosec=int(round((seconds - whole) * 1e9)))


def _trajectory(names, points, stamp: float = 0.0) -> Msg:
    """A JointTrajectory-shaped message; a point is (t, positions[, velocities[, accelerations[, effort]]])."""
    def point(t, positions, velocities=(), accelerations=(), effort=()):
        return Msg(time_from_start=_time(t), positions=list(positions), velocities=list(velocities),
                   accelerations=list(accelerations), effort=list(effort))

    return Msg(joint_names=list(names), header=Msg(stamp=_time(stamp)), points=[point(*p) for p in points])


def _settings(**kwargs) -> ControllerSettings:
    return ControllerSettings(JOINTS, np.zeros(2), np.zeros(2), **kwargs)


# ---------------------------------------------------------------------------------------------- goal acceptance

@pytest.mark.parametrize(("names", "points", "stamp", "error", "match"), [
    (["joint1"], [(1.0, [0.0])], 0.0, JointNamesError, "allow_partial_joints_goal"),
    ([], [], 0.0, JointNamesError, "allow_partial_joints_goal"),
    (JOINTS, [], 0.0, InputError, "empty trajectory"),
    (["joint1", "elbow"], [(1.0, [0.0, 0.0])], 0.0, JointNamesError, "unknown joint name.*elbow"),
    (["joint1", "joint1"], [(1.0, [0.0, 0.0])], 0.0, JointNamesError, "twice"),
    (JOINTS, [(1.0, [0.0, 0.0], [0.0, 0.1])], 0.0, InputError, "joint2 is not zero"),
    (JOINTS, [(1.0, [0.0, 0.0])], 3.0, InputError, "header.stamp.*in the past"),
    (JOINTS, [(1.0, [0.0, 0.0]), (1.0, [1.0, 1.0])], 0.0, InputError, "strictly increasing"),
    (JOINTS, [(1.0, [0.0, 0.0]), (0.5, [1.0, 1.0])], 0.0, InputError, "strictly increasing"),
    (JOINTS, [(1.0, [0.0])], 0.0, InputError, "point 0 has 1 positions"),
    (JOINTS, [(1.0, [0.0, 0.0], [0.0])], 0.0, InputError, "point 0 has 1 velocities"),
    (JOINTS, [(1.0, [0.0, np.nan])], 0.0, InputError, "finite"),
])
def test_goals_jtc_rejects_are_refused_with_the_reason(names, points, stamp, error, match):
    with pytest.raises(error, match=match):
        validate_trajectory(_settings(), _trajectory(names, points, stamp), now=5.0)


def test_the_options_admit_partial_goals_and_a_moving_end():
    moving = _trajectory(JOINTS, [(1.0, [0.0, 0.0], [0.0, 0.1])])
    admitted = validate_trajectory(_settings(allow_nonzero_velocity_at_trajectory_end=True), moving, 0.0)
    assert admitted.velocities[-1, 1] == 0.1
    goal = validate_trajectory(_settings(allow_partial_joints_goal=True), _trajectory(["joint2"], [(1.0, [0.7])]),
                               0.0)
    assert np.isnan(goal.positions[0, 0]) and goal.positions[0, 1] == 0.7
    # below float's epsilon a final velocity counts as zero, as upstream compares it (cpp 1717)
    still = _trajectory(JOINTS, [(1.0, [0.0, 0.0], [0.0, 0.5 * FLOAT_EPSILON])])
    assert validate_trajectory(_settings(), still, 0.0) is not None


def test_a_huge_goal_is_refused_before_any_point_is_read():
    class Points:
        def __len__(self):
            return 100 * MAX_POINTS

        def __getitem__(self, index):
            raise AssertionError("a point was read")

        def __iter__(self):
            raise AssertionError("the points were iterated")

    huge = Msg(joint_names=list(JOINTS), header=Msg(stamp=_time(0.0)), points=Points())
    with pytest.raises(InputError, match="more than"):
        validate_trajectory(_settings(), huge, 0.0)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.floats(0.01, 2.0), min_size=1, max_size=8), st.permutations(JOINTS), st.integers(0, 7))
def test_any_well_formed_trajectory_is_accepted_and_a_repeated_time_is_not(steps, names, repeat):
    times = np.cumsum(steps)
    points = [(t, [0.1 * k, -0.1 * k]) for k, t in enumerate(times)]
    goal = validate_trajectory(_settings(), _trajectory(names, points), 0.0)
    order = [list(names).index(j) for j in JOINTS]
    np.testing.assert_array_equal(goal.positions, np.array([p for _, p in points])[:, order])
    if len(points) > 1:
        k = 1 + repeat % (len(points) - 1)
        points[k] = (points[k - 1][0], points[k][1])
        with pytest.raises(InputError, match="strictly increasing"):
            validate_trajectory(_settings(), _trajectory(names, points), 0.0)


# ---------------------------------------------------------------------------------------------- tolerances

@given(st.floats(0.0, 10.0), st.one_of(st.floats(-10.0, 10.0), st.sampled_from([0.0, -1.0])))
def test_a_goal_tolerance_follows_jointtolerance_s_special_values(default, value):
    """control_msgs JointTolerance.msg: 0 keeps the default, -1 erases it; upstream refuses other negatives."""
    if value > 0.0:
        assert resolve_tolerance(default, value) == value
    elif value == 0.0:
        assert resolve_tolerance(default, value) == default
    elif value == -1.0:
        assert resolve_tolerance(default, value) == 0.0
    else:
        with pytest.raises(ValueError):
            resolve_tolerance(default, value)


def test_goal_tolerances_replace_the_defaults_and_an_invalid_one_restores_them_all():
    defaults = ControllerSettings(JOINTS, np.array([0.1, 0.2]), np.array([0.01, 0.02]), goal_time=0.5,
                                  stopped_velocity_tolerance=0.03).default_tolerances()
    np.testing.assert_array_equal(defaults.goal.velocity, [0.03, 0.03])
    tolerance = Msg(name="joint2", position=-1.0, velocity=0.4, acceleration=0.0)
    resolved, problem = goal_tolerances(defaults, JOINTS, [tolerance], [], 2.0)
    assert problem is None and resolved.goal_time == 2.0
    np.testing.assert_array_equal(resolved.path.position, [0.1, 0.0])
    np.testing.assert_array_equal(resolved.path.velocity, [0.0, 0.4])
    np.testing.assert_array_equal(resolved.goal.position, defaults.goal.position)
    for path, goal_time, match in (([Msg(name="elbow", position=1.0, velocity=0.0, acceleration=0.0)], 0.0,
                                     "elbow"),
                                   ([Msg(name="joint1", position=-0.5, velocity=0.0, acceleration=0.0)], 0.0,
                                    "invalid position"),
                                   ([], -3.0, "goal_time_tolerance"),
                                   ([Msg(name="joint1", position=0.3, velocity=0.0, acceleration=0.0),
                                     Msg(name="joint1", position=0.4, velocity=0.0, acceleration=0.0)], 0.0,
                                    "more than once")):
        resolved, problem = goal_tolerances(defaults, JOINTS, path, [], goal_time)
        assert resolved is defaults and match in problem


# ---------------------------------------------------------------------------------------------- interpolation

def test_positions_only_are_joined_by_straight_lines():
    times, positions = np.array([0.0, 1.0, 3.0]), np.array([[0.0, 1.0], [2.0, -1.0], [1.0, 0.0]])
    reference = TrajectoryReference(times, positions)
    for t in np.linspace(0.0, 2.999, 37):
        sample = reference.sample(t)
        np.testing.assert_allclose(sample.q, [np.interp(t, times, positions[:, j]) for j in range(2)], atol=1e-12)
        assert np.all(sample.qdd == 0.0)


def test_velocities_give_hermite_cubics():
    from scipy.interpolate import CubicHermiteSpline

    times = np.array([0.0, 0.7, 2.0])
    positions, velocities = np.array([[0.0, 1.0], [2.0, -1.0], [1.0, 0.5]]), np.array([[0.0, 0.0], [1.5, -2.0],
                                                                                      [0.0, 0.0]])
    reference, spline = TrajectoryReference(times, positions, velocities), CubicHermiteSpline(times, positions,
                                                                                               velocities)
    for t in np.linspace(0.0, 1.999, 29):
        sample = reference.sample(t)
        np.testing.assert_allclose(sample.q, spline(t), atol=1e-12)
        np.testing.assert_allclose(sample.qd, spline(t, 1), atol=1e-11)
        np.testing.assert_allclose(sample.qdd, spline(t, 2), atol=1e-10)


@settings(max_examples=30, deadline=None)
@given(st.floats(0.05, 5.0), *(st.floats(-3.0, 3.0) for _ in range(6)))
def test_accelerations_give_the_quintic_that_meets_all_six_boundary_values(T, p0, v0, a0, p1, v1, a1):
    reference = TrajectoryReference(np.array([0.0, T]), np.array([[p0], [p1]]), np.array([[v0], [v1]]),
                                    accelerations=np.array([[a0], [a1]]))
    # the unique quintic through the six conditions, solved here as a linear system in the monomials
    rows = [[T ** j if d == 0 else (j * T ** (j - 1) if d == 1 else j * (j - 1) * T ** (j - 2)) if j >= d else 0.0
             for j in range(6)] for d in range(3)]
    system = np.array([[1, 0, 0, 0, 0, 0], [0, 1, 0, 0, 0, 0], [0, 0, 2, 0, 0, 0], *rows], dtype=float)
    coefficients = np.linalg.solve(system, [p0, v0, a0, p1, v1, a1])
    for t in np.linspace(0.0, T, 7)[:-1]:
        sample = reference.sample(t)
        assert sample.q[0] == pytest.approx(np.polyval(coefficients[::-1], t), abs=1e-9 * (1 + abs(p0) + abs(p1)))
    end = reference.sample(T - 1e-9)
    assert end.q[0] == pytest.approx(p1, abs=1e-6) and end.qd[0] == pytest.approx(v1, abs=1e-5)


def test_efforts_are_linear_and_none_forwards_the_next_point():
    times, positions, efforts = np.array([0.0, 2.0]), np.array([[0.0], [1.0]]), np.array([[4.0], [8.0]])
    reference = TrajectoryReference(times, positions, efforts=efforts)
    assert reference.sample(0.5).effort[0] == pytest.approx(5.0)
    step = TrajectoryReference(times, positions, interpolation=Interpolation.NONE)
    assert step.sample(0.5).q[0] == 1.0 and step.sample(0.5).index == 1


# ---------------------------------------------------------------------------------------------- the life cycle

def _run(controller, q_of_t, times):
    for t in times:
        q = q_of_t(t)
        update = controller.update(t, q, np.zeros(2))
        if update.ended is not None:
            return t, update
    return None, None


def test_a_followed_goal_succeeds_with_jtc_s_string_and_holds_its_last_point():
    controller = JointTrajectoryController(_settings())
    goal = validate_trajectory(controller.settings, _trajectory(JOINTS, [(1.0, [0.5, 0.5]), (2.0, [1.0, 0.0])]), 0.0)
    controller.follow(goal, 0.0, np.zeros(2), np.zeros(2), goal="g")
    indices = [controller.update(t, controller.sample(t).q, np.zeros(2)).index for t in (0.0, 0.5, 1.2)]
    assert indices == [0, 0, 1]                      # the point ahead, in the message's numbering (cpp 330, 470)
    t, update = _run(controller, lambda t: controller.sample(t).q, np.arange(1.3, 3.0, 0.1))
    assert update.ended.goal == "g" and update.ended.outcome.code == ErrorCode.SUCCESSFUL
    assert update.ended.outcome.message.startswith("Goal successfully reached!") and t >= 2.0
    assert controller.holding and np.allclose(controller.sample(10.0).q, [1.0, 0.0])


def test_a_path_violation_aborts_and_holds_where_the_robot_is():
    controller = JointTrajectoryController(ControllerSettings(JOINTS, np.array([0.05, 0.05]), np.zeros(2)))
    goal = validate_trajectory(controller.settings, _trajectory(JOINTS, [(1.0, [1.0, 0.0])]), 0.0)
    controller.follow(goal, 0.0, np.zeros(2), np.zeros(2), goal="g")
    t, update = _run(controller, lambda t: np.zeros(2), np.arange(0.0, 1.0, 0.01))   # a robot that does not move
    assert update.ended.outcome.code == ErrorCode.PATH_TOLERANCE_VIOLATED
    assert update.ended.outcome.message.startswith("Aborted due to path tolerance violation") and t < 0.1
    np.testing.assert_array_equal(controller.sample(t + 1.0).q, [0.0, 0.0])


def test_the_goal_time_limits_the_wait_and_zero_waits_for_ever():
    for goal_time, ends in ((0.32, True), (0.0, False)):
        controller = JointTrajectoryController(ControllerSettings(JOINTS, np.zeros(2), np.array([0.01, 0.01]),
                                                                  goal_time=goal_time))
        goal = validate_trajectory(controller.settings, _trajectory(JOINTS, [(0.5, [1.0, 1.0])]), 0.0)
        controller.follow(goal, 0.0, np.zeros(2), np.zeros(2), goal="g")
        t, update = _run(controller, lambda t: np.full(2, 0.9), np.arange(0.0, 5.0, 0.05))
        if ends:
            assert update.ended.outcome.code == ErrorCode.GOAL_TOLERANCE_VIOLATED and t == pytest.approx(0.85)
            assert update.ended.outcome.message.startswith("Aborted due to goal_time_tolerance exceeding by 0.35")
        else:
            assert update is None and controller.goal == "g"


def test_preemption_and_cancel_end_the_goal_as_jtc_does():
    controller = JointTrajectoryController(_settings())
    goal = validate_trajectory(controller.settings, _trajectory(JOINTS, [(1.0, [1.0, 1.0])]), 0.0)
    controller.follow(goal, 0.0, np.zeros(2), np.zeros(2), goal="first")
    ended = controller.follow(goal, 0.2, np.zeros(2), np.zeros(2), goal="second")
    assert ended.goal == "first" and ended.outcome.code == ErrorCode.INVALID_GOAL
    assert ended.outcome.message == "Current goal preempted by new incoming action."
    assert controller.cancel("first", 0.3, np.zeros(2)) is None
    ended = controller.cancel("second", 0.3, np.array([0.2, 0.1]))
    assert ended.canceled and controller.goal is None
    np.testing.assert_array_equal(controller.sample(5.0).q, [0.2, 0.1])



@pytest.mark.parametrize(("robot_stops", "code"), [(False, ErrorCode.SUCCESSFUL),
                                                   (True, ErrorCode.PATH_TOLERANCE_VIOLATED)])
def test_a_topic_message_replaces_the_trajectory_and_the_goal_stays_active_with_its_tolerances(robot_stops, code):
    # JTC's topic_callback (cpp 1381-1395) only replaces the trajectory: no preemption, and active_tolerances_
    # are written by a goal alone (cpp 1478), so the running goal ends on the topic's trajectory with its own
    controller = JointTrajectoryController(_settings())           # default path tolerance 0: unchecked
    goal = validate_trajectory(controller.settings, _trajectory(JOINTS, [(1.0, [1.0, 1.0])]), 0.0)
    tolerances, problem = goal_tolerances(controller.defaults, JOINTS,
                                          [Msg(name="joint1", position=0.05, velocity=0.0, acceleration=0.0)],
                                          [], 0.0)
    assert problem is None
    controller.follow(goal, 0.0, np.zeros(2), np.zeros(2), goal="g", tolerances=tolerances)
    message = validate_trajectory(controller.settings, _trajectory(JOINTS, [(0.5, [-0.5, 0.2])]), 0.3)
    q_at_message = controller.sample(0.3).q
    controller.follow_message(message, 0.3, q_at_message, np.zeros(2))
    assert controller.goal == "g" and controller.tolerances is tolerances
    t, update = _run(controller, lambda t: q_at_message if robot_stops else controller.sample(t).q,
                     np.arange(0.3, 3.0, 0.01))
    assert update.ended.goal == "g" and update.ended.outcome.code == code
    if robot_stops:
        assert t < 0.4 and "joint1 position error" in update.ended.outcome.message
    else:
        assert t >= 0.8 - 1e-9
        np.testing.assert_allclose(controller.sample(t + 1.0).q, [-0.5, 0.2])


# ---------------------------------------------------------------------------------------------- angle wraparound

@settings(max_examples=200, deadline=None)
@given(st.floats(-50.0, 50.0), st.floats(-50.0, 50.0))
def test_the_shortest_angle_is_the_argument_of_the_rotation_between_the_two(start, end):
    # independent: the argument of e^{i(end - start)} (angles::shortest_angular_distance's result, in (-π, π])
    angle = float(shortest_angle(np.array([start]), np.array([end]))[0])
    assert -np.pi <= angle < np.pi
    assert np.isclose(np.cos(angle), np.cos(end - start), atol=1e-9)
    assert np.isclose(np.sin(angle), np.sin(end - start), atol=1e-9)


def test_the_start_of_a_continuous_joint_is_unwrapped_to_the_first_point_as_trajectory_cpp_does():
    wraparound = np.array([True, True, False])
    q = np.array([2.0 * np.pi - 0.1, 0.0, 2.0 * np.pi - 0.1])
    first = np.array([0.1, np.pi, 0.1])
    # joint 1: 0.2 rad ahead, not 6.08 back; joint 2: exactly half a turn, towards first > q (traj 88-93);
    # joint 3: not a wraparound joint, unchanged
    np.testing.assert_allclose(unwrap_start(q, first, wraparound), [-0.1, 0.0, 2.0 * np.pi - 0.1], atol=1e-12)
    np.testing.assert_allclose(unwrap_start(np.array([0.0]), np.array([-np.pi]), np.array([True])), [0.0])


@pytest.mark.parametrize("wraparound", [True, False])
def test_a_continuous_joint_s_error_is_the_shortest_angle_and_its_motion_the_short_way(wraparound):
    settings_ = ControllerSettings(JOINTS, np.array([0.05, 0.05]), np.zeros(2),
                                   wraparound=np.array([wraparound, False]))
    controller = JointTrajectoryController(settings_)
    q0 = np.array([2.0 * np.pi - 0.1, 0.0])           # one turn on from -0.1 rad
    goal = validate_trajectory(settings_, _trajectory(JOINTS, [(1.0, [0.1, 0.5])]), 0.0)
    controller.follow(goal, 0.0, q0, np.zeros(2), goal="g")
    turn = np.array([2.0 * np.pi, 0.0])

    def robot(t):          # a robot on the reference's short way, its angle reported one turn on
        return np.interp(t, [0.0, 1.0], [-0.1, 0.1]) * np.array([1.0, 0.0]) + [0.0, 0.5 * min(t, 1.0)] + turn

    t, update = _run(controller, robot, np.arange(0.0, 2.0, 0.01))
    if not wraparound:       # the reference goes the long way round (6.08 rad in 1 s): the path tolerance trips
        assert update.ended.outcome.code == ErrorCode.PATH_TOLERANCE_VIOLATED and t < 0.05
        return
    assert update.ended.outcome.code == ErrorCode.SUCCESSFUL
    controller.follow(goal, 0.0, q0, np.zeros(2), goal="h")
    np.testing.assert_allclose(controller.sample(0.5).q, [0.0, 0.25], atol=1e-12)     # np.interp's midpoint
    # for the control law, the desired angle is moved by turns to within π of the measured one
    np.testing.assert_allclose(controller.sample(0.5, robot(0.5)).q, robot(0.5), atol=1e-12)


def test_the_continuous_joints_are_those_the_urdf_declares_continuous():
    from discrete_robot.control.joint_trajectory_controller import continuous_joints
    from discrete_robot.model.urdf_reader import model_from_urdf

    inertial = ('<inertial><origin xyz="0.5 0 0"/><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01" '
                'ixy="0" ixz="0" iyz="0"/></inertial>')
    urdf = f"""<robot name="mixed"><link name="base"/>
      <joint name="wheel" type="continuous"><parent link="base"/><child link="a"/><axis xyz="0 0 1"/></joint>
      <link name="a">{inertial}</link>
      <joint name="elbow" type="revolute"><parent link="a"/><child link="b"/><axis xyz="0 0 1"/>
        <limit lower="-2" upper="2" effort="10" velocity="1"/></joint>
      <link name="b">{inertial}</link>
      <joint name="slide" type="prismatic"><parent link="b"/><child link="c"/><axis xyz="1 0 0"/></joint>
      <link name="c">{inertial}</link></robot>"""
    model = model_from_urdf(urdf)
    np.testing.assert_array_equal(continuous_joints(model, ["slide", "wheel", "elbow"]), [False, True, False])


# ---------------------------------------------------------------------------------------------- integration

def test_points_without_positions_are_refused_unless_integration_is_allowed():
    no_positions = _trajectory(JOINTS, [(1.0, [0.0, 0.0]), (2.0, [], [0.1, 0.1])])
    with pytest.raises(InputError, match="point 1 has 0 positions"):
        validate_trajectory(_settings(allow_nonzero_velocity_at_trajectory_end=True), no_positions, 0.0)
    allowed = _settings(allow_integration_in_goal_trajectories=True, allow_nonzero_velocity_at_trajectory_end=True)
    assert np.isnan(validate_trajectory(allowed, no_positions, 0.0).positions[1]).all()
    with pytest.raises(InputError, match="point 1 has no positions, velocities or accelerations"):
        validate_trajectory(allowed, _trajectory(JOINTS, [(1.0, [0.0, 0.0]), (2.0, [])]), 0.0)
    with pytest.raises(InputError, match="point 0 has no positions and is not ahead of now"):
        validate_trajectory(allowed, _trajectory(JOINTS, [(0.0, [], [0.1, 0.1])]), 0.0)


def test_positions_integrated_from_accelerations_are_those_of_constant_acceleration():
    # the motion starts at rest from q0 with acceleration 0 (traj 62-72), so the trapezoid of deduce_from_
    # derivatives (trajectory.cpp 409-449) gives point 0 v = a/2, q = q0 + a/4; after it, under constant a, the
    # rule is exact: q(t) = q0 + a/4 + a/2 (t - 1) + a (t - 1)² / 2, q̇ = a/2 + a (t - 1)
    settings_ = _settings(allow_integration_in_goal_trajectories=True, allow_nonzero_velocity_at_trajectory_end=True)
    a, q0 = np.array([0.4, -0.2]), np.array([0.3, 0.1])
    message = _trajectory(JOINTS, [(1.0, [], [], a), (2.0, [], [], a), (3.0, [], [], a)])
    controller = JointTrajectoryController(settings_)
    controller.follow(validate_trajectory(settings_, message, 0.0), 0.0, q0, np.zeros(2), goal="g")
    for t in (1.0, 1.5, 2.0, 2.5, 3.0):          # between the points, quintics with the parabola's end conditions
        desired = controller.sample(t)
        np.testing.assert_allclose(desired.q, q0 + a / 4 + a / 2 * (t - 1) + a * (t - 1) ** 2 / 2, atol=1e-12)
        np.testing.assert_allclose(desired.qd, a / 2 + a * (t - 1), atol=1e-12)


def test_positions_integrated_from_velocities_follow_the_trapezoid_and_join_the_given_positions():
    settings_ = _settings(allow_integration_in_goal_trajectories=True)
    message = _trajectory(JOINTS, [(1.0, [], [0.2, 0.0]), (2.0, [0.5, 0.5], [0.0, 0.0])])
    controller = JointTrajectoryController(settings_)
    q0, qd0 = np.array([0.0, 0.1]), np.array([0.4, 0.0])
    controller.follow(validate_trajectory(settings_, message, 0.0), 0.0, q0, qd0, goal="g")
    # point 0 from the robot's state: q0 + (q̇0 + v0) Δt / 2; then a cubic (velocities at both ends)
    np.testing.assert_allclose(controller.sample(1.0).q, q0 + 0.5 * (qd0 + [0.2, 0.0]), atol=1e-12)
    np.testing.assert_allclose(controller.sample(2.0).q, [0.5, 0.5], atol=1e-12)
    np.testing.assert_allclose(controller.sample(1.0).qd, [0.2, 0.0], atol=1e-12)


# ---------------------------------------------------------------------------------------------- cmd_timeout

def test_cmd_timeout_takes_effect_only_above_the_goal_time():
    # cpp 1227-1246: 0 is off; a timeout not above constraints.goal_time is turned off with a warning
    assert effective_cmd_timeout(0.0, 0.0) == (0.0, None)
    assert effective_cmd_timeout(0.5, 0.0) == (0.5, None)
    timeout, problem = effective_cmd_timeout(0.5, 0.5)
    assert timeout == 0.0 and "must be higher than constraints.goal_time" in problem


@pytest.mark.parametrize("goal", [None, "g"])
def test_after_cmd_timeout_the_controller_holds_where_the_robot_is_and_a_running_goal_succeeds(goal):
    # a robot stuck at 0.9 short of a trajectory to 1.0: outside the goal tolerance, which without goal_time waits
    # for ever; cmd_timeout (cpp 355-375) holds the current position, and a running goal, its checks skipped on
    # that tick, is reported reached and the last point held (cpp 499-516)
    settings_ = ControllerSettings(JOINTS, np.zeros(2), np.array([0.01, 0.01]), cmd_timeout=0.325)
    controller = JointTrajectoryController(settings_)
    trajectory = validate_trajectory(settings_, _trajectory(JOINTS, [(0.5, [1.0, 1.0])]), 0.0)
    stuck = np.full(2, 0.9)
    if goal is None:
        controller.follow_message(trajectory, 0.0, np.zeros(2), np.zeros(2))
    else:
        controller.follow(trajectory, 0.0, np.zeros(2), np.zeros(2), goal=goal)
    times = np.arange(0.0, 2.0, 0.05)
    ended_at = None
    for t in times:
        update = controller.update(t, stuck, np.zeros(2))
        if controller.holding:
            ended_at = t
            break
    assert ended_at == pytest.approx(0.85)                 # the first tick more than 0.325 s after the last point
    if goal is None:
        assert update.ended is None
        np.testing.assert_array_equal(controller.sample(5.0).q, stuck)
    else:
        assert update.ended.goal == "g" and update.ended.outcome.code == ErrorCode.SUCCESSFUL
        assert update.ended.outcome.message.startswith("Goal successfully reached!")
        np.testing.assert_array_equal(controller.sample(5.0).q, [1.0, 1.0])
    # without cmd_timeout the controller keeps waiting
    patient = JointTrajectoryController(_settings())
    patient.follow_message(trajectory, 0.0, np.zeros(2), np.zeros(2))
    assert not any(patient.update(t, stuck, np.zeros(2)) is None or patient.holding for t in times)


# ---------------------------------------------------------------------------------------------- decelerate_on_cancel

def test_decelerate_on_cancel_takes_effect_only_with_every_deceleration_and_velocity_limit():
    # cpp 136-172: every joint needs max_deceleration_on_cancel > 0 and a URDF velocity limit > 0
    decelerations, limits = np.array([2.0, 3.0]), np.array([1.0, 1.0])
    assert effective_deceleration(False, decelerations, limits, JOINTS) == (None, None)
    np.testing.assert_array_equal(effective_deceleration(True, decelerations, limits, JOINTS)[0], decelerations)
    for bad, where in ((np.array([2.0, 0.0]), limits), (decelerations, np.array([1.0, np.inf]))):
        deceleration, problem = effective_deceleration(True, bad, where, JOINTS)
        assert deceleration is None and "joint [joint2]" in problem and "hold position" in problem


def test_a_cancel_with_decelerate_on_cancel_stops_at_constant_deceleration():
    # kinematics of a constant deceleration a from q̇0: q = q0 + q̇0 t - sign(q̇0) a t²/2 until t_s = |q̇0|/a, then
    # at rest at q0 + sign(q̇0) q̇0²/(2a) (decelerate_to_hold_position, cpp 1847-1933)
    deceleration = np.array([2.0, 4.0])
    settings_ = ControllerSettings(JOINTS, np.zeros(2), np.zeros(2), deceleration=deceleration, update_period=0.01)
    controller = JointTrajectoryController(settings_)
    goal = validate_trajectory(settings_, _trajectory(JOINTS, [(3.0, [1.0, 1.0])]), 0.0)
    controller.follow(goal, 0.0, np.zeros(2), np.zeros(2), goal="g")
    q0, qd0 = np.array([0.3, -0.2]), np.array([1.0, -0.6])
    ended = controller.cancel("g", 1.0, q0, qd0)
    assert ended.canceled and controller.holding
    stop_time = np.abs(qd0) / deceleration                                   # 0.5 s and 0.15 s
    for t in (0.0, 0.05, 0.123, 0.3, 0.437, 0.6, 2.0):       # off the segments where a joint comes to rest
        expected = np.where(t < stop_time, q0 + qd0 * t - 0.5 * np.sign(qd0) * deceleration * t ** 2,
                            q0 + np.sign(qd0) * qd0 ** 2 / (2.0 * deceleration))
        desired = controller.sample(1.0 + t)
        np.testing.assert_allclose(desired.q, expected, atol=1e-9)
        np.testing.assert_allclose(desired.qd, np.where(t < stop_time, qd0 - np.sign(qd0) * deceleration * t, 0.0),
                                   atol=1e-9)
