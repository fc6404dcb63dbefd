"""Baxter's head and arms stepped branch by branch (BranchStepper): the same motion as the whole tree's discrete
step (DiscreteStepper on all 17 DOFs, a second evaluation of the same equations), T + V kept, and every branch
the same number of steps when one of them reaches a joint stop inside a compiled run."""

import warnings

import numpy as np
import pytest

from discrete_robot.discrete.integrators import BranchStepper, DiscreteStepper
from discrete_robot.discrete.simulation import FixedStepSimulation
from discrete_robot.model.description import load_model
from discrete_robot.model.dynamics import RigidBodySystem
from discrete_robot.model.example_robots import example_robot_path


@pytest.fixture(scope="module")
def baxter():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # its meshes are not resolved, and need not be
        model = load_model(example_robot_path("baxter"))
    return model, RigidBodySystem(model)


def _pair(model, system, limits: bool):
    """Two simulations from the same state: split into branches (the default) and the whole tree at once."""
    q0 = np.clip(model.initial_positions + 0.1, model.lower, model.upper)
    qd0 = np.linspace(0.4, -0.4, model.dof)
    bounds = (model.lower, model.upper) if limits else (None, None)
    split = FixedStepSimulation(system, "discrete", 1e-3, q0, qd0, *bounds)
    whole = FixedStepSimulation(system, "discrete", 1e-3, q0, qd0, *bounds)
    whole.stepper = DiscreteStepper(system)
    assert isinstance(split.stepper, BranchStepper)
    return split, whole


def test_branch_by_branch_is_the_whole_trees_motion_and_keeps_t_plus_v(baxter):
    model, system = baxter
    split, whole = _pair(model, system, limits=False)
    energy = split.energy()
    for _ in range(4):
        for simulation in (split, whole):
            simulation.step(50, np.zeros(model.dof))
        assert abs(split.energy() - energy) <= 1e-12 * abs(energy)
    np.testing.assert_allclose(split.q, whole.q, rtol=0, atol=1e-9)
    np.testing.assert_allclose(split.qd, whole.qd, rtol=0, atol=1e-8)
    assert split.time == whole.time


def test_a_stop_in_one_branch_ends_every_branchs_run_at_the_same_step(baxter):
    """Released near its limits, a joint of one arm reaches its stop inside a compiled run: every branch takes the
    same steps as the whole tree does, the same joints reach their limits, and the states still agree."""
    model, system = baxter
    split, whole = _pair(model, system, limits=True)
    for simulation in (split, whole):
        simulation.step(300, np.zeros(model.dof))
    assert split.reached_upper.any() or split.reached_lower.any()
    assert np.array_equal(split.reached_lower, whole.reached_lower)
    assert np.array_equal(split.reached_upper, whole.reached_upper)
    np.testing.assert_allclose(split.q, whole.q, rtol=0, atol=1e-8)
    assert split.stop_energy == pytest.approx(whole.stop_energy, rel=1e-6)
