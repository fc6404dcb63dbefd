"""Rigid-body dynamics of a fixed-base :class:`RobotModel` as a :class:`LagrangianSystem`.

Two independent formulations, cross-checked in the tests:

* the composite-rigid-body form a_ab = ξ_aᵀ G^c_b ξ_b (spatial twists ξ of the DOFs, composite spatial inertias
  G^c of the subtrees), its derivatives by Park's Lie-bracket formula (∂ξ_a/∂q_k = ad_{ξ_k} ξ_a for k before a)
  and V = −Σ_i m_i gᵀ c_i, all evaluated by one compiled kernel (:mod:`discrete_robot.model.compiled`) in the
  frame of each arm's first link, where nothing depends on that link's first coordinate: a cyclic first joint
  leaves a(q) bit-for-bit unchanged, which the discrete model's exact momentum conservation relies on;
* inverse dynamics by the recursive Newton–Euler algorithm (Luh, Walker & Paul), which uses neither twists
  nor composite inertias.

All methods except the Newton–Euler ones accept q of shape (..., n) (``vectorized = True``).

A model with mimic joints (URDF) is evaluated as its expanded model, followers as DOFs, projected exactly onto the
model's coordinates (:mod:`discrete_robot.model.mimic`): the compiled kernel folds the terms, Newton–Euler projects
the expanded model's torques.
"""

import numpy as np

from discrete_robot.errors import InputError, ModelError
from discrete_robot.model import compiled, mimic
from discrete_robot.model.description import RobotModel
from discrete_robot.model.kinematics import KinematicTree, kinematic_tree
from discrete_robot.model.lagrangian import Terms, solve_mass_matrix


