"""The compiled rigid-body kernel on randomly generated trees (revolute, universal, spherical and prismatic
joints, branching arms): its a(q) against the Newton–Euler columns, ∂a/∂q and ∂V/∂q against central
differences, and the discrete model it drives against the conservation laws and against the uncompiled
evaluation of the same discrete equations."""

import numpy as np
import pytest

from derivative_rows import check_lagrangian_gradient, check_rows_asked_for
from discrete_robot.discrete import compiled as compiled_step
from discrete_robot.discrete.dynamic_model import DiscreteDynamicModel
from discrete_robot.discrete.partial_difference import SMALL_STEP
from discrete_robot.model.description import load_model, model_from_dict, package_config_path
from discrete_robot.model.dynamics import RigidBodySystem
from random_trees import random_tree_model_data

SEEDS = [0, 1, 2, 3]


#: the joint of each generated link, in turn
KINDS = ["revolute", "spherical", "prismatic", "universal", "revolute", "spherical"]


def random_arm(seed: int, gravity=(0.0, 0.0, -9.81)) -> RigidBodySystem:
    """A fixed base carrying a random tree of six links (random parents, placements, CoMs and inertias) with
    every joint kind; the first link hangs from the base on a revolute joint."""
    data = random_tree_model_data(len(KINDS), seed)
    data["base"] = {"name": "base"}
    data["gravity"] = list(gravity)
    rng = np.random.default_rng(seed + 100)
    for link, kind in zip(data["links"], KINDS, strict=True):
        joint = {key: link["joint"][key] for key in ("name", "origin", "rpy") if key in link["joint"]}
        joint["type"] = kind
        axes, _ = np.linalg.qr(rng.normal(size=(3, 3)))
        if kind in ("revolute", "prismatic"):
            joint["axis"] = axes[:, 0].tolist()
        elif kind == "universal":
            joint["axes"] = axes[:, :2].T.tolist()
        link["joint"] = joint
    return RigidBodySystem(model_from_dict(data))


class Uncompiled:
    """The same system seen only through the LagrangianSystem protocol (no compiled model): the discrete model
    then evaluates its equations with numpy, a second implementation of the same formulas."""

    vectorized = True

    def __init__(self, system: RigidBodySystem):
        self.system = system
        self.dof = system.dof

    def evaluate(self, q, derivatives=False):
        return self.system.evaluate(q, derivatives)

    def mass_matrix(self, q):
        return self.system.mass_matrix(q)

    def mass_matrix_derivatives(self, q):
        return self.system.mass_matrix_derivatives(q)

    def potential(self, q):
        return self.system.potential(q)

    def potential_gradient(self, q):
        return self.system.potential_gradient(q)


@pytest.mark.parametrize("seed", SEEDS)
def test_mass_matrix_and_gravity_equal_newton_euler_on_random_trees(seed):
    system = random_arm(seed)
    n = system.dof
    assert system.model.parent_index.count(-1) < len(KINDS) - 1, "the tree should branch below the base"
    for q in np.random.default_rng(seed).uniform(-2.0, 2.0, (3, n)):
        gravity = system.inverse_dynamics(q, np.zeros(n), np.zeros(n))
        columns = np.array([system.inverse_dynamics(q, np.zeros(n), e) for e in np.eye(n)]).T - gravity[:, None]
        M = system.mass_matrix(q)
        np.testing.assert_allclose(M, columns, atol=1e-12 * np.abs(M).max())
        np.testing.assert_allclose(system.potential_gradient(q), gravity, atol=1e-11 * max(1.0, np.abs(gravity).max()))


@pytest.mark.parametrize("seed", SEEDS)
def test_derivatives_equal_central_differences_on_random_trees(seed):
    system = random_arm(seed)
    eps = 1e-6
    for q in np.random.default_rng(seed + 7).uniform(-2.0, 2.0, (2, system.dof)):
        steps = [eps * e for e in np.eye(system.dof)]
        dM = np.array([(system.mass_matrix(q + s) - system.mass_matrix(q - s)) / (2 * eps) for s in steps])
        dV = np.array([(system.potential(q + s) - system.potential(q - s)) / (2 * eps) for s in steps])
        np.testing.assert_allclose(system.mass_matrix_derivatives(q), dM, atol=1e-7 * max(1.0, np.abs(dM).max()))
        np.testing.assert_allclose(system.potential_gradient(q), dV, atol=1e-7 * max(1.0, np.abs(dV).max()))


