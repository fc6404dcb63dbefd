"""The Newton solve of one discrete step (and the equations' explicit evaluation over many steps), written once
and run two ways.

:func:`step` ``(model, data, q0, v0, tau, dt, guess)`` iterates on q̇(k+1) as :mod:`.dynamic_model`'s docstring
describes (analytic Jacobian, refreshed while the update is large and reused for chord steps below; stop on the
estimated remaining error, at the round-off floor, or after the first update when :func:`quadratic_bound` puts
what it leaves far below round-off), writing q(k+1) and q̇(k+1) into ``data.q`` and ``data.v``.
``model`` carries the joints' ``damping`` and ``friction`` and Newton's ``tol`` and ``max_iter``; ``data`` is a
:class:`Data` (:func:`create_data`). The equations come from :func:`equations` ``(model, data, q0, v0, q1, v1,
dt, jacobian)``, which fills ``data.lhs`` (the left-hand side), ``a1`` (a(q1)), ``Da`` and ``DV`` (the quotients
D_r a and D_r V), ``noise`` (the round-off estimate of lhs) and (when ``jacobian``) ``J`` (∂lhs/∂q̇(k+1)):

- for a rigid-body system with a compiled model, ``model`` is :class:`.compiled.Model`, :func:`equations` is
  the compiled kernel (:func:`.compiled.step_terms`, registered as its compiled form, working in
  ``data.work``) and :func:`step` runs compiled, so a whole step is one call;
- for any other :class:`~discrete_robot.model.lagrangian.LagrangianSystem`, ``model`` is the
  :class:`~.dynamic_model.DiscreteDynamicModel` and the very same source runs as Python (``step.py_func``),
  :func:`equations` calling its numpy evaluation.

The joints' damping c and Coulomb friction f (:mod:`.dissipation`; zeros when there are none) enter as the
force F_d(v̄) = −c v̄ − f tanh(v̄/v_s) at the step's mean velocity v̄ = Δq/Δt, held over the step; its slope
adds −½ dF_d/dv̄ to the Jacobian's diagonal.

Returns (status, iterations, |residual|∞ before the last update, last update); status is one of the codes
below, and :func:`describe` turns a failure into the message of a ConvergenceError.

Compiled, :func:`step` allocates nothing (numba's ``allocates=False``, :mod:`discrete_robot.jit`): the Jacobian
is inverted into ``data.inverse`` by :func:`discrete_robot.linalg.inverse_into` (a singular one is a status, not
an exception), and arrays are copied element by element. Without numba's reference counting at every field and
view, the planar_2link 1 kHz step took 6.6-6.8 µs instead of 8.6-8.7 (arm_6dof 43 instead of 47).
"""

import math
from typing import Any, NamedTuple

import numpy as np

from discrete_robot.discrete.dissipation import FRICTION_VELOCITY
from discrete_robot.geometry3d import copy_into
from discrete_robot.jit import njit
from discrete_robot.linalg import inverse_into

OK, NON_FINITE_JACOBIAN, NON_FINITE_VELOCITY, DIVERGING, NOT_CONVERGED, SINGULAR_JACOBIAN = range(6)
#: the round-off floor of an update: this many times the residual's round-off mapped through J⁻¹
FLOOR_FACTOR = 10.0
#: Newton refreshes its Jacobian while the update exceeds this (relative); below, chord steps converge as fast
CHORD_UPDATE = 1e-4
#: Newton's relative tolerance for a step, by default (the compositions' is :data:`.integrators.COMPOSITION_TOL`)
DEFAULT_TOL = 1e-14
#: the first update is the step's result when the error it leaves, bounded by :func:`quadratic_bound`, is below
#: this (relative, whatever ``tol``): far below the round-off of any iterate, so that a second update, which costs
#: another evaluation of the equations, would only move the round-off
FIRST_UPDATE_TOL = 1e-18
#: max |tanh''|, 4/(3√3): the curvature of the friction law's tanh
_TANH_CURVATURE = 4.0 / (3.0 * math.sqrt(3.0))
#: the whole steps :func:`held_steps`' stage-wise prediction extrapolates from, and its weights: the polynomial
#: through the last M changes, Δ_{k+1} = Σ_m (−1)^{m+1} C(M, m) Δ_{k+1−m}, misses by O(h^M)
PREDICTOR_STEPS = 8
_EXTRAPOLATION = np.array([(-1.0) ** (m + 1) * math.comb(PREDICTOR_STEPS, m) for m in range(1, PREDICTOR_STEPS + 1)])
_EPS = np.finfo(float).eps
_TINY = np.finfo(float).tiny
TWO_PI = 2.0 * np.pi


