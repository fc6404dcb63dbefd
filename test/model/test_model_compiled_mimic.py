"""Mimic followers inside the compiled kernel: its fold of the expanded tree's terms (an index scatter) against
the dense projection Sᵀ ā S (test/support/mimic_projection.py), against Newton–Euler and central differences, on
the Panda, Baxter and a robot with several followers per leader and a prismatic follower; the discrete step
they drive against the same equations evaluated with numpy on the projected terms."""

import numpy as np
import pytest

from derivative_rows import check_lagrangian_gradient, check_rows_asked_for
from discrete_robot.discrete.dynamic_model import DiscreteDynamicModel
from discrete_robot.model import compiled as arm_compiled
from discrete_robot.model.description import load_model
from discrete_robot.model.dynamics import RigidBodySystem
from discrete_robot.model.example_robots import example_robot_path
from discrete_robot.model.mimic import expanded
from discrete_robot.model.urdf_reader import model_from_urdf
from mimic_projection import project_terms


def _link(name: str, mass: float, com: str, inertia: str) -> str:
    return (f'<link name="{name}"><inertial><origin xyz="{com}"/><mass value="{mass}"/>'
            f'<inertia {inertia} ixy="0.0005" ixz="0" iyz="0.0003"/></inertial></link>')


def _joint(name: str, kind: str, parent: str, child: str, origin: str, axis: str, mimic: str = "") -> str:
    return (f'<joint name="{name}" type="{kind}"><parent link="{parent}"/><child link="{child}"/>'
            f'<origin xyz="{origin}" rpy="0.1 -0.2 0.3"/><axis xyz="{axis}"/>'
            f'<limit lower="-3" upper="3" effort="10" velocity="5"/>{mimic}</joint>')


#: two leaders; hinge leads a revolute and a prismatic follower, elbow a revolute one with a negative multiplier
GRIPPER = ('<robot name="gripper"><link name="base"/>'
           + _link("arm", 2.0, "0.4 0.05 0", 'ixx="0.03" iyy="0.05" izz="0.04"')
           + _link("forearm", 1.5, "0.3 0 0.02", 'ixx="0.02" iyy="0.03" izz="0.03"')
           + _link("pad_a", 0.4, "0.02 0.01 0", 'ixx="0.004" iyy="0.005" izz="0.006"')
           + _link("pad_b", 0.3, "0 0.03 0.01", 'ixx="0.004" iyy="0.005" izz="0.006"')
           + _link("pad_c", 0.5, "0.05 0 0", 'ixx="0.005" iyy="0.006" izz="0.004"')
           + _joint("hinge", "revolute", "base", "arm", "0 0 0.1", "0 0 1")
           + _joint("elbow", "revolute", "arm", "forearm", "0.8 0 0", "0 1 0")
           + _joint("finger_a", "revolute", "arm", "pad_a", "0.3 0.1 0", "1 0 0",
                    '<mimic joint="hinge" multiplier="0.7" offset="0.2"/>')
           + _joint("finger_b", "prismatic", "forearm", "pad_b", "0.5 0 0", "0 1 0",
                    '<mimic joint="hinge" multiplier="0.05" offset="0.01"/>')
           + _joint("finger_c", "revolute", "forearm", "pad_c", "0.6 0 0.1", "0 0.6 0.8",
                    '<mimic joint="elbow" multiplier="-1.3" offset="-0.1"/>')
           + "</robot>")


@pytest.fixture(scope="module", params=["gripper", "panda", "baxter"])
def mimic_model(request):
    if request.param == "gripper":
        return model_from_urdf(GRIPPER)
    return load_model(example_robot_path(request.param))


def test_gripper_has_several_followers_per_leader_and_a_prismatic_one():
    model = model_from_urdf(GRIPPER)
    assert sorted(m.leader for m in model.mimic) == ["elbow", "hinge", "hinge"]
    assert model.dof == 2 and arm_compiled.model_dof(arm_compiled.compile_model(model)) == 2
    assert any(not m.link.joint.type.rotational for m in model.mimic)


def test_compiled_fold_equals_the_dense_projection(mimic_model):
    """a, V, ∂a/∂q and ∂V/∂q from the kernel equal Sᵀ ā S, V̄, the projected ∂ā/∂q̄ and Sᵀ ∂V̄/∂q̄ of the expanded
    model evaluated as a mimic-free tree."""
    system = RigidBodySystem(mimic_model)
    full, S, c = expanded(mimic_model)
    tree = RigidBodySystem(full)
    q = np.random.default_rng(0).uniform(-1.5, 1.5, (3, system.dof))
    fast = system.evaluate(q, derivatives=True)
    slow = project_terms(S, tree.evaluate(q @ S.T + c, derivatives=True))
    for name in ("M", "potential_energy", "dM", "g"):
        value = getattr(slow, name)
        np.testing.assert_allclose(getattr(fast, name), value, rtol=0.0, atol=1e-13 * max(1.0, np.abs(value).max()),
                                   err_msg=name)
    assert np.array_equal(fast.M, np.swapaxes(fast.M, -1, -2)) and np.array_equal(fast.dM, np.swapaxes(fast.dM, -1, -2))


