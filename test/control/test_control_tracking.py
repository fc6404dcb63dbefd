"""Trajectory references, computed-torque tracking and the fixed-step live simulation (the node's core)."""

import numpy as np
import pytest

from discrete_robot.control.computed_torque import saturate, tracking_torques
from discrete_robot.control.trajectory import TrajectoryReference
from discrete_robot.discrete.simulation import FixedStepSimulation
from discrete_robot.errors import ConvergenceError, InputError
from discrete_robot.model.description import load_model, package_config_path
from discrete_robot.model.dynamics import RigidBodySystem


@pytest.fixture(scope="module")
def system():
    return RigidBodySystem(load_model(package_config_path("planar_2link.yaml")))


def test_computed_torque_tracks_a_trajectory_that_the_unforced_arm_does_not_follow(system):
    start = np.array([-np.pi / 2, 0.0])
    reference = TrajectoryReference(np.array([0.0, 1.0, 2.0]), np.array([start, [-1.0, 0.5], [-0.5, 1.0]]),
                                    np.array([[0.0, 0.0], [0.5, 0.5], [0.0, 0.0]]))
    limits = system.model.effort_limits
    tracked = FixedStepSimulation(system, "discrete", 0.01, start, np.zeros(2))
    errors = []

    def control(t, q, qd):
        errors.append(np.max(np.abs(reference.sample(t).q - q)))
        return tracking_torques(system, q, qd, reference.sample(t), 100.0, 20.0, limits)

    tracked.advance(3.0, control)
    assert tracked.time == pytest.approx(3.0)
    np.testing.assert_allclose(tracked.q, [-0.5, 1.0], atol=1e-3)
    assert max(errors) < 0.02                                                    # close all along the way
    assert np.all(np.abs(tracked.tau) <= limits)
    # inverse dynamics at the reference is the torque that holds the final pose: the gravity torque
    np.testing.assert_allclose(tracked.tau, system.potential_gradient(tracked.q), atol=1e-2)


def test_saturation_clips_at_the_effort_limits():
    np.testing.assert_array_equal(saturate(np.array([30.0, -30.0]), np.array([20.0, 10.0])), [20.0, -10.0])
    np.testing.assert_array_equal(saturate(np.array([1e9]), np.array([np.inf])), [1e9])


def test_fixed_step_simulation_carries_remainders_and_keeps_the_step(system):
    simulation = FixedStepSimulation(system, "rk45", 0.01, [0.1, 0.2], [0.0, 0.0])
    counts = [simulation.advance(0.025, lambda t, q, qd: np.zeros(2)) for _ in range(4)]
    assert counts == [2, 3, 2, 3] and simulation.time == pytest.approx(0.1)
    with pytest.raises(InputError, match="initial positions"):
        FixedStepSimulation(system, "discrete", 0.01, [0.1], [0.0, 0.0])


def test_a_failing_step_is_retried_as_sub_steps_then_reported_with_the_state_kept(system):
    class FailsAboveStep:
        def __init__(self, largest):
            self.largest, self.calls = largest, []

        def step(self, q, qd, tau, h):
            self.calls.append(h)
            if h > self.largest:
                raise ConvergenceError("too large")
            return q + h * qd, qd + h

    simulation = FixedStepSimulation(system, "discrete", 0.04, [0.0, 0.0], [0.0, 0.0])
    simulation.stepper = FailsAboveStep(0.015)
    simulation.advance(0.04, lambda t, q, qd: np.zeros(2))
    assert simulation.stepper.calls == [0.04, 0.02, 0.01, 0.01, 0.01, 0.01]
    np.testing.assert_allclose(simulation.qd, [0.04, 0.04])
    simulation.stepper = FailsAboveStep(0.001)
    with pytest.raises(ConvergenceError, match="sub-steps"):
        simulation.advance(0.04, lambda t, q, qd: np.zeros(2))
    np.testing.assert_allclose(simulation.qd, [0.04, 0.04])
    assert simulation.time == pytest.approx(0.04)
