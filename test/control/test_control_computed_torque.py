"""The fixed-base simulator's controllers (discrete_robot.control.computed_torque) against independent truths: the
hold is gravity compensation exactly (τ = g(q) from recursive Newton–Euler at the held pose), so the pose stays;
effort commands are clipped at the model's limits and those joints reported."""

from pathlib import Path

import numpy as np

from discrete_robot.control.computed_torque import EffortCommand, TrajectoryTracking, at_limit
from discrete_robot.control.joint_trajectory_controller import ControllerSettings, JointTrajectoryController
from discrete_robot.discrete.simulation import FixedStepSimulation
from discrete_robot.model.dynamics import RigidBodySystem
from discrete_robot.model.urdf_reader import model_from_urdf

ARM = (Path(__file__).parent / "arm3_ros2_control.urdf").read_text()


def _holding(system, controlled: np.ndarray, pose: np.ndarray) -> TrajectoryTracking:
    """The tracker on a JTC that holds ``pose`` on the ``controlled`` joints, the others held where they are."""
    n = system.dof
    controller = JointTrajectoryController(ControllerSettings(tuple(f"j{i}" for i in controlled),
                                                              np.zeros(controlled.size), np.zeros(controlled.size)))
    controller.hold(0.0, pose[controlled])
    tracking = TrajectoryTracking(system, controlled, np.full(n, np.inf), controller.sample,
                                  lambda: (np.full(n, 100.0), np.full(n, 20.0)))
    tracking.take_over(pose)
    return tracking


def test_the_hold_is_exact_gravity_compensation_and_keeps_the_pose():
    system = RigidBodySystem(model_from_urdf(ARM))
    pose, rest = np.array([0.3, -0.5, 0.8]), np.zeros(3)
    tracking = _holding(system, np.array([0, 1]), pose)
    # at the held pose and at rest the law's output is g(q), here from recursive Newton–Euler: ID(q, 0, 0)
    np.testing.assert_allclose(tracking.update(0.0, pose, rest), system.inverse_dynamics(pose, rest, rest),
                               rtol=1e-12, atol=1e-12)
    simulation = FixedStepSimulation(system, "discrete", 1e-3, pose, rest)
    simulation.step(200, tracking.update)
    np.testing.assert_allclose(simulation.q, pose, atol=1e-9)
    np.testing.assert_allclose(simulation.qd, 0.0, atol=1e-9)


def test_the_other_joints_are_held_where_the_controller_took_over_until_it_releases():
    system = RigidBodySystem(model_from_urdf(ARM))
    tracking = _holding(system, np.array([0, 1]), np.array([0.3, -0.5, 0.8]))
    tracking.take_over(np.array([1.0, 1.0, 1.0]))          # a second goal: the first take-over's hold stands
    np.testing.assert_array_equal(tracking.held, [0.3, -0.5, 0.8])
    tracking.release()
    tracking.take_over(np.array([1.0, 1.0, 1.0]))
    np.testing.assert_array_equal(tracking.held, [1.0, 1.0, 1.0])


def test_effort_commands_are_clipped_at_the_limits_and_the_clipped_joints_reported():
    limits = np.array([20.0, 10.0, np.inf])
    command = EffortCommand(np.arange(3), limits)
    np.testing.assert_array_equal(command.update(0.0, None, None), [0.0, 0.0, 0.0])
    command.command = np.array([30.0, -10.0, 1e9])
    tau = command.update(0.0, None, None)
    np.testing.assert_array_equal(tau, [20.0, -10.0, 1e9])
    np.testing.assert_array_equal(at_limit(tau, limits), [0, 1])
    np.testing.assert_array_equal(at_limit(np.array([19.9, 0.0, 1e300]), limits), [])