class Data(NamedTuple):
    """What a step writes: its result, the equations at the candidate state and Newton's arrays, all (n,) or
    (n, n) (Da: (n, n, n)), SI units."""

    q: np.ndarray           # q(k+1) of the last step solved, rad or m
    v: np.ndarray           # q̇(k+1), rad/s or m/s
    lhs: np.ndarray         # the equations' left-hand side at the candidate, N m or N
    a1: np.ndarray          # a(q1)
    Da: np.ndarray          # D_r a_ij, [r, i, j]
    DV: np.ndarray          # D_r V
    noise: np.ndarray       # the round-off estimate of lhs
    J: np.ndarray           # ∂lhs/∂q̇(k+1) (the Newton Jacobian)
    inverse: np.ndarray     # J⁻¹
    lu: np.ndarray          # J's LU factors (linalg.inverse_into)
    pivots: np.ndarray      # (n,) int64: their row swaps
    candidate: np.ndarray   # q(k+1) from the smoothing formula at Newton's iterate
    velocity: np.ndarray    # Newton's iterate of q̇(k+1)
    residual: np.ndarray    # lhs − F − F_d(v̄)
    roundoff: np.ndarray    # its round-off estimate
    slopes: np.ndarray      # dF_d/dv̄
    load: np.ndarray        # |F| + |F_d|
    guess: np.ndarray       # :func:`held_steps`' start of each step: the better of ...
    linear: np.ndarray      # ... the linear extrapolation of the last two velocities and ...
    extrapolated: np.ndarray    # ... the stage-wise extrapolation over the last whole steps
    curvature: np.ndarray   # (n,): quadratic_bound's Σ_rj |D_r a_kj| (+ friction)
    stage_q: np.ndarray     # :func:`held_steps`' state within a step of sub-steps: q, ...
    stage_v: np.ndarray     # ... q̇ ...
    stage_previous: np.ndarray  # ... and q̇ before its last sub-step
    work: Any               # the equations' workspace (:class:`.compiled.Workspace`; None as Python)


def create_data(n: int, work=None) -> Data:
    """A :class:`Data` for n DOFs around the equations' workspace ``work``."""
    vectors = {name: np.empty(n) for name in ("q", "v", "lhs", "DV", "noise", "candidate", "velocity", "residual",
                                                "roundoff", "slopes", "load", "guess", "linear", "extrapolated",
                                                "curvature", "stage_q", "stage_v", "stage_previous")}
    return Data(a1=np.empty((n, n)), Da=np.empty((n, n, n)), J=np.empty((n, n)), inverse=np.empty((n, n)),
                lu=np.empty((n, n)), pivots=np.empty(n, dtype=np.int64), work=work, **vectors)


@njit(allocates=False)
def _max_abs(x):
    """max_i |x_i|, NaN if one is NaN (as np.max; a loop: np.abs would allocate at every iteration)."""
    largest = 0.0
    for value in x:
        if math.isnan(value):
            return math.nan
        largest = max(largest, abs(value))
    return largest


@njit(allocates=False)
def _all_finite(A):
    """Whether every entry of the matrix A is finite (a loop: np.isfinite would allocate)."""
    for row in A:
        for value in row:
            if not math.isfinite(value):
                return False
    return True


def equations(model, data, q0, qd0, q1, qd1, dt, jacobian) -> None:
    """The discrete equations at (q1, q̇1) into ``data`` (module docstring); as Python, ``model`` is the
    DiscreteDynamicModel. Compiled code calls the kernel registered in :mod:`.compiled` instead."""
    model.python_terms(q0, qd0, q1, qd1, dt, jacobian, data)


@njit(allocates=False)
def _residual(q0, q1, dt, lhs, noise, F, damping, friction, residual, roundoff, slopes, load):
    """Fill the residual lhs − F − F_d(v̄) (v̄ = Δq/Δt), its round-off estimate, the force law's slopes dF_d/dv̄ and
    the load |F| + |F_d|; return |residual|∞."""
    norm = 0.0
    for r in range(q0.shape[0]):
        dq = q1[r] - q0[r]
        ratio_v = dq / dt / FRICTION_VELOCITY
        tanh = np.tanh(ratio_v)
        dissipative = -damping[r] * (dq / dt) - friction[r] * tanh
        slopes[r] = -damping[r] - friction[r] / FRICTION_VELOCITY * (1.0 - tanh ** 2)     # not 1/cosh²: overflows
        residual[r] = lhs[r] - F[r] - dissipative
        load[r] = abs(F[r]) + abs(dissipative)
        # v̄ = Δq/Δt carries the round-off of q itself, ε |q| / Δt, which the force law's slope amplifies
        roundoff[r] = noise[r] + _EPS * load[r] + _EPS * abs(slopes[r]) * (abs(q0[r]) + abs(dq)) / abs(dt)
        norm = max(norm, abs(residual[r]))
    return norm


