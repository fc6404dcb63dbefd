"""Rigid-body dynamics of a fixed-base :class:`RobotModel` as a :class:`LagrangianSystem`.

Three independent formulations, cross-checked in the tests:

* the mass matrix from CoM Jacobians (Schwarz, Mechatronic Systems Modelling, eq. 6.20-6.24)::

      a(q) = Σ_i m_i J_v,iᵀ J_v,i + J_ω,iᵀ (R_i I_i R_iᵀ) J_ω,i

  evaluated in the frame of each arm's first link, where nothing depends on that link's first
  coordinate: a cyclic first joint leaves a(q) bit-for-bit unchanged, which the discrete model's
  exact momentum conservation relies on;
* ∂a/∂q from the spatial twists ξ_k of the DOFs and the composite spatial inertias G^c (Park's
  Lie-bracket formula, ∂ξ_a/∂q_k = ad_{ξ_k} ξ_a for k before a), see :meth:`mass_matrix_derivatives`;
* inverse dynamics by the recursive Newton–Euler algorithm (Luh, Walker & Paul), which uses
  neither Jacobian.

All methods except the Newton–Euler ones accept q of shape (..., n) (``vectorized = True``).
"""

import numpy as np
from scipy.linalg import cho_factor, cho_solve

from discrete_robot.errors import InputError, ModelError
from discrete_robot.model.description import RobotModel
from discrete_robot.model.kinematics import KinematicTree, hat, kinematic_tree


def _ad(xi: np.ndarray) -> np.ndarray:
    """ad_ξ = [[ω̂, v̂], [0, ω̂]] for twists ξ = (v, ω), shape (..., 6) -> (..., 6, 6)."""
    out = np.zeros(xi.shape[:-1] + (6, 6))
    w_hat = hat(xi[..., 3:])
    out[..., :3, :3] = w_hat
    out[..., 3:, 3:] = w_hat
    out[..., :3, 3:] = hat(xi[..., :3])
    return out


