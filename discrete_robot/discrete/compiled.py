"""One evaluation of the discrete Lagrange equations (3.5) and their Newton Jacobian as a compiled kernel.

The same quantities as :meth:`DiscreteDynamicModel._terms` and ``_jacobian`` (whose module docstring gives the
equations; they remain the evaluation for any other LagrangianSystem), for a rigid-body system with a compiled
model (:mod:`discrete_robot.model.compiled`): a(q) and V(q) at the vertices of the difference paths and, for
the Jacobian, the gradient ∂/∂q [V − ½ q̇0ᵀ a q̇1] there (an O(n) recursion) and ∂a/∂q at q(k+1); the
partial-difference quotients D_r a and D_r V: with ``turned_differences`` (the compositions'), for a coordinate
that turns or slides its subtree rigidly (every one but those that followers mimic and those that share a root
link: ``Model.turned``) the difference of a and V between an edge's ends, computed at its end vertex by turning
the subtree back (:func:`discrete_robot.model.compiled._edge_difference`, without the cancellation ε |a| / |Δq_r|
of a(end) − a(start)), over Δq_r; for the others, Gauss–Legendre quadrature of the derivative on edges of at most
``small_step`` (see :mod:`.partial_difference`) and the divided difference of the vertices' a and V on longer
ones; an edge of length 0, a coordinate that has not moved, ends where it starts, and its quotient is the
derivative there (the vertex is evaluated once, with that row); the
left-hand side, its round-off estimate and ∂(residual)/∂q̇(k+1). :mod:`.newton` iterates on it, compiled too,
so that one discrete step is one call.

Model/Data (as Pinocchio's): :func:`compile_model` gives the discrete model's :class:`Model` (the arm's compiled
model, the difference paths, the joints' dissipation and Newton's settings), :func:`create_data` its
:class:`~.newton.Data` (the step's results and every array the step works in: nothing is allocated per step,
which numba checks, the step being compiled without its runtime; one Data per thread), and :func:`step` solves
one step into ``data.q`` and ``data.v``::

    arm = discrete_robot.model.compiled.compile_model(load_model("config/arm_6dof.yaml"))
    model = compile_model(arm, DifferencePaths(6))
    data = create_data(model)
    status, iterations, residual, update = step(model, data, q0, v0, tau, 1e-3, v0)   # data.q, data.v

From Python, a NamedTuple argument costs numba ~1 µs per array it holds to type at every call (a plain array
takes its fast path): the 1 kHz callers pass a :class:`~discrete_robot.jit.Binding` of the two instead
(``_bound_step``, ``_bound_held_steps``, ``_bound_left_hand_sides``: :class:`.dynamic_model.DiscreteDynamicModel`
and the planners call them), one argument typed once."""

import math
from typing import NamedTuple

import numpy as np

from discrete_robot.discrete import newton
from discrete_robot.discrete.newton import Data, held_steps, left_hand_sides, step
from discrete_robot.discrete.partial_difference import GAUSS_NODES, GAUSS_WEIGHTS, SMALL_STEP
from discrete_robot.geometry3d import copy_into, matrix_copy_into
from discrete_robot.jit import Binding, njit, overload
from discrete_robot.model import compiled as arm_compiled
from discrete_robot.model.compiled import rigid_body_terms

__all__ = ["Binding", "Data", "Model", "Workspace", "compile_model", "create_data", "held_steps", "left_hand_sides",
           "step", "step_terms"]

_EPS = np.finfo(float).eps
#: |Δq_r| (rad or m) below which the Jacobian's O(Δt²) row term is left out instead of divided by Δq_r
TINY_STEP = 1e-8


