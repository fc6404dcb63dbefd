r"""The discrete equations of a step and their full Jacobian in the step's two states, as one compiled kernel:
the constraint rows of the sparse DMOC problem (:mod:`.dmoc_sparse`).

The simulator's Newton solve needs ∂lhs/∂q̇(k+1) only, with q(k+1) tied to it by the smoothing formula
(:mod:`discrete_robot.discrete.compiled`); a DMOC transcription keeps q(k), q̇(k), q(k+1), q̇(k+1) as free
variables and needs the derivative in all four. The left-hand side is the kernel's (Potts, seed 000, eq. 3.5)::

    lhs_r = [a1 (q̇1 − q̇0) + C q̇0]_r / Δt − ½ q̇0ᵀ D_r a q̇1 + D_r V,   C = Σ_s Δq_s D_s a,   a1 = a(q1),

so with the quotients' derivatives ∂D_s f/∂q0_k, ∂D_s f/∂q1_k (f = a, V)::

    ∂lhs_r/∂q̇1_j = a1_rj/Δt − ½ Σ_i D_r a_ij q̇0_i
    ∂lhs_r/∂q̇0_j = (C_rj − a1_rj)/Δt − ½ Σ_i D_r a_ji q̇1_i
    ∂lhs_r/∂q1_k = [∂_k a1 (q̇1 − q̇0) + (D_k a + Σ_s Δq_s ∂D_s a/∂q1_k) q̇0]_r/Δt − ½ q̇0ᵀ ∂D_r a/∂q1_k q̇1 + ∂D_r V/∂q1_k
    ∂lhs_r/∂q0_k = [(−D_k a + Σ_s Δq_s ∂D_s a/∂q0_k) q̇0]_r/Δt − ½ q̇0ᵀ ∂D_r a/∂q0_k q̇1 + ∂D_r V/∂q0_k

Where D_s is the divided difference averaged over the paths (|Δq_s| above ``small_step``),
D_s f = (1/P) Σ_p [f(x_{m+1}) − f(x_m)]/Δq_s along the edge x_m → x_{m+1} on which q_s moves, and the vertex x
has its coordinate k at the q1 value where it has moved ([moved]) and at the q0 value elsewhere::

    ∂D_s f/∂q1_k = (1/P) Σ_p [∂_k f(x_{m+1}) [moved_{m+1,k}] − ∂_k f(x_m) [moved_{m,k}]]/Δq_s − δ_sk D_s f/Δq_s

(and with 1 − [moved] and +δ_sk for q0): exact from ∂a/∂q, ∂V/∂q at the vertices, which
:func:`~discrete_robot.model.compiled.rigid_body_terms` gives. On short edges D_s f is the Gauss–Legendre
integral of ∂_s f along the edge (:mod:`discrete_robot.discrete.partial_difference`), whose derivative needs
∂_k ∂_s f: the kernel takes it by central differences of ∂_s f with step ``HESSIAN_STEP`` (error ~1e-10 relative:
round-off ε/δ and truncation δ²). The divided difference's derivative above loses ε|f|/Δq_s² to cancellation in
its δ_sk term, so on edges up to ``LONG_EDGE`` its derivative is taken from the same edge integral (equal to the
divided difference's to the quadrature's O(Δq⁶), far below round-off there): the Jacobian is accurate to ~1e-10
of its entries on every edge.

The model is the discrete model's (:class:`discrete_robot.discrete.compiled.Model`); :func:`create_data` gives the
:class:`Data` the kernel works in::

    model = discrete_robot.discrete.compiled.compile_model(arm, DifferencePaths(n), LONG_EDGE)
    data = create_data(model)
    step_jacobians(model, data, q0, qd0, q1, qd1, dt, LONG_EDGE, lhs, J)     # m steps: lhs (m, n), J (m, n, 4n)
"""

from typing import NamedTuple

import numpy as np

from discrete_robot.jit import njit
from discrete_robot.model import compiled as arm_compiled
from discrete_robot.model.compiled import rigid_body_terms

#: rad or m: the step of the central differences of ∂_s f on the short edges (module docstring)
HESSIAN_STEP = 1e-5
#: rad or m: edges longer than this take the quotients' derivatives from the divided difference; on shorter ones
#: its δ_sk term, (∂_s f(x_{m+1}) − D_s f)/Δq_s, would lose ε|f|/Δq_s² (1e-6 of |f| at 1e-5) to cancellation.
#: 1e-3 keeps that below 1e-10 of |f|; 1e-2 made the 6-joint arm's solve several times slower (the edge integral
#: costs 6(2n+1) evaluations per edge) for no change in the optimum (367.8341 both)
LONG_EDGE = 1e-3