_EYE3 = np.eye(3)


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
        self._children = [[c for c, p in enumerate(model.parent_index) if p == i] for i in range(len(model.links))]
        self._subtree = self.tree.link_ancestor.T.astype(float)   # [l, i]: link i is in the subtree of link l
        # which case of the ∂a/∂q formula each [k, a, b] falls in (see mass_matrix_derivatives)
        before_eq = self.tree.precedes | np.eye(self.tree.n, dtype=bool)    # [x, y]: x before-or-equal y
        self._upper = before_eq[None, :, :]
        self._case_between = self._upper & ~before_eq[:, :, None] & before_eq[:, None, :]   # a before k <= b
        self._case_after = self._upper & self.tree.precedes.T[:, None, :]                   # b before k

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

    def mass_matrix(self, q) -> np.ndarray:
        """a(q) = Σ_i Jᵀ diag(m_i E, I_i) J, shape (..., n, n), kg m² (kg for prismatic DOFs)."""
        return self._mass_matrix(self.tree.frames(self._q(q), relative_to_roots=True))

    def _mass_matrix(self, frames) -> np.ndarray:
        tree = self.tree
        Jv, Jw = tree.com_jacobians(frames)
        batch, rows = Jv.shape[:-3], 3 * tree.n_links
        # Σ over links and components as one (n x 3L) @ (3L x n) product per configuration
        weighted = (Jv * np.sqrt(tree.masses)[:, None, None]).reshape(batch + (rows, self.dof))
        IJw = (self._world_inertias(frames.rotations) @ Jw).reshape(batch + (rows, self.dof))
        M = np.swapaxes(weighted, -1, -2) @ weighted + np.swapaxes(Jw.reshape(batch + (rows, self.dof)), -1, -2) @ IJw
        return 0.5 * (M + np.swapaxes(M, -1, -2))

    def mass_matrix_and_potential(self, q) -> tuple[np.ndarray, np.ndarray]:
        """(a(q), V(q)) from one kinematics pass, shapes (..., n, n) and (...)."""
        return self.evaluate(q)

    def evaluate(self, q, derivatives: bool = False) -> tuple[np.ndarray, ...]:
        """(a, V), or (a, V, ∂a/∂q, ∂V/∂q) with ``derivatives``, at q (..., n) from one kinematics pass.

        Everything is computed in the frames of the arms' first links (see :meth:`KinematicTree.frames`);
        gravity is expressed in each link's reference frame for V and ∂V/∂q.
        """
        frames = self.tree.frames(self._q(q), relative_to_roots=True)
        ref = frames.references
        gravity = (self.gravity @ ref[..., :3, :3])                    # (..., L, 3): Rᵀ g in each reference frame
        V = -((gravity * frames.com_positions).sum(-1) + ref[..., :3, 3] @ self.gravity) @ self.tree.masses
        if not derivatives:
            return self._mass_matrix(frames), V
        dM, dV = self._derivatives(frames, gravity[..., self.tree.dof_link, :])
        return self._mass_matrix(frames), V, dM, dV

    def potential(self, q):
        """V(q) = −Σ_i m_i gᵀ c_i(q), J (a float for one configuration, else shape (...))."""
        frames = self.tree.frames(self._q(q))
        V = -np.einsum("...li,l,i->...", frames.com_positions, self.tree.masses, self.gravity)
        return float(V) if V.ndim == 0 else V

    def potential_gradient(self, q) -> np.ndarray:
        """∂V/∂q = −Σ_i m_i J_v,iᵀ g, shape (..., n), N m (N for prismatic DOFs)."""
        Jv, _ = self.tree.com_jacobians(self.tree.frames(self._q(q)))
        return -np.einsum("...lxi,l,x->...i", Jv, self.tree.masses, self.gravity)

    def mass_matrix_and_potential_derivatives(self, q) -> tuple[np.ndarray, np.ndarray]:
        """(∂a/∂q, ∂V/∂q) from one kinematics pass, shapes (..., n, n, n) and (..., n)."""
        return self.evaluate(q, derivatives=True)[2:]

    def spatial_inertias(self, q) -> np.ndarray:
        """Each link's 6x6 spatial inertia about the world origin for twists (v, ω), shape (..., L, 6, 6).

        G = [[m E, −m ĉ], [m ĉ, I_c − m ĉ ĉ]], so that T_i = ½ ξᵀ G ξ for the link's twist ξ.
        """
        frames = self.tree.frames(self._q(q))
        return self._spatial_inertias(frames)

    def _spatial_inertias(self, frames) -> np.ndarray:
        m = self.tree.masses[:, None, None]
        c_hat = hat(frames.com_positions)
        G = np.zeros(c_hat.shape[:-2] + (6, 6))
        G[..., :3, :3] = m * _EYE3
        G[..., :3, 3:] = -m * c_hat
        G[..., 3:, :3] = m * c_hat
        G[..., 3:, 3:] = self._world_inertias(frames.rotations) - m * (c_hat @ c_hat)
        return G

    def mass_matrix_derivatives(self, q) -> np.ndarray:
        """∂a/∂q, shape (..., n, n, n) with [k, i, j] = ∂a_ij/∂q_k.

        With a_ab = ξ_aᵀ G^c_b ξ_b for a before-or-equal b (G^c_b: composite spatial inertia of the
        subtree that DOF b moves), ∂ξ_a/∂q_k = ad_{ξ_k} ξ_a and ∂G_i/∂q_k = −ad_kᵀ G_i − G_i ad_k:

            k before-or-equal a:   0  (the subtree moves rigidly; kinetic energy is invariant)
            a before k before-or-equal b:   −(ad_{ξ_k} ξ_a)ᵀ G^c_b ξ_b
            b before k:   −(ad_{ξ_k} ξ_a)ᵀ G^c_k ξ_b − (ad_{ξ_k} ξ_b)ᵀ G^c_k ξ_a
        """
        return self.evaluate(q, derivatives=True)[2]

    def _derivatives(self, frames, gravity: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """∂a/∂q as in :meth:`mass_matrix_derivatives`; ∂V/∂q_k = −gᵀ (G^c_k ξ_k)_linear = −gᵀ(m^c_k v_k + ω_k × h^c_k).

        (m^c_k, h^c_k: mass and first mass moment of the subtree DOF k moves; ``gravity`` (..., n, 3): g in
        the frame of each DOF's twist.) Each entry is a scalar invariant of the configuration, so any frame
        that the whole expression shares gives the same values; :meth:`evaluate` uses the arms' root frames.
        """
        tree = self.tree
        xi = tree.spatial_twists(frames)                                   # (..., n, 6)
        G_links = self._spatial_inertias(frames)
        batch = G_links.shape[:-3]
        composite = (self._subtree @ G_links.reshape(batch + (tree.n_links, 36))).reshape(batch + (tree.n_links, 6, 6))
        G = composite[..., tree.dof_link, :, :]                            # (..., n, 6, 6): G^c of each DOF's link
        columns = np.swapaxes(xi, -1, -2)[..., None, :, :]                 # (..., 1, 6, n)
        A = np.swapaxes(_ad(xi) @ columns, -1, -2)                         # [k, a, :] = ad_{ξ_k} ξ_a
        GX = G @ columns                                                   # [k, :, b] = G^c_k ξ_b
        own = np.diagonal(GX, axis1=-3, axis2=-1)                          # [:, b] = G^c_b ξ_b, (..., 6, n)
        between = -A @ own[..., None, :, :]                                # [k, a, b] = −A[k, a] · own[b]
        after = -A @ GX                                                    # [k, a, b] = −A[k, a] · GX[k, b]
        after = after + np.swapaxes(after, -1, -2)
        D = np.where(self._case_between, between, 0.0) + np.where(self._case_after, after, 0.0)
        dM = np.where(self._upper, D, np.swapaxes(D, -1, -2))
        return dM, -(np.swapaxes(own[..., :3, :], -1, -2) * gravity).sum(-1)

    # ------------------------------------------------------------------------------- Newton–Euler

    def inverse_dynamics(self, q, qd, qdd) -> np.ndarray:
        """τ = M(q) q̈ + C(q, q̇) q̇ + ∂V/∂q by the recursive Newton–Euler algorithm, shape (n,), N m or N.

        Forward pass (world frame): angular velocity and acceleration of every link, linear
        acceleration of its origin and CoM, with gravity entered as a base acceleration −g. Backward
        pass: the force f_i and moment n_i (about the joint) the joint transmits; τ_k = z_kᵀ n_i for
        rotational DOFs, z_kᵀ f_i for prismatic ones.
        """
        n = self.dof
        q, qd, qdd = (np.asarray(v, dtype=float) for v in (q, qd, qdd))
        for name, value in (("q", q), ("qd", qd), ("qdd", qdd)):
            if value.shape != (n,):
                raise InputError(f"{name}: expected {n} values, got shape {value.shape}")
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
                    dw = dw + np.cross(w, z) * qd[k] + z * qdd[k]
                    w = w + z * qd[k]
            else:
                z, k = frames.dof_axes[sl.start], sl.start
                s = frames.positions[i] - o
                a_i = a_o + np.cross(dw_p, s) + np.cross(w_p, np.cross(w_p, s)) + 2.0 * np.cross(w_p, z) * qd[k] \
                    + z * qdd[k]
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

    def bias_forces(self, q, qd) -> np.ndarray:
        """C(q, q̇) q̇ + ∂V/∂q (Coriolis, centrifugal and gravity), shape (n,), by Newton–Euler."""
        return self.inverse_dynamics(q, qd, np.zeros(self.dof))

    def forward_dynamics(self, q, qd, tau) -> np.ndarray:
        """q̈ = M(q)⁻¹ (τ − C(q, q̇) q̇ − ∂V/∂q), shape (n,)."""
        tau = np.asarray(tau, dtype=float)
        if tau.shape != (self.dof,):
            raise InputError(f"tau: expected {self.dof} values, got shape {tau.shape}")
        return cho_solve(cho_factor(self.mass_matrix(q)), tau - self.bias_forces(q, qd))

    def kinetic_energy(self, q, qd) -> float:
        """T = ½ q̇ᵀ M(q) q̇, J."""
        qd = np.asarray(qd, dtype=float)
        return 0.5 * float(qd @ self.mass_matrix(q) @ qd)

    def total_energy(self, q, qd) -> float:
        """E = T + V, J."""
        return self.kinetic_energy(q, qd) + self.potential(q)

