"""Mimic joints folded into the dynamics exactly: the followers as ordinary DOFs of an expanded model, and the
constant map from the model's coordinates to the expanded ones.

A follower's coordinate is q_f = m · q_leader + o (URDF ``<mimic multiplier offset>``), so the expanded
coordinates are q̄ = S q + c with S (n̄ × n) the identity on the model's DOFs and m in the leader's column on each
follower's row, c the offsets. The constraint is holonomic and linear, so the reduced Lagrangian
L(q, q̇) = L̄(S q + c, S q̇) gives exactly

    a(q) = Sᵀ ā(q̄) S,   V(q) = V̄(q̄),   ∂a/∂q_k = Σ_j S_jk Sᵀ (∂ā/∂q̄_j) S,   ∂V/∂q = Sᵀ ∂V̄/∂q̄,

and inverse dynamics τ = Sᵀ τ̄(S q + c, S q̇, S q̈): the follower's joint reaction does no work along S. The
compiled kernel (:func:`discrete_robot.model.compiled.rigid_body_terms`) applies the fold; S has one nonzero per row,
so each product is a scatter of the expanded terms onto the leaders' columns.
"""

from dataclasses import replace

import numpy as np

from discrete_robot.model.description import RobotModel


def expanded(model: RobotModel) -> tuple[RobotModel, np.ndarray, np.ndarray]:
    """(the model with its followers' links appended as ordinary 1-DOF links, S (n̄, n), c (n̄,))."""
    full = replace(model, links=model.links + tuple(m.link for m in model.mimic), mimic=())
    n, names = model.dof, model.joint_names
    S = np.zeros((full.dof, n))
    S[:n, :n] = np.eye(n)
    c = np.zeros(full.dof)
    for row, follower in enumerate(model.mimic, start=n):
        S[row, names.index(follower.leader)] = follower.multiplier
        c[row] = follower.offset
    return full, S, c