@njit(allocates=False)
def _product_max(A, x, absolute):
    """max_i |Σ_j A_ij x_j|, or with ``absolute`` max_i Σ_j |A_ij| x_j."""
    largest = 0.0
    for i in range(A.shape[0]):
        total = 0.0
        for j in range(A.shape[1]):
            total += (abs(A[i, j]) if absolute else A[i, j]) * x[j]
        largest = max(largest, abs(total))
    return largest


@njit(allocates=False)
def quadratic_bound(inverse, Da, friction, curvature):
    """κ (1/(rad/s)) such that one Newton update from an error δ leaves at most κ ‖δ‖∞² (to leading order).

    With q(k+1) = q(k) + Δt (q̇(k) + q̇(k+1))/2, the residual's second derivative in q̇(k+1) is, to leading order in
    Δq, that of a(q(k+1)) Δq̇/Δt: ½ Σ_r ∂_r a δ_r δ, plus the friction law's ¼ f_k tanh''/v_s² δ_k². Newton leaves
    J⁻¹ of that, so κ = max_i Σ_k |J⁻¹_ik| (Σ_rj |D_r a_kj| + ¼ f_k max|tanh''|/v_s²), twice the leading term
    (on arm_6dof it bounds the measured remainder by 25 times or more)."""
    n = inverse.shape[0]
    for k in range(n):
        total = 0.25 * friction[k] * _TANH_CURVATURE / FRICTION_VELOCITY ** 2
        for r in range(n):
            for j in range(n):
                total += abs(Da[r, k, j])
        curvature[k] = total
    return _product_max(inverse, curvature, True)


@njit(allocates=False)
def step(model, data, q0, v0, tau, dt, guess):
    """Solve the step (q0, q̇0 = ``v0``) -> q̇(k+1) from ``guess`` under the forces ``tau`` held over the step
    (N m or N; dt in s); q(k+1) into ``data.q`` and q̇(k+1) into ``data.v``. See the module docstring for
    ``model`` and the return value."""
    qd0, F, out, q_out = v0, tau, data.v, data.q
    damping, friction, tol, max_iter = model.damping, model.friction, model.tol, model.max_iter
    lhs, DV, J, inverse, q1 = data.lhs, data.DV, data.J, data.inverse, data.candidate
    residual, roundoff, slopes, load = data.residual, data.roundoff, data.slopes, data.load
    n = q0.shape[0]
    qd = data.velocity
    copy_into(guess, qd)
    previous, update, scale, forced = np.inf, np.inf, np.inf, -1.0
    have_inverse, growing, residual_norm = False, 0, np.inf
    for iteration in range(1, max_iter + 1):
        refresh = not have_inverse or update > CHORD_UPDATE * scale
        for r in range(n):
            q1[r] = q0[r] + 0.5 * dt * (qd0[r] + qd[r])
        equations(model, data, q0, qd0, q1, qd, dt, refresh)
        residual_norm = _residual(q0, q1, dt, lhs, data.noise, F, damping, friction, residual, roundoff, slopes,
                                  load)
        if refresh:
            for r in range(n):
                J[r, r] -= 0.5 * slopes[r]
            # an explicit inverse: n is small, and chord steps then cost one matrix-vector product
            if not inverse_into(J, data.lu, data.pivots, inverse):
                return SINGULAR_JACOBIAN, iteration, residual_norm, update
            have_inverse = True
            if not _all_finite(inverse):
                return NON_FINITE_JACOBIAN, iteration, residual_norm, update
        if forced < 0.0:
            # the velocity change the potential and applied forces alone cause over the step
            for r in range(n):
                load[r] += abs(DV[r])
            forced = _product_max(inverse, load, False)
        # the Newton update q̇ ← q̇ − J⁻¹ residual
        step, finite = 0.0, True
        for i in range(n):
            delta = 0.0
            for j in range(n):
                delta -= inverse[i, j] * residual[j]
            qd[i] += delta
            step = max(step, abs(delta))
            finite = finite and np.isfinite(qd[i])
        if not finite:
            return NON_FINITE_VELOCITY, iteration, residual_norm, update
        previous, update = update, step
        # stalled at the round-off floor (above tol when a(q) is ill-conditioned): no update can do better,
        # and updates below it may grow or shrink at random
        floor = FLOOR_FACTOR * _product_max(inverse, roundoff, True)
        growing = growing + 1 if update > previous and update > floor else 0
        if growing >= 3:
            return DIVERGING, iteration, residual_norm, update
        scale = max(_max_abs(qd0), _max_abs(qd), forced, _TINY)
        ratio = update / previous
        # the error left after this update is about update · ratio / (1 − ratio) while the iteration contracts;
        # after the first, at most κ update², trusted only far below round-off (FIRST_UPDATE_TOL)
        if iteration > 1:
            remaining = update * ratio / (1.0 - ratio) if ratio < 0.5 else update
        else:
            quadratic = quadratic_bound(inverse, data.Da, friction, data.curvature) * update ** 2
            remaining = quadratic if quadratic <= min(tol, FIRST_UPDATE_TOL) * scale else update
        stalled = iteration > 1 and ratio >= 0.5 and update <= floor
        if remaining <= tol * scale or stalled:
            for r in range(n):
                out[r] = qd[r]
                q_out[r] = q0[r] + 0.5 * dt * (qd0[r] + qd[r])
            return OK, iteration, residual_norm, update
    return NOT_CONVERGED, max_iter, residual_norm, update


