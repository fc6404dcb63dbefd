"""Computed torque on the free-floating space robot (discrete_robot.control.floating_base): checked with the forward
dynamics (the accelerations it asks for are the ones the robot gets) and with the conservation of both momenta
under internal torques while the arms track a motion."""

from dataclasses import replace

import numpy as np
import pytest

from discrete_robot.control.floating_base import controlled_torques
from discrete_robot.model.description import load_model, package_config_path
from discrete_robot.space.recursive import forward_dynamics
from discrete_robot.space.robot import SpaceRobot
from discrete_robot.space.simulation import Simulator
from discrete_robot.space.state import rest_state


@pytest.fixture(scope="module")
def robot():
    return SpaceRobot.from_model(load_model(package_config_path("space_robot_dual_arm.yaml")))


@pytest.fixture(scope="module")
def drifting(robot):
    return replace(rest_state(robot), base_velocity=np.array([0.1, -0.05, 0.02]),
                   base_angular_velocity=np.array([0.01, 0.02, -0.03]), joint_rates=np.linspace(-0.2, 0.3, robot.dof))


def test_the_controlled_joints_get_the_accelerations_asked_and_the_others_their_torques(robot, drifting):
    controlled, asked = np.arange(6), np.linspace(-1.0, 1.0, 6)
    torques = controlled_torques(robot, drifting, (), np.full(robot.dof, 0.3), controlled, asked)
    np.testing.assert_array_equal(torques[6:], 0.3)
    np.testing.assert_allclose(forward_dynamics(robot, drifting, (), torques)[6:12], asked, atol=1e-12)


def test_both_momenta_stay_while_both_arms_track_a_motion(robot, drifting):
    simulator = Simulator(robot, drifting)
    start = simulator.sample()
    for k in range(100):
        sample = simulator.sample()
        target = 0.3 * np.sin(0.1 * k) * np.ones(robot.dof)
        accelerations = 100.0 * (target - sample.joint_positions) - 20.0 * sample.state.joint_rates
        simulator.set_loads((), controlled_torques(robot, sample.state, (), np.zeros(robot.dof),
                                                   np.arange(robot.dof), accelerations))
        simulator.advance(0.002, 10)
    end = simulator.sample()
    assert np.abs(end.joint_positions - start.joint_positions).max() > 0.1, "the arms moved"
    assert np.abs(end.state.base_angular_velocity - start.state.base_angular_velocity).max() > 1e-3, \
        "the base reacted"
    for now, then in ((end.momentum.linear, start.momentum.linear), (end.momentum.angular, start.momentum.angular)):
        assert np.linalg.norm(now - then) <= 1e-10 * np.linalg.norm(then)
