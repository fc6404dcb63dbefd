"""One evaluation of the discrete Lagrange equations (3.5) and their Newton Jacobian as a compiled kernel.

The same quantities as :meth:`DiscreteDynamicModel._terms` and ``_jacobian`` (whose module docstring gives the
equations; they remain the evaluation for any other LagrangianSystem), for a rigid-body system with a compiled
model (:mod:`discrete_robot.model.compiled`): a(q), V(q) and, for the Jacobian, their derivatives at the
vertices of the difference paths; the partial-difference quotients D_r a and D_r V (by Gauss–Legendre
quadrature of the derivative on edges of at most ``small_step``, see :mod:`.partial_difference`); the
left-hand side, its round-off estimate and ∂(residual)/∂q̇(k+1). :mod:`.newton` iterates on it, compiled too,
so that one discrete step is one call."""

import numpy as np

from discrete_robot.discrete import newton
from discrete_robot.discrete.partial_difference import GAUSS_NODES, GAUSS_WEIGHTS
from discrete_robot.jit import njit, overload
from discrete_robot.model.compiled import rigid_body_terms

_EPS = np.finfo(float).eps


@njit
def _size(V, a, qd0, qd1):
    """|V| + ½ |q̇0|ᵀ |a| |q̇1|: the size of the terms whose divided difference is D_r f, J."""
    size = abs(V)
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            size += 0.5 * abs(qd0[i]) * abs(a[i, j]) * abs(qd1[j])
    return size


@njit
def _mean_difference(position, values, r, out):
    """Δ_r f averaged over the paths, from f at the vertices ``values`` (P, n+1, ...) into ``out``."""
    P = position.shape[0]
    out[...] = 0.0
    for path in range(P):
        m = position[path, r]
        out += (values[path, m + 1] - values[path, m]) / P


def context(arm, paths, small_step: float, tiny_step: float) -> tuple:
    """What :func:`step_terms` needs besides the state: the compiled model (:class:`CompiledArm`), the difference
    paths (:class:`.partial_difference.DifferencePaths`) and the two step thresholds (rad or m)."""
    return arm.arrays + (np.ascontiguousarray(paths.position, dtype=np.int64), np.ascontiguousarray(paths.moved),
                         GAUSS_NODES, GAUSS_WEIGHTS, float(small_step), float(tiny_step))