@njit
def carry_turns(q, bound, turns):
    """Take from each angle q_r past ±``bound``_r (inf: never) its whole turns of fl(2π), which join ``turns``_r;
    in place. True when any did."""
    carried = False
    for r in range(q.shape[0]):
        if abs(q[r]) > bound[r]:
            whole = np.round(q[r] / TWO_PI)
            turns[r] += whole
            q[r] -= whole * TWO_PI
            carried = True
    return carried


@njit(allocates=False)
def dissipated_work(q0, q1, dt, damping, friction):
    """The energy (J) the joints' damping and friction take over the step q0 -> q1 of dt seconds, as :func:`step`
    applies them: −Σ_r F_d,r(v̄) Δq_r at the mean velocity v̄ = Δq/Δt (negative over a step with dt < 0)."""
    work = 0.0
    for r in range(q0.shape[0]):
        dq = q1[r] - q0[r]
        work += (damping[r] * (dq / dt) + friction[r] * np.tanh(dq / dt / FRICTION_VELOCITY)) * dq
    return work


@njit(allocates=False)
def _predict(stage, ratio, v, before, increments, misses, data):
    """Newton's start for sub-step ``stage`` of a whole step from q̇ = ``v`` (q̇ before the last sub-step:
    ``before``; ``ratio``: this sub-step's length over the last one's) into ``data.guess``: of

    - the linear extrapolation q̇ + ratio (q̇ − q̇_before), an explicit Euler prediction (error O(h²)), and
    - the stage-wise one, q̇ + Σ_m (−1)^{m+1} C(M, m) Δ_m (M = :data:`PREDICTOR_STEPS`), where Δ_m is the change of
      q̇ over the same sub-step m whole steps before (``increments``[m − 1, stage]): the whole steps' map is smooth,
      so the sub-steps' starts and changes lie on smooth curves over the steps, and the polynomial through the
      last M changes misses by O(h^M),

    the one that missed this sub-step's result by less on the last whole step (``misses``[:, stage]; NaN: not yet
    known). Forces that change from step to step, or a joint stop, spoil the stage-wise one, and the linear one
    takes over. On arm_6dof with ``discrete4`` over 1 s the stage-wise start misses by 5.6e-11 of the velocity
    scale at h = 1 ms and 1.9e-14 at 0.3 ms (medians; the linear one 6.2e-5 and 5.5e-6; M = 4: 1e-7 and 2.4e-10),
    so the first update is the result (:data:`FIRST_UPDATE_TOL`) at 94 % and 99.7 % of the sub-steps.
    """
    linear, extrapolated = data.linear, data.extrapolated
    for r in range(v.shape[0]):
        linear[r] = (1.0 + ratio) * v[r] - ratio * before[r]
        change = 0.0
        for m in range(PREDICTOR_STEPS):
            change += _EXTRAPOLATION[m] * increments[m, stage, r]
        extrapolated[r] = v[r] + change
    copy_into(extrapolated if misses[1, stage] < misses[0, stage] else linear, data.guess)