def test_gripper_terms_agree_with_newton_euler_and_central_differences():
    system = RigidBodySystem(model_from_urdf(GRIPPER))
    n = system.dof
    for q in np.random.default_rng(1).uniform(-1.5, 1.5, (3, n)):
        bias = system.inverse_dynamics(q, np.zeros(n), np.zeros(n))
        columns = np.column_stack([system.inverse_dynamics(q, np.zeros(n), e) - bias for e in np.eye(n)])
        terms = system.evaluate(q, derivatives=True)
        np.testing.assert_allclose(terms.M, columns, atol=1e-12 * np.abs(terms.M).max())
        np.testing.assert_allclose(terms.g, bias, atol=1e-12 * np.abs(bias).max())
        h = 1e-5
        for k, e in enumerate(np.eye(n) * h):
            dM = (system.mass_matrix(q + e) - system.mass_matrix(q - e)) / (2 * h)
            dV = (system.potential(q + e) - system.potential(q - e)) / (2 * h)
            np.testing.assert_allclose(terms.dM[k], dM, atol=1e-8 * np.abs(terms.M).max())
            assert abs(terms.g[k] - dV) <= 1e-8 * np.abs(terms.g).max()


def test_derivative_rows_and_only_fold_the_rows_asked_for_and_no_other(mimic_model):
    """The discrete step asks for some rows (derivative_rows) or one (only): with followers, a model row needs every
    tree row of its column; the rows written are bit for bit the full evaluation's."""
    model = arm_compiled.compile_model(mimic_model)
    n = arm_compiled.model_dof(model)
    rng = np.random.default_rng(3)
    q = rng.uniform(-1.5, 1.5, (4, n))
    full = check_rows_asked_for(model, q, rng)
    for only in {0, n - 1, int(model.follower_leader[0])}:
        one = arm_compiled.create_data(model, 4, derivatives=True)
        one.dM[...] = np.nan
        arm_compiled.rigid_body_terms(model, one, q, True, only)
        np.testing.assert_array_equal(one.dM[:, only], full.dM[:, only])
        np.testing.assert_array_equal(one.g[:, only], full.g[:, only])
        assert np.isnan(np.delete(one.dM, only, axis=1)).all()


def test_the_lagrangian_gradient_folds_onto_the_leaders(mimic_model):
    """The O(n) gradient ∂/∂q [V − ½ uᵀ a w] with followers: the tree's, at ū = S u and w̄ = S w, folded by Sᵀ,
    equals the one from the folded ∂a/∂q; the rows asked for alone."""
    model = arm_compiled.compile_model(mimic_model)
    rng = np.random.default_rng(8)
    check_lagrangian_gradient(model, rng.uniform(-1.5, 1.5, (4, arm_compiled.model_dof(model))), rng)


class Projected:
    """The gripper through the LagrangianSystem protocol alone, its terms the dense projection of the expanded
    tree's: the discrete model then runs its numpy equations and Newton loop, a second implementation."""

    vectorized = True

    def __init__(self, model):
        full, self.S, self.c = expanded(model)
        self.tree = RigidBodySystem(full)
        self.dof = model.dof

    def evaluate(self, q, derivatives=False):
        return project_terms(self.S, self.tree.evaluate(np.asarray(q) @ self.S.T + self.c, derivatives))

    def mass_matrix(self, q):
        return self.evaluate(q).M

    def mass_matrix_derivatives(self, q):
        return self.evaluate(q, True).dM

    def potential(self, q):
        return self.evaluate(q).potential_energy

    def potential_gradient(self, q):
        return self.evaluate(q, True).g


def test_compiled_step_of_a_mimic_model_equals_the_numpy_step_on_projected_terms():
    model = model_from_urdf(GRIPPER)
    system = RigidBodySystem(model)
    fast_model = DiscreteDynamicModel(system)
    assert fast_model.compiled is not None
    rng = np.random.default_rng(2)
    q0, qd0 = rng.uniform(-1.0, 1.0, system.dof), rng.normal(size=system.dof)
    fast, slow = (m.simulate(q0, qd0, 1e-3, 50) for m in (fast_model, DiscreteDynamicModel(Projected(model))))
    np.testing.assert_allclose(fast.q, slow.q, rtol=0.0, atol=1e-13)
    energy = fast.energy
    assert np.max(np.abs(energy - energy[0])) <= 1e-12 * np.abs(energy).max()
