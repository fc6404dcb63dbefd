"""A fixed-base tree split into its independent branches: Baxter's head and two arms (each with its mimic finger),
the mass matrix of the whole block-diagonal by branch, each block the branch's own; a chain stays one branch."""

import warnings

import numpy as np
import pytest

from discrete_robot.model.branches import branches
from discrete_robot.model.description import load_model
from discrete_robot.model.dynamics import RigidBodySystem
from discrete_robot.model.example_robots import example_robot_path


@pytest.fixture(scope="module")
def baxter():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # its meshes are not resolved, and need not be
        return load_model(example_robot_path("baxter"))


def test_baxter_splits_into_its_head_and_two_arms_each_with_its_mimic_finger(baxter):
    parts = branches(baxter)
    assert [part.model.dof for part in parts] == [1, 8, 8]
    assert sorted(np.concatenate([part.dofs for part in parts]).tolist()) == list(range(baxter.dof))
    assert [len(part.model.mimic) for part in parts] == [0, 1, 1]
    for part in parts:
        assert list(part.model.joint_names) == [baxter.joint_names[i] for i in part.dofs]


def test_the_whole_mass_matrix_and_gravity_are_the_branches_own(baxter):
    """a(q) of the whole (the composite-rigid-body kernel, mimic fingers folded) is zero between branches and equals
    each branch's own a(q) on its block; ∂V/∂q too (gravity acts on each branch alone)."""
    whole, parts = RigidBodySystem(baxter), branches(baxter)
    rng = np.random.default_rng(4)
    for _ in range(3):
        q = rng.uniform(baxter.lower, baxter.upper)
        M, gradient = whole.mass_matrix(q), whole.potential_gradient(q)
        covered = np.zeros_like(M, dtype=bool)
        for part in parts:
            own = RigidBodySystem(part.model)
            block = np.ix_(part.dofs, part.dofs)
            np.testing.assert_allclose(M[block], own.mass_matrix(q[part.dofs]), rtol=0, atol=1e-13)
            np.testing.assert_allclose(gradient[part.dofs], own.potential_gradient(q[part.dofs]), rtol=0, atol=1e-12)
            covered[block] = True
        assert np.abs(M[~covered]).max() <= 1e-15


def test_a_chain_and_a_hand_with_fingers_stay_one_branch():
    for name in ("ur5", "panda"):
        (part,) = branches(load_model(example_robot_path(name)))
        assert part.dofs.tolist() == list(range(part.model.dof))