@pytest.mark.parametrize("seed", SEEDS[:2])
@pytest.mark.parametrize("dt", [1e-3, 2e-2])
@pytest.mark.parametrize("still", [(), (1, -2), (1, -2, -1)])
@pytest.mark.parametrize("turned", [False, True])
def test_compiled_discrete_equations_equal_the_numpy_evaluation(seed, dt, still, turned):
    """lhs, D_r a, D_r V and the Newton Jacobian at a candidate state, short steps (quadrature) and long ones;
    ``still``: coordinates that have not moved (Δq_r = 0: the kernel takes their edges' single point, numpy its
    quadrature); the last one moves last on the forward path, so that path's vertex before q(k+1) is q(k+1);
    ``turned``: the kernel's differences of turned subtrees (the compositions') for numpy's divided ones."""
    system = random_arm(seed)
    reference = DiscreteDynamicModel(Uncompiled(system))
    rng = np.random.default_rng(seed)
    n = system.dof
    q0, qd0, qd1 = rng.uniform(-1.0, 1.0, n), rng.normal(size=n), rng.normal(size=n)
    qd0[list(still)] = qd1[list(still)] = 0.0
    q1 = q0 + 0.5 * dt * (qd0 + qd1)
    model = compiled_step.compile_model(system.compiled, reference.paths, SMALL_STEP, turned_differences=turned)
    data = compiled_step.create_data(model)
    compiled_step.step_terms(model, data, q0, qd0, q1, qd1, dt, True)
    fast = {name: getattr(data, name) for name in ("lhs", "a1", "Da", "DV", "noise", "J")}
    slow = reference._terms(q0, qd0, q1, qd1, dt, derivatives=True)
    expected = {name: getattr(slow, name) for name in ("lhs", "a1", "Da", "DV")}
    expected["J"] = reference._jacobian(slow, qd0, qd1, dt)
    for name, value in expected.items():
        np.testing.assert_allclose(fast[name], value, atol=1e-11 * max(1.0, np.abs(value).max()), err_msg=name)
    # the round-off estimate: the kernel's quotients of turned subtrees carry none of numpy's divided
    # differences' cancellation, so it may only be smaller, and it is at least ε of lhs
    assert np.all(fast["noise"] <= slow.noise * (1.0 + 1e-9)), (fast["noise"], slow.noise)
    assert np.all(fast["noise"] >= np.finfo(float).eps * np.abs(fast["lhs"]))


def test_newton_iterates_reuse_the_start_and_give_a_fresh_evaluations_numbers():
    """While Newton iterates on one step, q(k) stays at the first vertex and is not evaluated again: candidates
    evaluated in turn on one Data (with and without the Jacobian, a coordinate coming to rest in between, which
    asks for a row at q(k) that was not there) give bit for bit what a fresh Data gives for each."""
    system = random_arm(3)
    paths = DiscreteDynamicModel(system).paths
    model = compiled_step.compile_model(system.compiled, paths, SMALL_STEP)
    kept = compiled_step.create_data(model)
    rng = np.random.default_rng(9)
    n, dt = system.dof, 1e-3
    q0, qd0 = rng.uniform(-1.0, 1.0, n), rng.normal(size=n)
    for jacobian, still in ((True, False), (False, False), (False, True), (True, True), (False, False)):
        qd1 = qd0 + 1e-3 * rng.normal(size=n)
        if still:
            qd1[-1] = -qd0[-1]          # Δq = 0 exactly: its edge starts at q(k) on the reverse path
        q1 = q0 + 0.5 * dt * (qd0 + qd1)
        fresh = compiled_step.create_data(model)
        for data in (kept, fresh):
            compiled_step.step_terms(model, data, q0, qd0, q1, qd1, dt, jacobian)
        for name in ("lhs", "a1", "Da", "DV", "noise") + (("J",) if jacobian else ()):
            np.testing.assert_array_equal(getattr(kept, name), getattr(fresh, name), err_msg=name)


def test_compiled_and_python_newton_take_the_same_steps():
    """One Newton loop, compiled for the kernel and run as Python for other systems: the same steps."""
    system = random_arm(2)
    rng = np.random.default_rng(2)
    q0, qd0 = rng.uniform(-1.0, 1.0, system.dof), rng.normal(size=system.dof)
    fast, slow = (DiscreteDynamicModel(s).simulate(q0, qd0, 1e-3, 50) for s in (system, Uncompiled(system)))
    np.testing.assert_allclose(fast.q, slow.q, rtol=0.0, atol=1e-13)
    np.testing.assert_array_equal(fast.iterations, slow.iterations)