@njit
def step_terms(context, q0, qd0, q1, qd1, dt, jacobian, lhs, a1, Da, DV, noise, J):
    """The discrete equations at the candidate state (q1, q̇1) of the step from (q0, q̇0):

    lhs (n,) = Δ[a q̇]/Δt − ½ q̇0ᵀ D_r a q̇1 + D_r V, with Δ[a q̇] = a1 Δq̇ + (Σ_r Δq_r D_r a) q̇0; a1 (n, n) = a(q1);
    Da (n, n, n) = D_r a_ij; DV (n,) = D_r V;
    noise (n,) = ε (|a1| |Δq̇| + |Δa| |q̇0|)/Δt + ε |D_r V| + ε (|V| + ½ |q̇0|ᵀ |a| |q̇1|)/|Δq_r| (the last at both
    ends of r's edges, where D_r is the divided difference: its cancellation); and, with ``jacobian``,
    J (n, n) = ∂lhs/∂q̇1 (without the joints' dissipation). ``context`` (from :func:`context`): the model's
    arrays; ``position`` (P, n), the step of path p on which coordinate r moves; ``moved`` (P, n+1, n),
    coordinate r is at its k+1 value at vertex m of path p; ``nodes``, ``weights``, the Gauss–Legendre rule on
    [0, 1]; ``small_step``, the edge length up to which D_r takes the quadrature; ``tiny_step``, the |Δq_r|
    below which the Jacobian's O(Δt²) row term is left out.
    """
    (links, joint_rotation, joint_origin, com, mass, inertia, dof_link, prismatic, axes, before_eq, gravity,
     position, moved, nodes, weights, small_step, tiny_step) = context
    P, n = position.shape
    G = nodes.shape[0]
    vertices = np.empty((P, n + 1, n))
    for path in range(P):
        for m in range(n + 1):
            for r in range(n):
                vertices[path, m, r] = q1[r] if moved[path, m, r] else q0[r]
    # every path starts at q0 and ends at q1: those two are evaluated once, slot[p, m] says where vertex m is
    slot = np.empty((P, n + 1), dtype=np.int64)
    distinct = np.empty((P * (n - 1) + 2, n))
    count = 0
    for path in range(P):
        for m in range(n + 1):
            if path > 0 and (m == 0 or m == n):
                slot[path, m] = slot[0, m]
            else:
                slot[path, m] = count
                distinct[count] = vertices[path, m]
                count += 1
    ua, uV = np.empty((count, n, n)), np.empty(count)
    da, dv = (np.empty((count, n, n, n)), np.empty((count, n))) if jacobian else (np.empty((0, n, n, n)),
                                                                                np.empty((0, n)))
    rigid_body_terms(links, joint_rotation, joint_origin, com, mass, inertia, dof_link, prismatic, axes, before_eq,
                     gravity, distinct[:count], jacobian, ua, uV, da, dv)
    a, V = np.empty((P, n + 1, n, n)), np.empty((P, n + 1))
    for path in range(P):
        for m in range(n + 1):
            a[path, m] = ua[slot[path, m]]
            V[path, m] = uV[slot[path, m]]
    dq = q1 - q0
    # partial-difference quotients: the divided difference, or the edge integral of the derivative on short edges
    points = np.empty((P * G, n))
    pa, pV = np.empty((P * G, n, n)), np.empty(P * G)
    pda, pdv = np.empty((P * G, n, n, n)), np.empty((P * G, n))
    cancellation = np.zeros(n)
    for r in range(n):
        if abs(dq[r]) > small_step:
            _mean_difference(position, a, r, Da[r])
            Da[r] /= dq[r]
            DV[r] = 0.0
            for path in range(P):
                m = position[path, r]
                DV[r] += (V[path, m + 1] - V[path, m]) / P
                cancellation[r] += (_size(V[path, m], a[path, m], qd0, qd1)
                                    + _size(V[path, m + 1], a[path, m + 1], qd0, qd1)) / P
            DV[r] /= dq[r]
            cancellation[r] /= abs(dq[r])
            continue
        for path in range(P):
            for g in range(G):
                points[path * G + g] = vertices[path, position[path, r]]
                points[path * G + g, r] += nodes[g] * dq[r]
        rigid_body_terms(links, joint_rotation, joint_origin, com, mass, inertia, dof_link, prismatic, axes,
                         before_eq, gravity, points, True, pa, pV, pda, pdv, r)
        Da[r] = 0.0
        DV[r] = 0.0
        for path in range(P):
            for g in range(G):
                Da[r] += weights[g] / P * pda[path * G + g, r]
                DV[r] += weights[g] / P * pdv[path * G + g, r]
    a1[...] = a[0, n]
    # a1 q̇1 − a0 q̇0 = a1 (q̇1 − q̇0) + (a1 − a0) q̇0 with a1 − a0 = Σ_r Δq_r D_r a (the telescoping sum (2.5)):
    # the same momentum change, but its round-off is ε |a| |Δq̇| + ε |Δa| |q̇0| instead of ε |a| |q̇| (once per
    # divided difference, ε 2|a| |q̇0|); over Δt, and through a⁻¹, the latter was the floor of T + V's drift
    change, change_size = np.zeros((n, n)), np.zeros((n, n))
    divided = 0
    for r in range(n):
        divided += abs(dq[r]) > small_step
        for i in range(n):
            for j in range(n):
                change[i, j] += dq[r] * Da[r, i, j]
                change_size[i, j] += abs(dq[r] * Da[r, i, j])
    Df = np.empty(n)             # D_r f for f = V − ½ q̇0ᵀ a q̇1
    for r in range(n):
        momentum, bracket, scale = 0.0, 0.0, 0.0
        for j in range(n):
            momentum += a1[r, j] * (qd1[j] - qd0[j]) + change[r, j] * qd0[j]
            scale += abs(a1[r, j]) * abs(qd1[j] - qd0[j]) + (change_size[r, j] + 2.0 * divided * abs(a1[r, j])) * abs(
                qd0[j])
            for i in range(n):
                bracket += Da[r, i, j] * qd0[i] * qd1[j]
        Df[r] = DV[r] - 0.5 * bracket
        lhs[r] = momentum / dt + Df[r]
        noise[r] = _EPS * (scale / dt + abs(DV[r]) + cancellation[r])
    if not jacobian:
        return
    # ∂_k f at the vertices, zeroed where coordinate k has not yet moved, and its partial differences
    gradient = np.empty((P, n + 1, n))
    for path in range(P):
        for m in range(n + 1):
            vertex = slot[path, m]
            for k in range(n):
                value = 0.0
                if moved[path, m, k]:
                    value = dv[vertex, k]
                    for i in range(n):
                        for j in range(n):
                            value -= 0.5 * da[vertex, k, i, j] * qd0[i] * qd1[j]
                gradient[path, m, k] = value
    last = slot[0, n]            # q1
    row = np.empty(n)
    for r in range(n):
        _mean_difference(position, gradient, r, row)
        tiny = abs(dq[r]) < tiny_step
        for k in range(n):
            E = 0.0 if tiny else (row[k] - (Df[r] if k == r else 0.0)) / dq[r]
            value = a1[r, k] / dt + 0.5 * dt * E
            for j in range(n):
                value += 0.5 * da[last, k, r, j] * qd1[j] - 0.5 * Da[r, j, k] * qd0[j]
            J[r, k] = value


@overload(newton.equations)
def _equations_compiled(context, q0, qd0, q1, qd1, dt, jacobian, lhs, a1, Da, DV, noise, J):
    """In compiled code, :func:`.newton.equations` is :func:`step_terms` (its context is the kernel's tuple)."""

    def implementation(context, q0, qd0, q1, qd1, dt, jacobian, lhs, a1, Da, DV, noise, J):
        step_terms(context, q0, qd0, q1, qd1, dt, jacobian, lhs, a1, Da, DV, noise, J)

    return implementation


def warm_up() -> None:
    """Compile the kernels (make setup): steps of the shipped planar arm, short and long, a run of them under held
    forces (as a simulator takes them), and the inverse dynamics of one."""
    from discrete_robot.discrete.dynamic_model import DiscreteDynamicModel
    from discrete_robot.discrete.simulation import FixedStepSimulation
    from discrete_robot.model.description import load_model, package_config_path
    from discrete_robot.model.dynamics import RigidBodySystem

    system = RigidBodySystem(load_model(package_config_path("planar_2link.yaml")))
    system.evaluate(np.zeros(system.dof), derivatives=True)
    model = DiscreteDynamicModel(system)
    for dt in (1e-3, 0.1):
        step = model.step(np.zeros(system.dof), np.ones(system.dof), np.zeros(system.dof), dt)
    model.generalized_forces(np.zeros(system.dof), np.ones(system.dof), step.q, step.qd, 0.1)
    FixedStepSimulation(system, "discrete", 1e-3, np.zeros(system.dof), np.ones(system.dof)).step(
        3, np.zeros(system.dof))
