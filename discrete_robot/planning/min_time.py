r"""Minimum-time path following on the discrete dynamic robot model (Tan & Potts' problem).

Problem. Nodes q(k) = q(s_k) on a path; the discrete model (Potts; Neuman–Tourassis) leaves the time
steps Δt(k) free and ties node velocities by its smoothing formula q̇(k+1) = 2Δq(k)/Δt(k) − q̇(k).
Choose Δt(k) (equivalently the node velocities) to minimise T = Σ Δt(k) with the arm at rest at both
ends and, at every step, the generalised forces F(k) of the discrete Lagrange equations
(:meth:`DiscreteDynamicModel.generalized_forces`) within |F_r| ≤ effort_r, node velocities within
|q̇_r| ≤ velocity_r.

Reduction to a scalar speed. On a straight segment q = q_a + s u (|u| = 1), q̇(0) = 0 and the smoothing
formula keep every node velocity along u: q̇(k) = v_k u with v_k = ṡ ≥ 0, and the smoothing formula reads
Δt(k) = 2Δs_k/(v_k + v_{k+1}). The discrete Lagrange equations are linear in each node velocity and
contain products q̇(k) q̇(k+1), so with x = v_k, y = v_{k+1} each torque is a quadratic form plus the
discrete gravity term (:class:`StepCoefficients`)::

    F_r(x, y) = α_r y² + γ_r x y + β_r x² + g_r,        α = M(k+1)u/2Δs,  β = −M(k)u/2Δs,  g = Δ_r V/Δq_r.

The coupling: unlike continuous TOPP, where the path acceleration is a free control, here the pair of
consecutive speeds (x, y) is the control and also fixes Δt(k); the constraint on the pair is quadratic,
not linear. What saves the reachability analysis is that F − g is *homogeneous*: along a ray y = ρx,
F_r = x² Q_r(ρ) + g_r with Q_r(ρ) = α_r ρ² + γ_r ρ + β_r. When the arm can be held still
(L_r = −effort_r − g_r < 0 < U_r = effort_r − g_r; checked, else :class:`InfeasibleError`) the step's
feasible set is star-shaped about the origin: (x, ρx) is feasible iff x² ≤ X(ρ) = min_r h_r(ρ), with
h_r = U_r/Q_r where Q_r > 0, L_r/Q_r where Q_r < 0, ∞ where Q_r = 0.

Algorithm (one backward and one forward pass, as TOPP-RA's reachability analysis):

* Backward: the controllable speeds at node k are an interval [0, K_k] (star-shapedness: scaling a
  feasible pair towards 0 keeps it feasible and keeps y ≤ K_{k+1}). K_N = 0 and
  K_k = max_ρ min(√X(ρ), K_{k+1}/ρ), capped by the velocity limit. The maximiser is one of finitely
  many ρ, each a root of a quadratic: ρ = 0; a torque limit active at y = K_{k+1}
  (K²_{k+1}Q_r(ρ) = b_r ρ²); two limits active at once (b_r Q_s(ρ) = b_s Q_r(ρ)); the extremum of one
  h_r (Q_r'(ρ) = 0). K_k is the exact maximum over these candidates (:func:`.reachability.max_entry_speed`).
* Forward: v_0 = 0, v_{k+1} = the largest y ≤ K_{k+1} with (v_k, y) feasible, found exactly among the
  roots of the 2n quadratics F_r(v_k, y) = ±effort_r and K_{k+1} (:func:`.reachability.max_exit_speed`).

Why this is time-optimal for the discretised problem. T = Σ 2Δs_k/(v_k + v_{k+1}) decreases in every
v_k, so a feasible profile that is pointwise at least as fast as every other feasible profile is optimal.
The forward pass stays inside the controllable intervals, so it never dead-ends and ends at rest. It
dominates every feasible profile w by induction (w_k ≤ v_k ⇒ w_{k+1} ≤ v_{k+1}) provided the one-step
reach y⁺(x) = max{y: (x, y) feasible} does not decrease with x on [0, K_k] — the same condition TOPP-RA's
optimality needs. Here y⁺(x)² ≈ x² + 2Δs a_max(x), so it holds as soon as Δs·|∂a_max/∂(v²)| < ½, i.e. on
any grid fine enough for the velocity-squared terms (checked numerically against the generic NLP in the
tests and the benchmark).

Bang-bang at every step. Where the forward pass switches from the acceleration limit to the
deceleration boundary, or reaches the velocity limit, the switching step would have no active limit.
Such a step is split at the point s_m where the maximal-acceleration reach from its start meets the
deceleration boundary (or the velocity cap), found with brentq; both halves then have an active limit.
The result is the exact optimum for the final grid (the uniform grid plus these switch nodes), and every
step has a joint at its torque limit, or is a cruise step at the velocity limit.

No plan/model mismatch. The planned torques are those :meth:`generalized_forces` returns for the planned
nodes, velocities and time steps; executing them with :meth:`DiscreteDynamicModel.step` reproduces the
nodes (the step solves the same equations). :func:`replay` measures it.
"""