@pytest.mark.parametrize("seed", SEEDS[:2])
def test_discrete_model_conserves_energy_on_random_trees(seed):
    system = random_arm(seed)
    rng = np.random.default_rng(seed)
    trajectory = DiscreteDynamicModel(system).simulate(rng.uniform(-1.0, 1.0, system.dof),
                                                      rng.normal(size=system.dof), 1e-3, 1000)
    energy = trajectory.energy
    assert np.max(np.abs(energy - energy[0])) <= 1e-12 * np.abs(energy).max()


def test_a_cyclic_root_joint_keeps_its_momentum_exactly_on_a_random_tree():
    """Without gravity nothing depends on a revolute root joint's angle: its momentum Σ_j a_rj q̇_j is constant."""
    system = random_arm(1, gravity=(0.0, 0.0, 0.0))
    roots = [sl.start for link, sl in zip(system.model.links, system.model.dof_slices, strict=True)
             if link.parent == "base" and link.joint.type.value == "revolute"]
    assert roots
    rng = np.random.default_rng(3)
    trajectory = DiscreteDynamicModel(system).simulate(rng.uniform(-1.0, 1.0, system.dof),
                                                      rng.normal(size=system.dof), 1e-3, 1000)
    M = system.mass_matrix(trajectory.q)
    momenta = np.einsum("kij,kj->ki", M, trajectory.qd)[:, roots]
    assert np.max(np.abs(momenta - momenta[0])) <= 1e-12 * max(1.0, np.abs(momenta).max())


def _rotation(axis, angle):
    """Rodrigues' formula in the dtype of ``angle`` (the reference below runs in extended precision)."""
    K = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]], dtype=angle.dtype)
    return np.eye(3, dtype=angle.dtype) + np.sin(angle) * K + (1 - np.cos(angle)) * (K @ K)


def jacobian_terms(arm, q):
    """a(q) = Σ_i m_i J_v,iᵀ J_v,i + J_ω,iᵀ R_i I_i R_iᵀ J_ω,i from each link's CoM velocity v_k = z_k × (c_i − o_k)
    (z_k for a prismatic DOF) under the DOFs that move it, and V(q) = −Σ_i m_i gᵀ c_i, in the dtype of q: no
    composite inertias and no common reference point, a third formulation beside the kernel's and Newton–Euler."""
    dtype = q.dtype
    links, n = arm.links, len(q)
    R, p = [None] * len(links), [None] * len(links)
    z, o = np.zeros((n, 3), dtype=dtype), np.zeros((n, 3), dtype=dtype)
    moves = np.zeros((len(links), n), dtype=bool)
    for i, (parent, first, ndof) in enumerate(links):
        R_parent = np.eye(3, dtype=dtype) if parent < 0 else R[parent]
        p_parent = np.zeros(3, dtype=dtype) if parent < 0 else p[parent]
        if parent >= 0:
            moves[i] = moves[parent]
        local_R, local_p = arm.joint_rotation[i].astype(dtype), arm.joint_origin[i].astype(dtype)
        origin = R_parent @ local_p + p_parent
        for k in range(first, first + ndof):
            axis = local_R @ arm.axes[k].astype(dtype)
            z[k], o[k], moves[i, k] = R_parent @ axis, origin, True
            if arm.prismatic[k]:
                local_p = local_p + axis * q[k]
            else:
                local_R = local_R @ _rotation(arm.axes[k].astype(dtype), q[k])
        R[i], p[i] = R_parent @ local_R, R_parent @ local_p + p_parent
    a, V = np.zeros((n, n), dtype=dtype), dtype.type(0)
    for i in range(len(links)):
        c = R[i] @ arm.com[i].astype(dtype) + p[i]
        V -= arm.mass[i] * (arm.gravity.astype(dtype) @ c)
        Jv = np.array([(z[k] if arm.prismatic[k] else np.cross(z[k], c - o[k])) if moves[i, k] else np.zeros(3)
                       for k in range(n)], dtype=dtype).T
        Jw = np.array([z[k] if moves[i, k] and not arm.prismatic[k] else np.zeros(3) for k in range(n)],
                      dtype=dtype).T
        a += arm.mass[i] * Jv.T @ Jv + Jw.T @ (R[i] @ arm.inertia[i].astype(dtype) @ R[i].T) @ Jw
    return a, V


@pytest.mark.skipif(np.finfo(np.longdouble).eps > 1e-18, reason="needs an extended-precision long double")
@pytest.mark.parametrize("system", [RigidBodySystem(load_model(package_config_path("arm_6dof.yaml")))]
                         + [random_arm(seed) for seed in SEEDS[:2]], ids=["arm_6dof", "tree0", "tree1"])
