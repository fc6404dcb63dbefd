"""The compiled recursive Boltzmann–Hamel kernels on randomly generated trees (mixed 1-, 2- and 3-DOF rotational
and prismatic joints, branching arms): against the Newton–Euler formulation, and the conservation laws of the
integrated motion."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from discrete_robot.model.description import load_model, model_from_dict, package_config_path
from discrete_robot.space import newton_euler, recursive
from discrete_robot.space.loads import ExternalLoad, LoadFrame
from discrete_robot.space.robot import JointKind, SpaceRobot
from discrete_robot.space.simulation import Simulator
from discrete_robot.space.state import random_state, rest_state
from random_trees import random_tree_model_data


def _tree(links: int, seed: int) -> SpaceRobot:
    data = random_tree_model_data(links, seed)
    # every fourth joint slides instead (along its first axis, a spherical joint's along z): prismatic joints mixed in
    for link in data["links"][3::4]:
        joint = link["joint"]
        joint["axis"] = joint.pop("axes")[0] if "axes" in joint else joint.get("axis", [0.0, 0.0, 1.0])
        joint["type"] = "prismatic"
    return SpaceRobot.from_model(model_from_dict(data))


def test_the_generated_trees_branch_and_mix_every_joint_kind():
    robot = _tree(12, 5)
    assert {link.kind for link in robot.links} == set(JointKind)
    parents = [link.parent for link in robot.links]
    assert len(set(parents)) < len(parents), "some body carries two links"
    assert any(parent > 0 and parents.count(parent) > 1 for parent in parents), "an arm branches"


@settings(max_examples=25, deadline=None)
@given(links=st.integers(1, 9), seed=st.integers(0, 2 ** 16))
def test_compiled_forward_dynamics_agrees_with_newton_euler_on_random_trees(links, seed):
    robot = _tree(links, seed)
    rng = np.random.default_rng(seed)
    state = random_state(robot, rng, speed=2.0)
    loads = [ExternalLoad(body=robot.body_names[rng.integers(robot.body_count)], force=rng.normal(size=3) * 5.0,
                          point=rng.normal(size=3), moment=rng.normal(size=3),
                          frame=LoadFrame.BODY if k else LoadFrame.WORLD) for k in range(2)]
    torques = rng.normal(size=robot.dof) * 5.0
    ours = recursive.forward_dynamics(robot, state, loads, torques)
    theirs = newton_euler.forward_dynamics(robot, state, loads, torques)
    assert np.max(np.abs(ours - theirs)) <= 1e-9 * max(1.0, np.max(np.abs(theirs)))
    required = recursive.inverse_dynamics(robot, state, theirs, loads)
    np.testing.assert_allclose(required[6:], torques, atol=1e-8 * max(1.0, np.abs(torques).max()))
    np.testing.assert_allclose(required[:6], 0.0, atol=1e-8 * max(1.0, np.abs(torques).max()))


@settings(max_examples=6, deadline=None)
@given(links=st.integers(2, 7), seed=st.integers(0, 2 ** 16))
def test_free_motion_of_random_trees_keeps_momenta_to_round_off_and_energy_to_the_method_order(links, seed):
    robot = _tree(links, seed)
    start = random_state(robot, np.random.default_rng(seed), speed=0.5)
    before = recursive.momentum_report(robot, start)
    energies = []
    for h in (4e-3, 2e-3):
        simulator = Simulator(robot, start)
        for _ in range(int(round(0.2 / h))):
            simulator.step(h)
        after = simulator.sample().momentum
        scale = np.linalg.norm(before.linear) + 1e-12
        assert np.linalg.norm(after.linear - before.linear) <= 1e-12 * max(1.0, scale)
        assert np.linalg.norm(after.angular - before.angular) <= 1e-10 * max(1.0, np.linalg.norm(before.angular))
        energies.append(abs(after.kinetic_energy - before.kinetic_energy))
    # fourth order: halving h divides the energy error by ~16 (allow 6 for the start of the asymptotic range),
    # unless both are already at round-off
    assert energies[1] <= max(energies[0] / 6.0, 1e-11 * before.kinetic_energy)


def test_a_spin_up_that_broke_the_fixed_step_keeps_moving_and_conserves_energy_afterwards():
    """10 N m on each of the dual arm's 12 joints for 1 s spins a link about its long axis (0.076 kg m²) to
    ~130 rad/s; at the node's former 0.05 s step RK4 then diverged for good. Sub-stepping keeps it exact."""
    robot = SpaceRobot.from_model(load_model(package_config_path("space_robot_dual_arm.yaml")))
    simulator = Simulator(robot, rest_state(robot), joint_torques=np.full(robot.dof, 10.0))
    for _ in range(20):
        simulator.step(0.05)
    simulator.set_loads((), np.zeros(robot.dof))
    energy = simulator.sample().momentum.kinetic_energy
    for _ in range(20):
        simulator.step(0.05)
    sample = simulator.sample()
    assert np.abs(sample.state.joint_rates).max() > 100.0
    assert sample.momentum.kinetic_energy == pytest.approx(energy, rel=1e-5)
    np.testing.assert_allclose(sample.momentum.linear, 0.0, atol=1e-9)