class Model(NamedTuple):
    """The discrete model of a compiled arm (module docstring)."""

    arm: arm_compiled.Model      # the rigid-body model
    position: np.ndarray         # (P, n) int64: the step of path p on which coordinate r moves
    moved: np.ndarray            # (P, n+1, n) bool: coordinate r is at its k+1 value at vertex m of path p
    nodes: np.ndarray            # (G,): the Gauss–Legendre rule on [0, 1] ...
    weights: np.ndarray          # (G,): ... and its weights
    small_step: float            # rad or m: the edge length up to which D_r takes the quadrature
    tiny_step: float             # rad or m: |Δq_r| below which the Jacobian's O(Δt²) row term is left out
    turned: np.ndarray           # (n,) bool: coordinate r's divided differences by turning its subtree
    damping: np.ndarray          # (n,): the joints' viscous damping, N m s/rad or N s/m
    friction: np.ndarray         # (n,): their Coulomb friction, N m or N
    tol: float                   # Newton's relative tolerance
    max_iter: int                # Newton's iteration bound


class Workspace(NamedTuple):
    """The arrays :func:`step_terms` works in (P paths, G Gauss points, n DOFs)."""

    vertices: np.ndarray         # (P, n+1, n): the paths' vertices
    slot: np.ndarray             # (P, n+1) int64: where vertex m of path p is among the distinct ones
    distinct: np.ndarray         # (P(n−1)+2, n): the distinct vertices
    vertex_terms: arm_compiled.Data   # a, V and their derivatives there
    size: np.ndarray             # (P(n−1)+2,): |V| + ½ |q̇0|ᵀ |a| |q̇1| at the distinct vertices (_size)
    points: np.ndarray           # (P G, n): the Gauss points of a short edge
    edge_terms: arm_compiled.Data     # ∂a/∂q_r, ∂V/∂q_r there
    dq: np.ndarray               # (n,): q1 − q0
    cancellation: np.ndarray     # (n,): the divided differences' cancellation
    change: np.ndarray           # (n, n): a1 − a0 = Σ_r Δq_r D_r a
    change_size: np.ndarray      # (n, n): Σ_r |Δq_r D_r a|
    f_quotient: np.ndarray       # (n,): D_r f for f = V − ½ q̇0ᵀ a q̇1
    gradient: np.ndarray         # (P, n+1, n): ∂_k f at the vertices where k has moved
    row: np.ndarray              # (n,)
    start: np.ndarray            # (n,): q0 of the last call, whose terms vertex_terms holds at slot 0 ...
    start_rows: np.ndarray       # (n,) bool: ... with these rows of ∂a/∂q and ∂V/∂q


def compile_model(arm: arm_compiled.Model, paths, small_step: float = SMALL_STEP, damping=None, friction=None,
                  tol: float = newton.DEFAULT_TOL, max_iter: int = 50, turned_differences: bool = False) -> Model:
    """The discrete :class:`Model` of the compiled ``arm`` on the difference ``paths``
    (:class:`.partial_difference.DifferencePaths`); ``small_step`` (rad or m); the joints' ``damping`` and
    ``friction`` (None: none); Newton's ``tol`` and ``max_iter``; ``turned_differences``: D_r a and D_r V by turning
    each coordinate's subtree where it can (see :class:`.dynamic_model.DiscreteDynamicModel`)."""
    n = arm_compiled.model_dof(arm)
    link = arm.dof_link[:n]
    # arm_compiled._edge_difference's DOFs: not one that followers mimic, nor a root link's among others
    turned = (bool(turned_differences) & ~np.isin(np.arange(n), arm.follower_leader)
              & ~((arm.links[link, 0] < 0) & (arm.links[link, 2] > 1)))
    return Model(arm=arm, position=np.ascontiguousarray(paths.position, dtype=np.int64),
                 moved=np.ascontiguousarray(paths.moved), nodes=GAUSS_NODES, weights=GAUSS_WEIGHTS,
                 small_step=float(small_step), tiny_step=TINY_STEP, turned=turned,
                 damping=np.zeros(n) if damping is None else np.asarray(damping, dtype=float),
                 friction=np.zeros(n) if friction is None else np.asarray(friction, dtype=float),
                 tol=float(tol), max_iter=int(max_iter))