def test_every_mass_matrix_entry_is_accurate_to_its_own_size(system):
    """Each a_ij to within 30 ε of √(a_ii a_jj) against the Jacobian form in extended precision. The arm's wrist
    inertia (1e-4 kg m²) sits 0.8 m from the base: summed about the base's origin from terms of size m |c|², it
    carried a round-off of 2000 of its own ε, the floor of the discrete model's T + V drift at wrist speeds."""
    for q in np.random.default_rng(5).uniform(-3.0, 3.0, (20, system.dof)):
        exact = jacobian_terms(system.compiled, q.astype(np.longdouble))[0]
        scale = np.sqrt(np.outer(np.diag(exact), np.diag(exact))).astype(float)
        error = np.abs(system.mass_matrix(q) - exact.astype(float))
        assert np.all(error <= 30 * np.finfo(float).eps * scale), (error / scale).max() / np.finfo(float).eps


@pytest.mark.skipif(np.finfo(np.longdouble).eps > 1e-18, reason="needs an extended-precision long double")
@pytest.mark.parametrize("seed", SEEDS)
def test_edge_differences_equal_extended_precision_differences_on_random_trees(seed):
    """a(q + δ e_k) − a(q) and V(q + δ e_k) − V(q) from rigid_body_terms' edge requests, for every DOF the discrete
    step turns (revolute, prismatic, and the DOFs of universal and spherical links), against the Jacobian form's
    difference in extended precision: within ε (4 |δ| + 0.01) of a's and V's scale (the 0.01: the reference's own
    round-off, ε/2048 over its sums; seen up to 0.003). A plain difference in double misses by ε |a| at any δ
    (1.3–5.4 ε of the scale, 100 times the bound at δ = 1e-5, checked too): over |δ| that cancellation was the
    error floor of discrete4's state on the arm (5e-8 at 1 s, docs/work_precision.md)."""
    from discrete_robot.discrete.partial_difference import DifferencePaths
    from discrete_robot.model import compiled as arm_compiled

    system = random_arm(seed)
    arm, n = system.compiled, system.dof
    turned = np.flatnonzero(compiled_step.compile_model(arm, DifferencePaths(n), turned_differences=True).turned)
    assert arm.prismatic[turned].any() and (arm.links[arm.dof_link[turned], 2] > 1).any()
    data = arm_compiled.create_data(arm, 1, derivatives=False)
    eps = np.finfo(float).eps
    worst_plain = 0.0
    for q in np.random.default_rng(seed + 7).uniform(-2.0, 2.0, (3, n)):
        a_ld, V_ld = jacobian_terms(arm, q.astype(np.longdouble))
        scale_a, scale_V = float(np.abs(a_ld).max()), float(sum(arm.mass) * np.linalg.norm(arm.gravity))
        for k in turned:
            for delta in (1e-5, 1e-3, 0.5):
                data.edge_dof[0] = (k, -1)
                data.edge_step[0, 0] = delta
                arm_compiled.rigid_body_terms(arm, data, q[None], False)
                moved = q.astype(np.longdouble)
                moved[k] += np.longdouble(delta)
                a_moved, V_moved = jacobian_terms(arm, moved)
                bound = eps * (4.0 * abs(delta) + 0.01)
                np.testing.assert_allclose(data.edge_dM[0, 0], (a_moved - a_ld).astype(float), rtol=0,
                                           atol=bound * scale_a, err_msg=f"a, DOF {k}, δ = {delta}")
                assert abs(data.edge_dV[0, 0] - float(V_moved - V_ld)) <= bound * scale_V, (k, delta)
                if delta == 1e-5:
                    plain = arm_compiled.create_data(arm, 2, derivatives=False)
                    arm_compiled.rigid_body_terms(arm, plain, np.array([q, q + delta * np.eye(n)[k]]), False)
                    error = np.abs(plain.M[1] - plain.M[0] - (a_moved - a_ld).astype(float)).max()
                    worst_plain = max(worst_plain, error / (bound * scale_a))
    assert worst_plain > 1.0


def test_rigid_body_terms_writes_the_derivative_rows_asked_for_and_no_other():
    """Data.derivative_rows[b, k] clear: ∂a/∂q_k and ∂V/∂q_k at configuration b are left as they were (the discrete
    step skips the coordinates a vertex has not moved); the rows written are bit for bit the full evaluation's."""
    from discrete_robot.model import compiled as arm_compiled

    system = random_arm(0)
    model = arm_compiled.compile_model(system.model)
    rng = np.random.default_rng(3)
    check_rows_asked_for(model, rng.uniform(-2.0, 2.0, (4, system.dof)), rng)