class RigidBodySystem:
    """M(q), ∂M/∂q, V(q) = −Σ m_i gᵀ c_i(q), ∂V/∂q, and Newton–Euler dynamics of a fixed-base robot."""

    vectorized = True

    def __init__(self, model: RobotModel):
        if model.base.floating:
            raise ModelError(f"model '{model.name}': RigidBodySystem needs a fixed base; base "
                             f"'{model.base.name}' is floating (use the space-robot dynamics)")
        self.model = model
        self.tree: KinematicTree = kinematic_tree(model)
        self.gravity = np.asarray(model.gravity, dtype=float)
        #: with mimic joints: the expanded model's system and q̄ = S q + c (:mod:`.mimic`), for Newton–Euler
        self._expanded = None
        if model.mimic:
            full, self._S, self._c = mimic.expanded(model)
            self._expanded = RigidBodySystem(full)
        #: the model as flat arrays for the compiled kernels (mimic followers folded in by the kernel)
        self.compiled = compiled.compile_model(model)
        self._evaluate = compiled.Evaluator(self.compiled)
        #: (n,) bool: the DOFs whose coordinate is a rotation angle (revolute, universal, spherical), on which a(q)
        #: and V(q) depend 2π-periodically
        self.periodic = ~self.tree.prismatic
        self._children = [[c for c, p in enumerate(model.parent_index) if p == i] for i in range(len(model.links))]

    @property
    def dof(self) -> int:
        return self.tree.n

    def _q(self, q) -> np.ndarray:
        q = np.asarray(q, dtype=float)
        if q.shape[-1:] != (self.dof,):
            raise InputError(f"q: expected {self.dof} values (last axis), got shape {q.shape}")
        return q

    def _world_inertias(self, rotations: np.ndarray) -> np.ndarray:
        """R_i I_i R_iᵀ, (..., L, 3, 3), kg m²."""
        return rotations @ self.tree.inertias @ np.swapaxes(rotations, -1, -2)

    def evaluate(self, q, derivatives: bool = False) -> Terms:
        """The :class:`~.lagrangian.Terms` at q (..., n): M = a (..., n, n), potential_energy = V (...), and with
        ``derivatives`` dM = ∂a/∂q (..., n, n, n) with [k, i, j] = ∂a_ij/∂q_k and g = ∂V/∂q (..., n); one pass
        of the compiled kernel."""
        return self._evaluate(self._q(q), derivatives)

    def mass_matrix(self, q) -> np.ndarray:
        """a(q) = Σ_i Jᵀ diag(m_i E, I_i) J, shape (..., n, n), kg m² (kg for prismatic DOFs)."""
        return self.evaluate(q).M

    def mass_matrix_and_potential(self, q) -> tuple[np.ndarray, np.ndarray]:
        """(a(q), V(q)) from one kinematics pass, shapes (..., n, n) and (...)."""
        terms = self.evaluate(q)
        return terms.M, terms.potential_energy

    def potential(self, q):
        """V(q) = −Σ_i m_i gᵀ c_i(q), J (a float for one configuration, else shape (...))."""
        V = self.evaluate(q).potential_energy
        return float(V) if V.ndim == 0 else V

    def potential_gradient(self, q) -> np.ndarray:
        """∂V/∂q = −Σ_i m_i J_v,iᵀ g, shape (..., n), N m (N for prismatic DOFs)."""
        return self.evaluate(q, derivatives=True).g

    def mass_matrix_and_potential_derivatives(self, q) -> tuple[np.ndarray, np.ndarray]:
        """(∂a/∂q, ∂V/∂q) from one kinematics pass, shapes (..., n, n, n) and (..., n)."""
        terms = self.evaluate(q, derivatives=True)
        return terms.dM, terms.g

    def mass_matrix_derivatives(self, q) -> np.ndarray:
        """∂a/∂q, shape (..., n, n, n) with [k, i, j] = ∂a_ij/∂q_k.

        With a_ab = ξ_aᵀ G^c_b ξ_b for a before-or-equal b (G^c_b: composite spatial inertia of the
        subtree that DOF b moves), ∂ξ_a/∂q_k = ad_{ξ_k} ξ_a and ∂G_i/∂q_k = −ad_kᵀ G_i − G_i ad_k:

            k before-or-equal a:   0  (the subtree moves rigidly; kinetic energy is invariant)
            a before k before-or-equal b:   −(ad_{ξ_k} ξ_a)ᵀ G^c_b ξ_b
            b before k:   −(ad_{ξ_k} ξ_a)ᵀ G^c_k ξ_b − (ad_{ξ_k} ξ_b)ᵀ G^c_k ξ_a
        """
        return self.evaluate(q, derivatives=True).dM

    # ------------------------------------------------------------------------------- Newton–Euler

    def inverse_dynamics(self, q, v, a) -> np.ndarray:
        """τ = M(q) q̈ + C(q, q̇) q̇ + ∂V/∂q by the recursive Newton–Euler algorithm, shape (n,), N m or N.

        Forward pass (world frame): angular velocity and acceleration of every link, linear
        acceleration of its origin and CoM, with gravity entered as a base acceleration −g. Backward
        pass: the force f_i and moment n_i (about the joint) the joint transmits; τ_k = z_kᵀ n_i for
        rotational DOFs, z_kᵀ f_i for prismatic ones.
        """
        n = self.dof
        q, v, a = (np.asarray(x, dtype=float) for x in (q, v, a))
        for name, value in (("q", q), ("v", v), ("a", a)):
            if value.shape != (n,):
                raise InputError(f"{name}: expected {n} values, got shape {value.shape}")
        if self._expanded is not None:
            S = self._S
            return S.T @ self._expanded.inverse_dynamics(S @ q + self._c, S @ v, S @ a)
        tree, model = self.tree, self.model
        frames = tree.frames(q)
        L = len(model.links)
        omega, alpha, acc = np.zeros((L, 3)), np.zeros((L, 3)), np.zeros((L, 3))
        force, moment = np.zeros((L, 3)), np.zeros((L, 3))
        inertias = self._world_inertias(frames.rotations)
        for i, (link, sl) in enumerate(zip(model.links, model.dof_slices, strict=True)):
            parent = model.parent_index[i]
            if parent < 0:
                w_p, dw_p, a_p, p_p = np.zeros(3), np.zeros(3), -self.gravity, np.zeros(3)
            else:
                w_p, dw_p, a_p, p_p = omega[parent], alpha[parent], acc[parent], frames.positions[parent]
            o = frames.dof_points[sl.start]
            r = o - p_p
            a_o = a_p + np.cross(dw_p, r) + np.cross(w_p, np.cross(w_p, r))
            w, dw = w_p.copy(), dw_p.copy()
            if link.joint.type.rotational:
                a_i = a_o
                for k in range(sl.start, sl.stop):
                    z = frames.dof_axes[k]
                    dw = dw + np.cross(w, z) * v[k] + z * a[k]
                    w = w + z * v[k]
            else:
                z, k = frames.dof_axes[sl.start], sl.start
                s = frames.positions[i] - o
                a_i = a_o + np.cross(dw_p, s) + np.cross(w_p, np.cross(w_p, s)) + 2.0 * np.cross(w_p, z) * v[k] \
                    + z * a[k]
            omega[i], alpha[i], acc[i] = w, dw, a_i
            rc = frames.com_positions[i] - frames.positions[i]
            a_c = a_i + np.cross(dw, rc) + np.cross(w, np.cross(w, rc))
            force[i] = link.mass * a_c
            moment[i] = inertias[i] @ dw + np.cross(w, inertias[i] @ w) + np.cross(rc, force[i])
        tau = np.zeros(n)
        for i in range(L - 1, -1, -1):
            for c in self._children[i]:
                force[i] += force[c]
                moment[i] += moment[c] + np.cross(frames.positions[c] - frames.positions[i], force[c])
            sl = model.dof_slices[i]
            transmitted = moment[i] if model.links[i].joint.type.rotational else force[i]
            tau[sl] = frames.dof_axes[sl] @ transmitted
        return tau

    def bias_forces(self, q, v) -> np.ndarray:
        """C(q, q̇) q̇ + ∂V/∂q (Coriolis, centrifugal and gravity), shape (n,), by Newton–Euler."""
        return self.inverse_dynamics(q, v, np.zeros(self.dof))

    def forward_dynamics(self, q, v, tau) -> np.ndarray:
        """q̈ = M(q)⁻¹ (τ − C(q, q̇) q̇ − ∂V/∂q), shape (n,)."""
        tau = np.asarray(tau, dtype=float)
        if tau.shape != (self.dof,):
            raise InputError(f"tau: expected {self.dof} values, got shape {tau.shape}")
        return solve_mass_matrix(self.mass_matrix(q), tau - self.bias_forces(q, v))

    def kinetic_energy(self, q, v) -> float:
        """T = ½ q̇ᵀ M(q) q̇, J."""
        v = np.asarray(v, dtype=float)
        return 0.5 * float(v @ self.mass_matrix(q) @ v)

    def total_energy(self, q, v) -> float:
        """E = T + V, J."""
        return self.kinetic_energy(q, v) + self.potential(q)