def create_data(model: Model) -> Data:
    """The :class:`~.newton.Data` of a step of ``model``, with :func:`step_terms`' :class:`Workspace`."""
    P, n = model.position.shape
    G, count = model.nodes.shape[0], P * (n - 1) + 2
    work = Workspace(vertices=np.empty((P, n + 1, n)), slot=np.empty((P, n + 1), dtype=np.int64),
                     distinct=np.empty((count, n)),
                     vertex_terms=arm_compiled.create_data(model.arm, count, derivatives=True),
                     size=np.empty(count),
                     points=np.empty((P * G, n)),
                     edge_terms=arm_compiled.create_data(model.arm, P * G, derivatives=True),
                     dq=np.empty(n), cancellation=np.empty(n), change=np.empty((n, n)),
                     change_size=np.empty((n, n)),
                     f_quotient=np.empty(n), gradient=np.empty((P, n + 1, n)), row=np.empty(n),
                     start=np.full(n, np.nan), start_rows=np.zeros(n, dtype=np.bool_))
    return newton.create_data(n, work)


@njit(allocates=False)
def _size(V, a, qd0, qd1):
    """|V| + ½ |q̇0|ᵀ |a| |q̇1|: the size of the terms whose divided difference is D_r f, J."""
    size = abs(V)
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            size += 0.5 * abs(qd0[i]) * abs(a[i, j]) * abs(qd1[j])
    return size


@njit(allocates=False)
def _mean_difference(position, values, r, out):
    """Δ_r f averaged over the paths, from f at the vertices ``values`` (P, n+1, ...) into ``out``."""
    P = position.shape[0]
    share = 1.0 / P                 # P is 1 or 2: the product is the quotient, bit for bit, without a division
    total = out.reshape(-1)         # views, element by element: array arithmetic would allocate its temporaries
    total[:] = 0.0
    for path in range(P):
        m = position[path, r]
        end, start = values[path, m + 1].reshape(-1), values[path, m].reshape(-1)
        for i in range(total.shape[0]):
            total[i] += (end[i] - start[i]) * share


@njit(allocates=False)
def _edge_length(moved, dq, path, m):
    """Δq_r of the coordinate r that moves from vertex m − 1 to vertex m of the path."""
    for r in range(dq.shape[0]):
        if moved[path, m, r] and not moved[path, m - 1, r]:
            return dq[r]
    return math.nan


@njit(allocates=False)
def _at_end(moved, dq, path, m):
    """Whether vertex m of the path is q1: every coordinate it has not yet moved has Δq_r = 0."""
    left = 0.0
    for r in range(dq.shape[0]):
        if not moved[path, m, r]:
            left += abs(dq[r])
    return left == 0.0