@pytest.mark.parametrize("seed", SEEDS)
def test_the_lagrangian_gradient_equals_central_differences_on_random_trees(seed):
    """∂/∂q [V − ½ uᵀ a(q) w], the O(n) recursion the discrete step's Jacobian takes, against central differences of
    V and of the bilinear form, and against the kernel's ∂a/∂q; rows asked for alone (Data.gradient_rows)."""
    from discrete_robot.model import compiled as arm_compiled

    system = random_arm(seed)
    model = arm_compiled.compile_model(system.model)
    rng = np.random.default_rng(seed + 11)
    q, (u, w) = rng.uniform(-2.0, 2.0, system.dof), rng.normal(size=(2, system.dof))
    data = arm_compiled.create_data(model, 1, derivatives=False)
    data.rates[...] = u, w
    arm_compiled.rigid_body_terms(model, data, q[None], False, -1, True)

    def f(x):
        return system.potential(x) - 0.5 * u @ system.mass_matrix(x) @ w

    eps = 1e-6
    differences = np.array([(f(q + eps * e) - f(q - eps * e)) / (2 * eps) for e in np.eye(system.dof)])
    np.testing.assert_allclose(data.lagrangian_gradient[0], differences,
                               atol=1e-7 * max(1.0, np.abs(differences).max()))
    check_lagrangian_gradient(model, rng.uniform(-2.0, 2.0, (4, system.dof)), rng)


def test_the_sine_cache_gives_the_uncached_numbers():
    """Link frames take sin and cos of each angle from the last two angles met (the discrete step's vertices repeat
    q(k) and q(k+1)): configurations met again, in any order, give bit for bit a fresh evaluation's terms."""
    from discrete_robot.model import compiled as arm_compiled

    system = random_arm(1)
    model = arm_compiled.compile_model(system.model)
    rng = np.random.default_rng(4)
    q = rng.uniform(-2.0, 2.0, (3, system.dof))
    mixed = q[[0, 1, 0, 2, 1, 1, 0]]
    kept = arm_compiled.create_data(model, len(mixed), derivatives=True)
    arm_compiled.rigid_body_terms(model, kept, mixed, True)
    for b, x in enumerate(mixed):
        fresh = arm_compiled.create_data(model, 1, derivatives=True)
        arm_compiled.rigid_body_terms(model, fresh, x[None], True)
        for name in ("M", "potential_energy", "dM", "g"):
            np.testing.assert_array_equal(getattr(kept, name)[b], getattr(fresh, name)[0], err_msg=name)


@pytest.mark.parametrize("seed", SEEDS[:2])
def test_frames_kept_from_the_last_configuration_give_a_fresh_evaluations_numbers(seed):
    """Link frames are recomputed from the first link whose coordinates changed since the configuration the Data
    evaluated last (its earlier links keep theirs): configurations that each change one coordinate, several, none,
    or every one, in any order and over calls, give bit for bit a fresh evaluation's terms, gradient included."""
    from discrete_robot.model import compiled as arm_compiled

    system = random_arm(seed)
    model = arm_compiled.compile_model(system.model)
    rng = np.random.default_rng(seed + 7)
    n = system.dof
    configurations = [rng.uniform(-2.0, 2.0, n)]
    for k in list(range(n - 1, -1, -1)) + list(rng.integers(0, n, 6)) + [None, "all"]:
        x = configurations[-1].copy()
        if k == "all":
            x = rng.uniform(-2.0, 2.0, n)
        elif k is not None:
            x[k] += rng.normal()
        configurations.append(x)
    q = np.array(configurations)
    rates = rng.normal(size=(2, n))
    kept = arm_compiled.create_data(model, len(q), derivatives=True)
    kept.rates[...] = rates
    for part in (q[:5], q[5:]):        # two calls: the second starts from the frames the first left
        arm_compiled.rigid_body_terms(model, kept, part, True, -1, True)
        for b, x in enumerate(part):
            fresh = arm_compiled.create_data(model, 1, derivatives=True)
            fresh.rates[...] = rates
            arm_compiled.rigid_body_terms(model, fresh, x[None], True, -1, True)
            for name in ("M", "potential_energy", "dM", "g", "lagrangian_gradient"):
                np.testing.assert_array_equal(getattr(kept, name)[b], getattr(fresh, name)[0], err_msg=name)