class Data(NamedTuple):
    """The arrays :func:`step_jacobians` works in (P paths, G Gauss points, n DOFs)."""

    vertices: np.ndarray         # (P (n+1), n): every path's vertices
    vertex_terms: arm_compiled.Data   # a, V, ∂a/∂q, ∂V/∂q there
    points: np.ndarray           # (P G (1+2n), n): a short edge's Gauss points, and each ±HESSIAN_STEP along q_k
    edge_terms: arm_compiled.Data     # ∂a/∂q_s, ∂V/∂q_s there
    Da: np.ndarray               # (n, n, n): D_s a_ij
    DV: np.ndarray               # (n,): D_s V
    mass_quotient_by_start: np.ndarray  # (n, n, n, n): [s, k, i, j] = ∂D_s a_ij/∂q0_k
    mass_quotient_by_end: np.ndarray    # ... /∂q1_k
    potential_quotient_by_start: np.ndarray  # (n, n): [s, k] = ∂D_s V/∂q0_k
    potential_quotient_by_end: np.ndarray    # ... /∂q1_k
    C: np.ndarray                # (n, n): Σ_s Δq_s D_s a
    dq: np.ndarray               # (n,): q1 − q0


def create_data(model) -> Data:
    """The :class:`Data` of :func:`step_jacobians` for the discrete ``model``
    (:class:`discrete_robot.discrete.compiled.Model`)."""
    P, n = model.position.shape
    B, S = P * (n + 1), P * model.nodes.shape[0] * (1 + 2 * n)
    return Data(vertices=np.empty((B, n)), vertex_terms=arm_compiled.create_data(model.arm, B, derivatives=True),
                points=np.empty((S, n)), edge_terms=arm_compiled.create_data(model.arm, S, derivatives=True),
                Da=np.empty((n, n, n)), DV=np.empty(n), mass_quotient_by_start=np.empty((n, n, n, n)),
                mass_quotient_by_end=np.empty((n, n, n, n)), potential_quotient_by_start=np.empty((n, n)),
                potential_quotient_by_end=np.empty((n, n)), C=np.empty((n, n)), dq=np.empty(n))