@njit(allocates=False)
def _record(stage, v, v1, increments, misses, data):
    """After sub-step ``stage`` took q̇ from ``v`` to ``v1``: how far each of :func:`_predict`'s starts missed it,
    and its change, the newest of ``increments``[:, stage]."""
    linear, extrapolated = data.linear, data.extrapolated
    missed_linear, missed_extrapolated = 0.0, 0.0
    for r in range(v.shape[0]):
        missed_linear = max(missed_linear, abs(v1[r] - linear[r]))
        miss = abs(v1[r] - extrapolated[r])
        missed_extrapolated = math.inf if math.isnan(miss) else max(missed_extrapolated, miss)   # NaN: no history
        for m in range(PREDICTOR_STEPS - 1, 0, -1):
            increments[m, stage, r] = increments[m - 1, stage, r]
        increments[0, stage, r] = v1[r] - v[r]
    misses[0, stage], misses[1, stage] = missed_linear, missed_extrapolated


@njit
def held_steps(model, data, q, qd, previous, F, dt, count, bound, turns, lower, upper, fractions, increments,
               misses):
    """Up to ``count`` steps under the forces F held throughout, one compiled call. Each step is the composition of
    sub-steps of ``fractions``_i dt (:mod:`discrete_robot.composition`; [1.0]: the step itself), each sub-step
    :func:`step` (F and the joints' dissipation applied over it) from :func:`_predict`'s start. After each whole
    step the whole turns of each angle past ±``bound`` (inf: none) are carried into ``turns`` (as
    :class:`~.integrators.DiscreteStepper` does step by step). The state is updated in place: q (the angles less
    their turns), q̇, ``previous`` (q̇ before the last sub-step) and the predictor's history: ``increments``
    (:data:`PREDICTOR_STEPS`, sub-steps, n) and ``misses`` (2, sub-steps), NaN where not yet known, and all NaN
    again after a step that fails. Stops after a step that fails (its state not taken) or that ends outside
    [lower, upper] (q + 2π turns; the caller stops the joint: stops act between whole steps only). Returns (status
    of the last step, steps taken, Newton iterations over them, the energy the joints' dissipation took over them
    (J, :func:`dissipated_work` summed over the sub-steps))."""
    n, stages = q.shape[0], fractions.shape[0]
    damping, friction = model.damping, model.friction
    out, q1 = data.v, data.q
    stage_q, stage_v, stage_previous = data.stage_q, data.stage_v, data.stage_previous
    taken, iterations, status, dissipated = 0, 0, OK, 0.0
    while taken < count:
        copy_into(q, stage_q)
        copy_into(qd, stage_v)
        copy_into(previous, stage_previous)
        last, used, work = fractions[stages - 1], 0, 0.0
        for stage in range(stages):
            _predict(stage, fractions[stage] / last, stage_v, stage_previous, increments, misses, data)
            h = fractions[stage] * dt
            status, stage_iterations, _, _ = step(model, data, stage_q, stage_v, F, h, data.guess)
            if status != OK:
                break
            _record(stage, stage_v, out, increments, misses, data)
            used += stage_iterations
            work += dissipated_work(stage_q, q1, h, damping, friction)
            for r in range(n):
                stage_previous[r] = stage_v[r]
                stage_v[r] = out[r]
                stage_q[r] = q1[r]
            last = fractions[stage]
        if status != OK:
            increments[:] = math.nan
            misses[:] = math.nan
            break
        taken += 1
        iterations += used
        dissipated += work
        copy_into(stage_q, q)
        copy_into(stage_v, qd)
        copy_into(stage_previous, previous)
        carry_turns(q, bound, turns)
        outside = False
        for r in range(n):
            angle = q[r] + turns[r] * TWO_PI
            outside = outside or angle < lower[r] or angle > upper[r]
        if outside:
            break
    return status, taken, iterations, dissipated


@njit
def left_hand_sides(model, data, q0, qd0, q1, qd1, dt, out):
    """The equations' left-hand side at each of m given steps (rows of q0, q̇0, q1, q̇1: (m, n); dt: (m,)) into
    ``out`` (m, n): inverse dynamics of whole trajectories (the planner's), one call. ``model`` and ``data`` as
    for :func:`step`."""
    for k in range(q0.shape[0]):
        equations(model, data, q0[k], qd0[k], q1[k], qd1[k], dt[k], False)
        out[k] = data.lhs


def describe(status: int, iterations: int, update: float) -> str:
    """Why a Newton solve failed, for a ConvergenceError."""
    return {NON_FINITE_JACOBIAN: "non-finite Newton Jacobian", SINGULAR_JACOBIAN: "singular Newton Jacobian",
            NON_FINITE_VELOCITY: f"Newton diverged to non-finite velocities after {iterations} iterations",
            DIVERGING: f"Newton diverging (update {update:.3e} rad/s growing since 3 iterations)",
            NOT_CONVERGED: f"no convergence in {iterations} Newton iterations (last update {update:.3e} rad/s)"
            }[status]
