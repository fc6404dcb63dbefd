"""The planning service core (planning.planner): request validation, joint order, both methods."""

from pathlib import Path

import numpy as np
import pytest

from discrete_robot.errors import InfeasibleError, InputError
from discrete_robot.model.description import load_model
from discrete_robot.planning.planner import ArmState, PlanMethod, PlannerSettings, TrajectoryPlanner

CONFIG = Path(__file__).resolve().parents[2] / "config"
START, GOAL = [0.0, 0.0], [np.pi / 2, np.pi / 4]


@pytest.fixture(scope="module")
def planner():
    return TrajectoryPlanner(load_model(CONFIG / "planar_2link.yaml"), PlannerSettings(grid_points=40))


def test_requests_in_any_joint_order_give_the_same_plan_in_the_model_order(planner):
    ordered = planner.plan([START, GOAL])
    swapped = planner.plan([START[::-1], GOAL[::-1]], joint_names=["joint2", "joint1"], max_effort=[10.0, 20.0])
    assert swapped.joint_names == ("joint1", "joint2")
    np.testing.assert_array_equal(swapped.positions, ordered.positions)
    assert swapped.duration == ordered.duration
    assert ordered.method is PlanMethod.MIN_TIME
    n_points = ordered.t.size
    for array in (ordered.positions, ordered.velocities, ordered.accelerations, ordered.efforts):
        assert array.shape == (n_points, 2)
    # the last effort holds the arm at the goal: the gravity torque there, ∇V = 9.81 (1.5 cos q1 + 0.5 cos(q1+q2), …)
    holding = 9.81 * np.array([1.5 * np.cos(GOAL[0]) + 0.5 * np.cos(sum(GOAL)), 0.5 * np.cos(sum(GOAL))])
    np.testing.assert_allclose(ordered.efforts[-1], holding, atol=1e-12)


def test_min_effort_request_plans_a_dmoc_motion_of_the_given_duration(planner):
    plan = planner.plan([START, GOAL], method="min_effort", duration=1.5, time_step_hint=0.05)
    assert plan.method is PlanMethod.MIN_EFFORT
    assert plan.duration == pytest.approx(1.5)
    np.testing.assert_allclose(plan.positions[-1], GOAL, atol=1e-9)
    np.testing.assert_allclose(plan.velocities[-1], 0.0, atol=1e-9)
    assert np.all(np.abs(plan.efforts[:-1]) <= np.array([20.0, 10.0]) + 1e-9)


@pytest.mark.parametrize(("kwargs", "error", "reason"), [
    ({"waypoints": [START, [0.0, 3.5]]}, InfeasibleError, "joint2.*outside its limits"),
    ({"waypoints": [START, GOAL], "max_effort": [19.0, 10.0]}, InfeasibleError, "joint1.*against gravity"),
    ({"waypoints": [START, [np.nan, 0.0]]}, InputError, "finite"),
    ({"waypoints": [START, [0.1, 0.2, 0.3]]}, InputError, "waypoint 1: expected 2 values"),
    ({"waypoints": [START, GOAL], "joint_names": ["joint1", "joint1"]}, InputError, "do not match"),
    ({"waypoints": [START, GOAL], "max_effort": [20.0]}, InputError, "max_effort: expected 2"),
    ({"waypoints": [START, GOAL], "max_velocity": [1.0, -1.0]}, InputError, "velocity limits.*> 0"),
    ({"waypoints": [START, GOAL], "method": "fast"}, InputError, "unknown method"),
    ({"waypoints": [START, [0.5, 0.5], [0.5, 0.5], GOAL], "method": "min_effort", "duration": 1.0}, InputError,
     "waypoint repeats"),
    ({"waypoints": [START, GOAL], "method": "min_effort", "duration": 100.0}, InputError, "steps"),
])
def test_bad_requests_raise_with_a_reason(planner, kwargs, error, reason):
    with pytest.raises(error, match=reason):
        planner.plan(**kwargs)


def test_an_omitted_start_is_the_arms_measured_state(planner):
    """One waypoint (or from_current_state) = plan from where the arm is: the plan starts exactly there."""
    here = ArmState(np.array([0.2, -0.1]), np.zeros(2))
    plan = planner.plan([GOAL], current=here)
    np.testing.assert_array_equal(plan.positions[0], here.positions)
    np.testing.assert_allclose(plan.positions[-1], GOAL, atol=1e-12)
    via = planner.plan([[0.5, 0.0], GOAL], current=here, from_current_state=True)
    np.testing.assert_array_equal(via.positions[0], here.positions)
    assert via.duration > plan.duration


@pytest.mark.parametrize(("kwargs", "reason"), [
    ({"waypoints": [GOAL]}, "start is omitted but the arm's state is unknown"),
    ({"waypoints": [START, GOAL], "current": ArmState(np.array([0.3, 0.0]), np.zeros(2))},
     r"waypoint 0 is 0\.3 rad from the arm's current state \(joint 'joint1'"),
    ({"waypoints": [GOAL], "current": ArmState(np.zeros(2), np.array([-1.87, -3.84]))},
     r"the arm is moving \(joint 'joint2' at -3\.84"),
])
def test_a_start_that_is_not_the_arms_state_is_refused(planner, kwargs, reason):
    with pytest.raises(InputError, match=reason):
        planner.plan(**kwargs)


def test_min_effort_respects_the_velocity_and_position_limits(planner):
    """Without position bounds the least-effort swing takes joint 2 past π (its limit); with them it stays
    inside, and a velocity limit below the mean speed the motion needs (π/2 in 1.5 s: 1.05 rad/s) is refused."""
    with pytest.raises(InfeasibleError, match="no motion found within the torque, velocity and position limits"):
        planner.plan([START, GOAL], method="min_effort", duration=1.5, time_step_hint=0.05, max_velocity=[0.9, 5.0])
    plan = planner.plan([START, GOAL], method="min_effort", duration=1.5, time_step_hint=0.05,
                        max_velocity=[4.0, 9.0])
    assert np.all(np.abs(plan.velocities) <= [4.0, 9.0])
    assert np.all(np.abs(plan.positions) <= np.pi + 1e-9)  # the bound is active: joint 2 touches π