@njit
def step_jacobians(model, data, q0, qd0, q1, qd1, dt, long_edge, lhs, J):
    """For m steps (rows of q0, q̇0, q1, q̇1: (m, n); dt: (m,)): the left-hand side into ``lhs`` (m, n) and its
    Jacobian into ``J`` (m, n, 4n), columns [q0, q̇0, q1, q̇1]. ``model``: the discrete model's
    (:class:`discrete_robot.discrete.compiled.Model`); ``data``: :func:`create_data`'s; ``long_edge``:
    :data:`LONG_EDGE` (rad or m)."""
    position, moved, nodes, weights, small_step = model.position, model.moved, model.nodes, model.weights, \
        model.small_step
    P, n = position.shape
    G = nodes.shape[0]
    vertices, points = data.vertices, data.points
    a, V, da, dv = data.vertex_terms.M, data.vertex_terms.potential_energy, data.vertex_terms.dM, \
        data.vertex_terms.g
    pda, pdv = data.edge_terms.dM, data.edge_terms.g
    Da, DV = data.Da, data.DV
    dDa0, dDa1 = data.mass_quotient_by_start, data.mass_quotient_by_end
    dDV0, dDV1 = data.potential_quotient_by_start, data.potential_quotient_by_end
    C, dq = data.C, data.dq
    for step in range(q0.shape[0]):
        h = dt[step]
        for p in range(P):
            for m in range(n + 1):
                for r in range(n):
                    vertices[p * (n + 1) + m, r] = q1[step, r] if moved[p, m, r] else q0[step, r]
        rigid_body_terms(model.arm, data.vertex_terms, vertices, True)
        for r in range(n):
            dq[r] = q1[step, r] - q0[step, r]
        Da[...] = 0.0
        DV[...] = 0.0
        dDa0[...] = 0.0
        dDa1[...] = 0.0
        dDV0[...] = 0.0
        dDV1[...] = 0.0
        for s in range(n):
            divided = abs(dq[s]) > small_step
            if divided:
                for p in range(P):
                    m = position[p, s]
                    lo, hi = p * (n + 1) + m, p * (n + 1) + m + 1
                    Da[s] += (a[hi] - a[lo]) / P
                    DV[s] += (V[hi] - V[lo]) / P
                Da[s] /= dq[s]
                DV[s] /= dq[s]
            if abs(dq[s]) > long_edge:
                for p in range(P):
                    m = position[p, s]
                    lo, hi = p * (n + 1) + m, p * (n + 1) + m + 1
                    for k in range(n):
                        at_hi, at_lo = 1.0 if moved[p, m + 1, k] else 0.0, 1.0 if moved[p, m, k] else 0.0
                        dDa1[s, k] += (at_hi * da[hi, k] - at_lo * da[lo, k]) / P
                        dDa0[s, k] += ((1.0 - at_hi) * da[hi, k] - (1.0 - at_lo) * da[lo, k]) / P
                        dDV1[s, k] += (at_hi * dv[hi, k] - at_lo * dv[lo, k]) / P
                        dDV0[s, k] += ((1.0 - at_hi) * dv[hi, k] - (1.0 - at_lo) * dv[lo, k]) / P
                dDa1[s] /= dq[s]
                dDa0[s] /= dq[s]
                dDV1[s] /= dq[s]
                dDV0[s] /= dq[s]
                dDa1[s, s] -= Da[s] / dq[s]
                dDa0[s, s] += Da[s] / dq[s]
                dDV1[s, s] -= DV[s] / dq[s]
                dDV0[s, s] += DV[s] / dq[s]
                continue
            # the edge integral of ∂_s f at the Gauss points, and ∂_s f at ±HESSIAN_STEP along every q_k
            count = 0
            for p in range(P):
                start = p * (n + 1) + position[p, s]
                for g in range(G):
                    for e in range(1 + 2 * n):
                        points[count] = vertices[start]
                        points[count, s] += nodes[g] * dq[s]
                        if e > 0:
                            points[count, (e - 1) // 2] += HESSIAN_STEP if e % 2 == 1 else -HESSIAN_STEP
                        count += 1
            rigid_body_terms(model.arm, data.edge_terms, points, True, s)
            count = 0
            for p in range(P):
                m = position[p, s]
                for g in range(G):
                    w = weights[g] / P
                    if not divided:
                        Da[s] += w * pda[count, s]
                        DV[s] += w * pdv[count, s]
                    for k in range(n):
                        plus, minus = count + 1 + 2 * k, count + 2 + 2 * k
                        at_one = nodes[g] if k == s else (1.0 if moved[p, m, k] else 0.0)
                        c1 = w * at_one / (2.0 * HESSIAN_STEP)
                        c0 = w * (1.0 - at_one) / (2.0 * HESSIAN_STEP)
                        dDa1[s, k] += c1 * (pda[plus, s] - pda[minus, s])
                        dDa0[s, k] += c0 * (pda[plus, s] - pda[minus, s])
                        dDV1[s, k] += c1 * (pdv[plus, s] - pdv[minus, s])
                        dDV0[s, k] += c0 * (pdv[plus, s] - pdv[minus, s])
                    count += 1 + 2 * n
        last = n                       # vertex n of path 0 is q1
        for i in range(n):
            for j in range(n):
                total = 0.0
                for s in range(n):
                    total += dq[s] * Da[s, i, j]
                C[i, j] = total
        for r in range(n):
            value = DV[r]
            for j in range(n):
                value += (a[last, r, j] * (qd1[step, j] - qd0[step, j]) + C[r, j] * qd0[step, j]) / h
                for i in range(n):
                    value -= 0.5 * Da[r, i, j] * qd0[step, i] * qd1[step, j]
            lhs[step, r] = value
            for j in range(n):
                d_qd1, d_qd0 = a[last, r, j] / h, (C[r, j] - a[last, r, j]) / h
                for i in range(n):
                    d_qd1 -= 0.5 * Da[r, i, j] * qd0[step, i]
                    d_qd0 -= 0.5 * Da[r, j, i] * qd1[step, i]
                J[step, r, n + j] = d_qd0
                J[step, r, 3 * n + j] = d_qd1
            for k in range(n):
                d_q1, d_q0 = dDV1[r, k], dDV0[r, k]
                for j in range(n):
                    d_q1 += (da[last, k, r, j] * (qd1[step, j] - qd0[step, j]) + Da[k, r, j] * qd0[step, j]) / h
                    d_q0 -= Da[k, r, j] * qd0[step, j] / h
                    for s in range(n):
                        d_q1 += dq[s] * dDa1[s, k, r, j] * qd0[step, j] / h
                        d_q0 += dq[s] * dDa0[s, k, r, j] * qd0[step, j] / h
                    for i in range(n):
                        d_q1 -= 0.5 * dDa1[r, k, i, j] * qd0[step, i] * qd1[step, j]
                        d_q0 -= 0.5 * dDa0[r, k, i, j] * qd0[step, i] * qd1[step, j]
                J[step, r, k] = d_q0
                J[step, r, 2 * n + k] = d_q1


@njit
def _bound_step_jacobians(binding, q0, qd0, q1, qd1, dt, long_edge, lhs, J):
    """:func:`step_jacobians` of a :class:`discrete_robot.jit.Binding` (the calls from Python: see
    :mod:`discrete_robot.model.compiled`)."""
    step_jacobians(binding.model, binding.data, q0, qd0, q1, qd1, dt, long_edge, lhs, J)