# inlined into the Newton loop (numba IR): a call passed the step Data's ~80 arrays field by field, and the 1 kHz
# step of planar_2link took 13.6-13.8 µs, inlined 12.3-12.6 µs (the positional layout before: 11.4-11.8 µs)
@njit(inline="always")
def step_terms(model, data, q0, qd0, q1, qd1, dt, jacobian):
    """The discrete equations at the candidate state (q1, q̇1) of the step from (q0, q̇0), into ``data``:

    lhs (n,) = Δ[a q̇]/Δt − ½ q̇0ᵀ D_r a q̇1 + D_r V, with Δ[a q̇] = a1 Δq̇ + (Σ_r Δq_r D_r a) q̇0; a1 (n, n) = a(q1);
    Da (n, n, n) = D_r a_ij; DV (n,) = D_r V;
    noise (n,) = ε (|a1| |Δq̇| + |Δa| |q̇0|)/Δt + ε |D_r V| + ε (|V| + ½ |q̇0|ᵀ |a| |q̇1|)/|Δq_r| (the last at both
    ends of r's edges, where D_r is the divided difference: its cancellation); and, with ``jacobian``,
    J (n, n) = ∂lhs/∂q̇1 (without the joints' dissipation). ``model``: :class:`Model`; ``data.work``: the
    :class:`Workspace`.
    """
    position, moved, nodes, weights = model.position, model.moved, model.nodes, model.weights
    small_step, tiny_step = model.small_step, model.tiny_step
    lhs, a1, Da, DV, noise, J = data.lhs, data.a1, data.Da, data.DV, data.noise, data.J
    work = data.work
    vertices, slot, distinct, points = work.vertices, work.slot, work.distinct, work.points
    P, n = position.shape
    share = 1.0 / P         # the paths' mean (P is 1 or 2: see _mean_difference)
    G = nodes.shape[0]
    dq = work.dq
    still = False           # some coordinate has not moved: Δq_r = 0 exactly
    divided = 0             # the coordinates whose D_r is a divided difference of a and V (|Δq_r| > small_step)
    turning = False         # some D_r is the difference of a turned subtree's (model.turned)
    for r in range(n):
        dq[r] = q1[r] - q0[r]
        still = still or dq[r] == 0.0
        turning = turning or (dq[r] != 0.0 and model.turned[r])
        divided += abs(dq[r]) > small_step and not model.turned[r]
    for path in range(P):
        for m in range(n + 1):
            for r in range(n):
                vertices[path, m, r] = q1[r] if moved[path, m, r] else q0[r]
    # the distinct vertices: every path starts at q0 and ends at q1, and the edge of a coordinate that has not moved
    # ends where it starts (so a later path's vertex whose remaining edges have length 0 is q1); slot[p, m] says
    # where vertex m is. The Jacobian wants ∂_k f at each vertex for its moved coordinates k (its O(Δt) term below)
    # and ∂a/∂q at q1; a coordinate that has not moved, ∂_r a and ∂_r V at its edge (D_r: the edge integral of a
    # constant)
    count = 0
    for path in range(P):
        for m in range(n + 1):
            if path > 0 and (m == 0 or m == n):
                slot[path, m] = slot[0, m]
            elif still and m > 0 and _edge_length(moved, dq, path, m) == 0.0:
                slot[path, m] = slot[path, m - 1]
            elif still and path > 0 and _at_end(moved, dq, path, m):
                slot[path, m] = slot[0, n]
            else:
                slot[path, m] = count
                copy_into(vertices[path, m], distinct[count])
                count += 1
    derivatives = still or jacobian
    if jacobian:
        gradient_rows = work.vertex_terms.gradient_rows
        gradient_rows[:count] = False
        for path in range(P):
            for m in range(n + 1):
                for k in range(n):
                    gradient_rows[slot[path, m], k] |= moved[path, m, k]
    derivative_rows = work.vertex_terms.derivative_rows
    if derivatives:
        derivative_rows[:count] = False
        if jacobian:
            derivative_rows[slot[0, n]] = True
        for r in range(n):
            if dq[r] == 0.0:
                for path in range(P):
                    derivative_rows[slot[path, position[path, r]], r] = True
    # the difference along a turned coordinate's edge is asked of the edge's end vertex (never q0, whose terms may
    # be kept from the last call), back to the edge's start: a(end − Δq_r e_r) − a(end)
    edge_dof, edge_step = work.vertex_terms.edge_dof, work.vertex_terms.edge_step
    edge_dof[:count] = -1
    # a(q) is wanted at q1 (a1) and, for divided differences, at every vertex (their ends and _size); at q0
    # always, since its terms are kept over the step's Newton iterations, in which Δq and so `divided` change
    mass_wanted = work.vertex_terms.mass_wanted
    mass_wanted[:count] = divided > 0
    mass_wanted[0] = True
    mass_wanted[slot[0, n]] = True
    if turning:
        for r in range(n):
            if dq[r] != 0.0 and model.turned[r]:
                for path in range(P):
                    end = slot[path, position[path, r] + 1]
                    e = 0 if edge_dof[end, 0] < 0 else 1
                    edge_dof[end, e] = r
                    edge_step[end, e] = -dq[r]
    # q0 is the first distinct vertex at every call: while Newton iterates on one step, its terms from the last
    # call are still at slot 0 (rows not asked for are left as they were), and it is evaluated again only for a
    # derivative row it lacks, or for the gradient (it depends on q̇1: slot 0 has one when a coordinate that has not
    # moved leads a path)
    start, start_rows = work.start, work.start_rows
    first = 1
    for r in range(n):
        if q0[r] != start[r]:
            first = 0
    if first == 0:
        copy_into(q0, start)
        start_rows[:] = False
    for r in range(n):
        if derivatives and derivative_rows[0, r] and not start_rows[r]:
            first = 0
        if jacobian and work.vertex_terms.gradient_rows[0, r]:
            first = 0
    if jacobian:
        copy_into(qd0, work.vertex_terms.rates[0])
        copy_into(qd1, work.vertex_terms.rates[1])
        rigid_body_terms(model.arm, work.vertex_terms, distinct[:count], True, gradient=True, first=first)
    else:   # a call of its own: compiled with ``gradient`` at its default, it leaves that code out
        rigid_body_terms(model.arm, work.vertex_terms, distinct[:count], derivatives, first=first)
    if first == 0:
        for r in range(n):
            start_rows[r] = start_rows[r] or (derivatives and derivative_rows[0, r])
    a, V, size = work.vertex_terms.M, work.vertex_terms.potential_energy, work.size       # by slot
    if divided:
        for vertex in range(count):
            size[vertex] = _size(V[vertex], a[vertex], qd0, qd1)
    # partial-difference quotients: the divided difference, or the edge integral of the derivative on short edges
    pda, pdv = work.edge_terms.dM, work.edge_terms.g
    da, dv = work.vertex_terms.dM, work.vertex_terms.g
    cancellation = work.cancellation
    cancellation[:] = 0.0
    edge_dM, edge_dV = work.vertex_terms.edge_dM, work.vertex_terms.edge_dV
    for r in range(n):
        if dq[r] != 0.0 and model.turned[r]:
            Da[r] = 0.0
            DV[r] = 0.0
            for path in range(P):
                end = slot[path, position[path, r] + 1]
                e = 0 if edge_dof[end, 0] == r else 1
                for i in range(n):
                    for j in range(n):
                        Da[r, i, j] += edge_dM[end, e, i, j] * share
                DV[r] += edge_dV[end, e] * share
            # D_r = −(the difference back) / Δq_r; its round-off is now a few ε of the quotient itself
            for i in range(n):
                for j in range(n):
                    Da[r, i, j] /= -dq[r]
            DV[r] /= -dq[r]
            cancellation[r] = _size(DV[r], Da[r], qd0, qd1)
            continue
        if abs(dq[r]) > small_step:
            Da[r] = 0.0
            DV[r] = 0.0
            for path in range(P):
                start, end = slot[path, position[path, r]], slot[path, position[path, r] + 1]
                for i in range(n):
                    for j in range(n):
                        Da[r, i, j] += (a[end, i, j] - a[start, i, j]) * share
                DV[r] += (V[end] - V[start]) * share
                cancellation[r] += (size[start] + size[end]) * share
            for i in range(n):
                for j in range(n):
                    Da[r, i, j] /= dq[r]
            DV[r] /= dq[r]
            cancellation[r] /= abs(dq[r])
            continue
        Da[r] = 0.0
        DV[r] = 0.0
        if dq[r] == 0.0:
            for path in range(P):
                vertex = slot[path, position[path, r]]
                for i in range(n):
                    for j in range(n):
                        Da[r, i, j] += da[vertex, r, i, j] * share
                DV[r] += dv[vertex, r] * share
            continue
        for path in range(P):
            for g in range(G):
                copy_into(vertices[path, position[path, r]], points[path * G + g])
                points[path * G + g, r] += nodes[g] * dq[r]
        rigid_body_terms(model.arm, work.edge_terms, points, True, r)
        for path in range(P):
            for g in range(G):
                w = weights[g] / P
                for i in range(n):
                    for j in range(n):
                        Da[r, i, j] += w * pda[path * G + g, r, i, j]
                DV[r] += w * pdv[path * G + g, r]
    matrix_copy_into(a[slot[0, n]], a1)
    # a1 q̇1 − a0 q̇0 = a1 (q̇1 − q̇0) + (a1 − a0) q̇0 with a1 − a0 = Σ_r Δq_r D_r a (the telescoping sum (2.5)):
    # the same momentum change, but its round-off is ε |a| |Δq̇| + ε |Δa| |q̇0| instead of ε |a| |q̇| (once per
    # divided difference, ε 2|a| |q̇0|); over Δt, and through a⁻¹, the latter was the floor of T + V's drift
    change, change_size = work.change, work.change_size
    change[...] = 0.0
    change_size[...] = 0.0
    for r in range(n):
        for i in range(n):
            for j in range(n):
                change[i, j] += dq[r] * Da[r, i, j]
                change_size[i, j] += abs(dq[r] * Da[r, i, j])
    Df = work.f_quotient         # D_r f for f = V − ½ q̇0ᵀ a q̇1
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
        noise[r] = _EPS * (scale / abs(dt) + abs(DV[r]) + cancellation[r])
    if not jacobian:
        return
    # ∂_k f at the vertices, zeroed where coordinate k has not yet moved, and its partial differences
    gradient, vertex_gradient = work.gradient, work.vertex_terms.lagrangian_gradient
    for path in range(P):
        for m in range(n + 1):
            for k in range(n):
                gradient[path, m, k] = vertex_gradient[slot[path, m], k] if moved[path, m, k] else 0.0
    da1 = da[slot[0, n]]         # ∂a/∂q at q1
    row = work.row
    for r in range(n):
        _mean_difference(position, gradient, r, row)
        tiny = abs(dq[r]) < tiny_step
        for k in range(n):
            E = 0.0 if tiny else (row[k] - (Df[r] if k == r else 0.0)) / dq[r]
            value = a1[r, k] / dt + 0.5 * dt * E
            for j in range(n):
                value += 0.5 * da1[k, r, j] * qd1[j] - 0.5 * Da[r, j, k] * qd0[j]
            J[r, k] = value