import logging
import time
from dataclasses import dataclass
from typing import Protocol

import numpy as np
from scipy.optimize import brentq, minimize

from discrete_robot import budget
from discrete_robot.errors import ConvergenceError, InfeasibleError, InputError
from discrete_robot.planning import reachability
from discrete_robot.planning.constraints import LIMIT_TOLERANCE, JointLimits
from discrete_robot.planning.path import Segment, WaypointPath

LOGGER = logging.getLogger(__name__)

#: K_k is taken this much (relative) inside the exact boundary, so the forward pass always has a
#: feasible next speed despite round-off; the time lost is of the same relative size.
BOUNDARY_MARGIN = 1e-10
#: a step counts as at a limit when its torque utilisation is within this of 1
SATURATION_TOLERANCE = 1e-6


class DiscreteForces(Protocol):
    """What the planner needs of the discrete model (DiscreteDynamicModel implements it)."""

    def generalized_forces_batch(self, q0, qd0, q1, qd1, dt) -> np.ndarray: ...

    def step(self, q0, qd0, F, dt): ...


@dataclass(frozen=True)
class StepCoefficients:
    """F(x, y) = α y² + γ x y + β x² + g for path speeds x = v_k, y = v_{k+1}, one row per step (each (m, n),
    N m per (rad/s)²; g in N m)."""

    alpha: np.ndarray
    gamma: np.ndarray
    beta: np.ndarray
    gravity: np.ndarray

    def torques(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """F (m, n) at entry speeds x and exit speeds y (m,)."""
        x, y = np.asarray(x, dtype=float)[:, None], np.asarray(y, dtype=float)[:, None]
        return self.alpha * y * y + self.gamma * x * y + self.beta * x * x + self.gravity


def step_coefficients(model: DiscreteForces, q0: np.ndarray, q1: np.ndarray, direction: np.ndarray,
                      ds: np.ndarray) -> StepCoefficients:
    """The quadratic form of the model's torques on the steps q0 → q1 (rows, (m, n); lengths ds (m,)), read off
    the model's inverse dynamics at four speed pairs per step, in one batch.

    F − g is a homogeneous quadratic in (x, y), so F at (σ,0), (2σ,0), (0,σ), (σ,σ) determines it.
    σ = √Δs keeps the four torques of order one (F ≈ M u (y² − x²)/2Δs) so that no coefficient is the
    difference of two large numbers.
    """
    sigma = np.sqrt(ds)
    pairs = [(sigma, 0.0 * sigma), (2.0 * sigma, 0.0 * sigma), (0.0 * sigma, sigma), (sigma, sigma)]
    x = np.concatenate([p[0] for p in pairs])[:, None]
    y = np.concatenate([p[1] for p in pairs])[:, None]
    forces = model.generalized_forces_batch(np.tile(q0, (4, 1)), x * direction, np.tile(q1, (4, 1)),
                                            y * direction, 2.0 * np.tile(ds, 4) / (x + y)[:, 0])
    f10, f20, f01, f11 = np.split(np.asarray(forces, dtype=float), 4)
    beta = (f20 - f10) / 3.0
    gravity = f10 - beta
    alpha = f01 - gravity
    gamma = f11 - gravity - alpha - beta
    scale = ds[:, None]
    return StepCoefficients(alpha / scale, gamma / scale, beta / scale, gravity)


@dataclass(frozen=True)
class MinTimePlan:
    """A planned motion on the discrete model: N+1 nodes, N steps.

    ``torques[k]`` is F(k), held over step k (t_k to t_{k+1}); ``accelerations[k]`` is the step's
    (q̇(k+1) − q̇(k))/Δt(k) (the discrete model's velocity is linear in time over a step; the last node
    repeats the last step's value). ``path_speed`` is ṡ at the nodes (NaN on smooth paths).
    """

    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    dt: np.ndarray
    torques: np.ndarray
    accelerations: np.ndarray
    s: np.ndarray
    path_speed: np.ndarray
    torque_utilisation: np.ndarray
    velocity_utilisation: np.ndarray
    joint_names: tuple[str, ...]
    effort_limits: np.ndarray
    velocity_limits: np.ndarray
    inserted_nodes: int
    planning_time: float
    method: str

    @property
    def duration(self) -> float:
        return float(self.t[-1])

    @property
    def steps(self) -> int:
        return int(self.dt.size)


def _assemble(model, limits: JointLimits, q: np.ndarray, qd: np.ndarray, dt: np.ndarray, s, speed,
              inserted: int, started: float, method: str) -> MinTimePlan:
    if not (np.all(np.isfinite(dt)) and np.all(dt > 0.0)):
        raise InfeasibleError(f"min-time: the planned steps are not finite and positive (shortest "
                              f"{np.min(dt):.3g} s, longest {np.max(dt):.3g} s): the velocity or torque limits are "
                              "too small for the path")
    torques = model.generalized_forces_batch(q[:-1], qd[:-1], q[1:], qd[1:], dt)
    accelerations = np.diff(qd, axis=0) / dt[:, None]
    accelerations = np.vstack([accelerations, accelerations[-1:]])
    t = np.concatenate([[0.0], np.cumsum(dt)])
    return MinTimePlan(t, q, qd, dt, torques, accelerations, np.asarray(s, dtype=float),
                       np.asarray(speed, dtype=float), limits.torque_utilisation(torques),
                       limits.velocity_utilisation(qd), limits.joint_names, limits.effort, limits.velocity,
                       inserted, time.perf_counter() - started, method)


class _SegmentPlanner:
    """Backward/forward passes on one straight segment (:mod:`.reachability`), with the switch nodes inserted."""

    def __init__(self, model: DiscreteForces, limits: JointLimits, segment: Segment):
        self.model = model
        self.limits = limits
        self.segment = segment
        self.direction = segment.direction
        self.cap = limits.speed_cap(self.direction)
        self.tolerance = LIMIT_TOLERANCE * limits.effort
        self._cache: dict[tuple[float, float], np.ndarray] = {}   # (s0, s1) -> rows α, γ, β, g

    def coefficients(self, s: np.ndarray) -> StepCoefficients:
        """The coefficients of the steps s[k] → s[k + 1]; those not met before are computed in one batch."""
        keys = list(zip(s[:-1].tolist(), s[1:].tolist(), strict=True))
        missing = [key for key in dict.fromkeys(keys) if key not in self._cache]
        if missing:
            s0, s1 = np.array(missing).T
            q0, q1 = self.segment.position(s0), self.segment.position(s1)
            fresh = step_coefficients(self.model, q0, q1, self.direction, s1 - s0)
            self.limits.check_holding(fresh.gravity, 0.5 * (q0 + q1))
            rows = np.stack([fresh.alpha, fresh.gamma, fresh.beta, fresh.gravity], axis=1)
            self._cache.update(zip(missing, rows, strict=True))
        rows = np.array([self._cache[key] for key in keys])
        return StepCoefficients(*(np.ascontiguousarray(rows[:, i]) for i in range(4)))

    def rows(self, s: np.ndarray) -> tuple[np.ndarray, ...]:
        """What the :mod:`.reachability` kernels take for the steps of the nodes s: α, γ, β and the limits (L, U)
        of the inertial part F − g, each (m, n)."""
        coeff = self.coefficients(s)
        return (coeff.alpha, coeff.gamma, coeff.beta, -self.limits.effort - coeff.gravity,
                self.limits.effort - coeff.gravity)

    def entry_speed(self, s0: float, s1: float, exit_cap: float) -> float:
        """Exact max entry speed of the step s0 → s1 (no margin, no velocity cap)."""
        step = (row[0] for row in self.rows(np.array([s0, s1])))
        return reachability.max_entry_speed(*step, exit_cap)

    def exit_speed(self, s0: float, s1: float, x: float, exit_cap: float) -> float:
        """Max exit speed of the step s0 → s1 entered at x; NaN if none is admissible."""
        step = (row[0] for row in self.rows(np.array([s0, s1])))
        return reachability.max_exit_speed(*step, float(x), float(exit_cap), self.tolerance)

    def passes(self, s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Controllable speeds K and the greedy profile v on the nodes s."""
        budget.check()
        rows = self.rows(s)
        K = reachability.backward_pass(*rows, np.full(s.size, self.cap), BOUNDARY_MARGIN)
        v = np.empty(s.size)
        k = reachability.forward_pass(*rows, K, self.tolerance, v)
        if k >= 0:
            raise ConvergenceError(
                f"min-time forward pass: no admissible speed after s = {s[k]:.6g} from v = {v[k]:.6g} "
                f"(controllable up to {K[k + 1]:.6g}); the grid may be too coarse for the dynamics")
        return K, v

    def slack_steps(self, s: np.ndarray, v: np.ndarray) -> list[int]:
        """Steps with no torque limit active that are not cruising at the velocity limit."""
        torques = self.coefficients(s).torques(v[:-1], v[1:])
        at_cap = v >= self.cap * (1.0 - 1e-9)
        slack = (self.limits.torque_utilisation(torques) < 1.0 - SATURATION_TOLERANCE) & ~(at_cap[:-1] & at_cap[1:])
        return np.flatnonzero(slack).tolist()

    def switch_node(self, s0: float, s1: float, x: float, exit_cap: float) -> float | None:
        """Where to split a slack step s0 → s1 entered at speed x (see the module docstring), or None."""
        at_cap = x >= self.cap * (1.0 - 1e-9)

        def mismatch(sm: float) -> float:
            braking = self.entry_speed(sm, s1, exit_cap)
            if at_cap:
                return self.cap - braking
            reach = self.exit_speed(s0, sm, x, np.inf)
            return (np.inf if np.isnan(reach) else reach) - min(braking, self.cap)

        # Very short sub-steps make the coefficients ill-conditioned; a root this close to an end would
        # leave a step within round-off of its limit anyway.
        margin = 1e-4 * (s1 - s0)
        a, b = s0 + margin, s1 - margin
        fa, fb = mismatch(a), mismatch(b)
        if not (fa < 0.0 < fb and np.isfinite(fb)):
            return None
        return float(brentq(mismatch, a, b, xtol=1e-13 * max(1.0, abs(s1)), rtol=4.0 * np.finfo(float).eps))

    def plan(self, grid: np.ndarray, max_insertions: int) -> tuple[np.ndarray, np.ndarray, int]:
        s = np.asarray(grid, dtype=float)
        inserted = 0
        while True:
            K, v = self.passes(s)
            slack = self.slack_steps(s, v)
            if not slack or inserted >= max_insertions:
                break
            new_nodes = [sm for k in slack if (sm := self.switch_node(s[k], s[k + 1], v[k], K[k + 1])) is not None]
            if not new_nodes:
                break
            s = np.sort(np.concatenate([s, new_nodes]))
            inserted += len(new_nodes)
        if slack:
            LOGGER.info("min-time: %d step(s) without an active limit remain on the segment from %s", len(slack),
                        np.round(self.segment.start, 4).tolist())
        return s, v, inserted


def plan_min_time(model: DiscreteForces, path: WaypointPath, limits: JointLimits, grid_points: int = 100,
                  max_insertions: int = 20) -> MinTimePlan:
    """The minimum-time motion along a straight-segment ``path`` (see the module docstring).

    ``grid_points`` is the approximate number of path nodes over the whole path; ``max_insertions``
    bounds the switch nodes added per segment. Raises InfeasibleError when a waypoint is outside the
    joint limits or the arm cannot be held against gravity somewhere on the path.
    """
    started = time.perf_counter()
    if path.smooth:
        return plan_min_time_nlp(model, path, limits, grid_points)
    _check_dimensions(path, limits)
    limits.check_positions(path.waypoints)
    qs, qds, speeds, ss = [], [], [], []
    inserted = 0
    for index, (segment, grid) in enumerate(zip(path.segments, path.segment_grids(grid_points), strict=True)):
        s, v, count = _SegmentPlanner(model, limits, segment).plan(grid, max_insertions)
        inserted += count
        first = 0 if index == 0 else 1  # interior waypoints are shared by both segments
        qs.append(segment.position(s[first:]))
        qds.append(v[first:, None] * segment.direction)
        speeds.append(v[first:])
        ss.append(s[first:])
    q, qd, speed, s = np.vstack(qs), np.vstack(qds), np.concatenate(speeds), np.concatenate(ss)
    dt = 2.0 * np.diff(s) / (speed[:-1] + speed[1:])
    return _assemble(model, limits, q, qd, dt, s, speed, inserted, started, "reachability")


def _check_dimensions(path: WaypointPath, limits: JointLimits) -> None:
    if path.dof != limits.dof:
        raise InputError(f"path has {path.dof} joints, the limits {limits.dof} ({', '.join(limits.joint_names)})")


def _velocities(chords: np.ndarray, chord_speed: np.ndarray) -> np.ndarray:
    """Node velocities from rest by the smoothing formula q̇(k+1) = 2Δq(k)/Δt(k) − q̇(k) = 2 w_k û_k − q̇(k).

    ``chords`` (N, n) are the Δq(k), ``chord_speed`` w_k = |Δq(k)|/Δt(k); the map is linear in w.
    """
    directions = chords / np.linalg.norm(chords, axis=1, keepdims=True)
    qd = np.zeros((chords.shape[0] + 1, chords.shape[1]))
    for k, (direction, w) in enumerate(zip(directions, chord_speed, strict=True)):
        qd[k + 1] = 2.0 * w * direction - qd[k]
    return qd


def _starting_chord_speeds(model, limits: JointLimits, q: np.ndarray, s: np.ndarray) -> np.ndarray:
    """A generic start for the NLP, knowing nothing of the reachability solution: the node speed profile
    v = c·√(distance to the nearer end), c halved from 10 until the torques respect the limits."""
    distance = np.minimum(s - s[0], s[-1] - s)
    shape = np.sqrt(distance / max(distance.max(), 1e-12))
    chords = np.diff(q, axis=0)
    lengths = np.linalg.norm(chords, axis=1)
    c = 10.0
    for _ in range(60):
        v = c * shape
        w = 0.5 * (v[:-1] + v[1:])
        qd = _velocities(chords, w)
        dt = lengths / w
        torques = model.generalized_forces_batch(q[:-1], qd[:-1], q[1:], qd[1:], dt)
        if np.all(limits.torque_utilisation(torques) <= 1.0) and np.all(limits.velocity_utilisation(qd) <= 1.0):
            break
        c *= 0.5
    return w


def plan_min_time_nlp(model: DiscreteForces, path: WaypointPath, limits: JointLimits, grid_points: int = 30,
                      nodes_s: np.ndarray | None = None, maxiter: int = 500) -> MinTimePlan:
    """The generic NLP over the time steps, solved by SLSQP with torques from the model.

    Variables: the chord speeds w_k = |Δq(k)|/Δt(k) (the Δt's in reciprocal form: the smoothing formula
    q̇(k+1) = 2 w_k û_k − q̇(k) is then linear in them, where in Δt it is badly scaled); objective
    Σ |Δq(k)|/w_k = Σ Δt(k); constraints |F_r(k)| ≤ effort_r, |q̇_r(k)| ≤ velocity_r and q̇(N) = 0;
    derivatives by finite differences. Velocities are vectors, so curved (smooth) paths work too. It is the
    benchmark's baseline and the planner of smooth paths: a local optimum from a generic start at
    O(N²) model evaluations per iteration. ``nodes_s`` (path parameters) overrides the uniform grid, e.g.
    to solve on the reachability planner's grid.
    """
    started = time.perf_counter()
    _check_dimensions(path, limits)
    limits.check_positions(path.waypoints)
    s = path.spline_grid(grid_points) if nodes_s is None else np.asarray(nodes_s, dtype=float)
    q = path.position(s)
    if path.smooth:
        limits.check_positions(q, what="spline node")
    chords = np.diff(q, axis=0)
    lengths = np.linalg.norm(chords, axis=1)
    n_steps = s.size - 1
    finite_velocity = np.isfinite(limits.velocity)
    cache: dict[bytes, tuple[np.ndarray, np.ndarray]] = {}

    def evaluate(w: np.ndarray):
        budget.check()
        key = w.tobytes()
        if key not in cache:
            cache.clear()
            qd = _velocities(chords, w)
            dt = lengths / w
            torques = model.generalized_forces_batch(q[:-1], qd[:-1], q[1:], qd[1:], dt)
            cache[key] = (qd, torques)
        return cache[key]

    def inequalities(w: np.ndarray) -> np.ndarray:
        qd, torques = evaluate(w)
        margins = [((limits.effort - torques) / limits.effort).ravel(),
                   ((limits.effort + torques) / limits.effort).ravel()]
        if np.any(finite_velocity):
            inner = qd[1:-1][:, finite_velocity] / limits.velocity[finite_velocity]
            margins += [(1.0 - inner).ravel(), (1.0 + inner).ravel()]
        return np.concatenate(margins)

    # q̇(N) lies in the span of the chords; constraining its coordinates in an orthonormal basis of that span
    # (rank 1 on a straight path) avoids redundant equalities, which make SLSQP's subproblem singular.
    _, singular, basis = np.linalg.svd(chords, full_matrices=False)
    basis = basis[singular > 1e-10 * singular[0]]

    def final_velocity(w: np.ndarray) -> np.ndarray:
        return basis @ evaluate(w)[0][-1]

    result = minimize(lambda w: float(np.sum(lengths / w)), _starting_chord_speeds(model, limits, q, s),
                      jac=lambda w: -lengths / (w * w), method="SLSQP", bounds=[(1e-9, None)] * n_steps,
                      constraints=[{"type": "ineq", "fun": inequalities}, {"type": "eq", "fun": final_velocity}],
                      options={"maxiter": maxiter, "ftol": 1e-12})
    w = np.asarray(result.x, dtype=float)
    qd = _velocities(chords, w)
    violation = max(float(np.max(-np.minimum(inequalities(w), 0.0))), float(np.max(np.abs(qd[-1]))))
    if violation > 1e-6:
        raise InfeasibleError(f"min-time NLP did not find a feasible motion: {result.message} "
                              f"(constraint violation {violation:.3g})")
    LOGGER.info("min-time NLP: %s after %d iterations", result.message, result.nit)
    # q̇(N) stays as the smoothing formula gives it (zero to the solver's tolerance): forcing it to zero would
    # break the model's equations in the last step.
    return _assemble(model, limits, q, qd, lengths / w, s, np.full(s.size, np.nan), 0, started, "nlp")


def replay(model: DiscreteForces, plan: MinTimePlan) -> np.ndarray:
    """Execute the planned torques and time steps through ``model.step`` from the plan's start at rest.

    Returns the positions (N+1, n) the discrete model produces; compare with ``plan.q``.
    """
    q = np.empty_like(plan.q)
    qd = np.zeros(plan.q.shape[1])
    q[0] = plan.q[0]
    for k in range(plan.steps):
        result = model.step(q[k], qd, plan.torques[k], plan.dt[k])
        q[k + 1], qd = result.q, result.qd
    return q