@overload(newton.equations, inline="always")
def _equations_compiled(model, data, q0, qd0, q1, qd1, dt, jacobian):
    """In compiled code, :func:`.newton.equations` is :func:`step_terms` (its model is the compiled :class:`Model`);
    inlined: numba passes the Model and Data field by field (each array's reference count taken and given back) at
    every call, and this one is per Newton iteration (1.4 µs of the planar arm's 15 µs step)."""

    def implementation(model, data, q0, qd0, q1, qd1, dt, jacobian):
        step_terms(model, data, q0, qd0, q1, qd1, dt, jacobian)

    return implementation


@njit
def _bound_step(binding, q0, v0, tau, dt, guess):
    """:func:`step` of a :class:`Binding`."""
    return step(binding.model, binding.data, q0, v0, tau, dt, guess)


@njit
def _bound_held_steps(binding, q, v, previous, tau, dt, count, bound, turns, lower, upper, fractions, increments,
                      misses):
    """:func:`~.newton.held_steps` of a :class:`Binding`."""
    return held_steps(binding.model, binding.data, q, v, previous, tau, dt, count, bound, turns, lower, upper,
                      fractions, increments, misses)


@njit
def _bound_left_hand_sides(binding, q0, v0, q1, v1, dt, out):
    """:func:`~.newton.left_hand_sides` of a :class:`Binding`."""
    left_hand_sides(binding.model, binding.data, q0, v0, q1, v1, dt, out)
