r"""Retiming a stack's joint path: the same geometric path through its points, timed for minimum time under the
model's effort and velocity limits (and acceleration limits when given).

Input: positions (N, n) in any joint order, as a MoveIt planner returns them; their timing, if any, is ignored.

The path (:mod:`.path`): by default :class:`~.path.SplinePath`, the C² cubic spline through the points over the
uniform parameter s = 0 … N − 1 with not-a-knot ends (toppra's ``SplineInterpolator``); it passes through every
point to round-off (≤ 1e-9 rad, checked on every result). ``interpolation="blend"``: :class:`~.path.BlendedPath`,
straight segments with circular blends of at most ``max_deviation`` (rad) at the corners, as TOTG builds its path.

Dynamics along the path. With q̇ = q'(s) ṡ and q̈ = q'(s) s̈ + q''(s) ṡ², the inverse dynamics of the model is

    τ(s) = a(s) s̈ + b(s) ṡ² + c(s),   a = M q',  b = M q'' + C(q, q') q',  c = ∂V/∂q,

from one batched evaluation of the model's own M(q), ∂M/∂q and ∂V/∂q (the simulator's model) at every node. On a
curved path the discrete model's node velocity cannot stay on the path (its smoothing formula carries the velocity
vector from step to step; docs/planning.md), so the retimer times the continuous equations of the same model on a
grid, as TOPP-RA does, and solves them with reachability kernels (:mod:`.reachability`): on a step s_k → s_{k+1} of
length Δ with path speeds x = ṡ_k, y = ṡ_{k+1} and constant s̈ = (y² − x²)/2Δ (so Δt = 2Δ/(x + y), the trapezoid
rule), the torque at each end of the step is a homogeneous quadratic in (x, y) plus gravity,

    start of the step:  τ = (a_k/2Δ) y² + (b_k − a_k/2Δ) x² + c_k,
    end of the step:    τ = (a_{k+1}/2Δ + b_{k+1}) y² − (a_{k+1}/2Δ) x² + c_{k+1},

i.e. F = α y² + β x² + g, linear in the squared speeds (TOPP-RA's form), with both ends constrained (toppra's
"interpolation" discretisation). Acceleration limits add rows of the same form (a = q', b = q'', c = 0); velocity
limits cap ṡ at every node. One backward and one forward pass give the time-optimal speeds on the grid
(:func:`.reachability.squared_backward_pass`, :func:`.reachability.squared_forward_pass`): no NLP, O(n) per grid step.

Output, at every grid node: t, q, q̇ = q' ṡ, q̈ = q' s̈ + q'' ṡ² and the feedforward effort τ at the node with
that s̈, where s̈ is the mean of the two steps' (the first step's at the start; 0 at the goal, where the effort is
the torque that holds the arm, as the planning service's plans end). The mean keeps the knots' accelerations and
efforts consistent with the quintic JTC draws between knots (with each step's own s̈ at both of its ends, the
knot accelerations jump at every switch and the quintic overshoots between them: feedforward off by up to 90 %
of the limit on the UR5); it is within the limits, as the two steps' torques at the node are.
"""

import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from discrete_robot import budget
from discrete_robot.errors import ConvergenceError, InputError
from discrete_robot.model.dynamics import RigidBodySystem
from discrete_robot.model.lagrangian import velocity_product_forces
from discrete_robot.planning import reachability
from discrete_robot.planning.constraints import LIMIT_TOLERANCE, JointLimits
from discrete_robot.planning.min_time import BOUNDARY_MARGIN
from discrete_robot.planning.path import BlendedPath, SplinePath
from discrete_robot.validation import finite_scalar, whole_number

#: the interpolations a retime request may name
INTERPOLATIONS = ("spline", "blend")
#: largest distance (rad or m) of the retimed spline path from a given point at that point
POINT_DEVIATION_LIMIT = 1e-9


@dataclass(frozen=True)
class RetimedTrajectory:
    """Points in the model's joint order: s (path parameter), t (s), positions (rad or m), velocities,
    accelerations, efforts (N m or N); ``deviation``: the largest distance of the path from a given point at it
    (spline only, else NaN); ``effort_limits`` and ``velocity_limits``: the scaled limits the timing respects."""

    joint_names: tuple[str, ...]
    s: np.ndarray
    t: np.ndarray
    positions: np.ndarray
    velocities: np.ndarray
    accelerations: np.ndarray
    efforts: np.ndarray
    effort_limits: np.ndarray
    velocity_limits: np.ndarray
    interpolation: str
    deviation: float
    planning_time: float

    @property
    def duration(self) -> float:
        return float(self.t[-1])


def model_order(joint_names: Sequence[str], model_names: Sequence[str]) -> np.ndarray:
    """Indices that put values given in ``joint_names`` order into the model's order (InputError unless the names
    are a permutation of the model's; empty = the model's order)."""
    names = list(joint_names) or list(model_names)
    if len(set(names)) != len(names) or set(names) != set(model_names):
        raise InputError(f"joint_names {names} do not match the model's joints {list(model_names)} "
                         "(give each exactly once, any order, or none)")
    return np.array([names.index(name) for name in model_names], dtype=int)


def _scale(value, what: str) -> float:
    return finite_scalar(value, what, low=np.nextafter(0.0, 1.0), high=1.0)


def _grid(breakpoints: np.ndarray, steps: int) -> np.ndarray:
    """About ``steps`` steps over the path, every breakpoint a node, each interval divided evenly."""
    lengths = np.diff(breakpoints)
    counts = np.maximum(1, np.ceil(steps * lengths / lengths.sum()).astype(int))
    interval = np.repeat(np.arange(lengths.size), counts)
    within = np.arange(interval.size) - np.repeat(np.cumsum(counts) - counts, counts)
    nodes = breakpoints[interval] + lengths[interval] * within / counts[interval]
    return np.concatenate([nodes, breakpoints[-1:]])


def _path_dynamics(system: RigidBodySystem, q: np.ndarray, dq: np.ndarray, ddq: np.ndarray):
    """a = M q', b = M q'' + C(q, q') q', c = ∂V/∂q (each (m, n); N m or N per unit s̈, ṡ², 1) at the nodes q
    (m, n) with path derivatives q', q'': one batched evaluation of the model's M, ∂M/∂q and ∂V/∂q."""
    terms = system.evaluate(q, derivatives=True)
    a = np.einsum("mij,mj->mi", terms.M, dq)
    return a, np.einsum("mij,mj->mi", terms.M, ddq) + velocity_product_forces(terms.dM, dq), terms.g


def _limit_rows(a: np.ndarray, b: np.ndarray, c: np.ndarray, limit: np.ndarray, ds: np.ndarray):
    """The reachability rows (α, β, L, U; each (m, 2n)) of |a s̈ + b ṡ² + c| ≤ limit at both ends of every step
    (module docstring), linear in the squared speeds; a, b, c (m + 1, n) at the nodes, ds (m,)."""
    w0, w1 = a[:-1] / (2.0 * ds[:, None]), a[1:] / (2.0 * ds[:, None])
    alpha = np.hstack([w0, w1 + b[1:]])
    beta = np.hstack([b[:-1] - w0, -w1])
    gravity = np.hstack([c[:-1], c[1:]])
    bound = np.tile(limit, 2)
    return alpha, beta, -bound - gravity, bound - gravity


def retime(model, joint_names: Sequence[str], positions, effort_scale: float = 1.0, velocity_scale: float = 1.0,
           acceleration_limits=None, interpolation: str = "spline", grid_steps: int = 400,
           max_deviation: float = 0.1, system: RigidBodySystem | None = None) -> RetimedTrajectory:
    """The minimum-time timing of the path through ``positions`` (N, n; columns in ``joint_names`` order) under
    the model's effort and velocity limits times ``effort_scale`` and ``velocity_scale`` (in (0, 1]) and, when
    given, ``acceleration_limits`` (n, rad/s², ``joint_names`` order). ``grid_steps``: about how many steps the
    timing grid has, at least four per interval between points (every given point is a node of the spline's
    grid). ``system``: the model's RigidBodySystem
    when the caller has one. InputError for a malformed request, InfeasibleError when the limits cannot hold
    the arm somewhere on the path."""
    started = time.perf_counter()
    order = model_order(joint_names, model.joint_names)
    points = np.asarray(positions, dtype=float)
    if points.ndim != 2 or points.shape[0] < 2 or points.shape[1] != order.size:
        raise InputError(f"positions: expected at least 2 points of {order.size} values, got shape {points.shape}")
    if not np.all(np.isfinite(points)):
        raise InputError(f"positions: point {int(np.argwhere(~np.isfinite(points))[0, 0])} is not finite")
    points = points[:, order]
    if interpolation not in INTERPOLATIONS:
        raise InputError(f"interpolation {interpolation!r}: use one of {', '.join(INTERPOLATIONS)}")
    grid_steps = whole_number(grid_steps, "grid_steps", low=2)
    limits = JointLimits.from_model(model)
    limits = JointLimits.create(limits.joint_names, limits.effort * _scale(effort_scale, "effort_scale"),
                                limits.velocity * _scale(velocity_scale, "velocity_scale"), limits.lower,
                                limits.upper)
    limits.check_positions(points, "point")
    path = SplinePath(points) if interpolation == "spline" else BlendedPath(
        points, finite_scalar(max_deviation, "max_deviation", low=1e-6))
    # at least four steps between given points: at three, the spline's curvature changes too fast between the
    # constrained ends of a step (Panda, 200 points: recomputed torque 2.6 % over the limit; 0.8 % at four)
    s = _grid(path.breakpoints, max(grid_steps, 4 * (path.breakpoints.size - 1)))
    q, dq, ddq = path.derivatives(s)
    limits.check_positions(q, "path node")
    system = RigidBodySystem(model) if system is None else system
    a, b, c = _path_dynamics(system, q, dq, ddq)
    limits.check_holding(c, q)
    ds = np.diff(s)
    rows = [_limit_rows(a, b, c, limits.effort, ds)]
    tolerance = [np.tile(LIMIT_TOLERANCE * limits.effort, 2)]
    if acceleration_limits is not None:
        acceleration = np.asarray(acceleration_limits, dtype=float).reshape(-1)
        if acceleration.size != order.size or not np.all(acceleration > 0.0):
            raise InputError(f"acceleration_limits: expected {order.size} values > 0, got {acceleration.tolist()}")
        acceleration = acceleration[order]
        rows.append(_limit_rows(dq, ddq, np.zeros_like(q), acceleration, ds))
        tolerance.append(np.tile(LIMIT_TOLERANCE * np.where(np.isfinite(acceleration), acceleration, 1.0), 2))
    alpha, beta, lower, upper = (np.ascontiguousarray(np.hstack(parts)) for parts in zip(*rows, strict=True))
    with np.errstate(divide="ignore"):
        cap = np.min(np.where(np.abs(dq) > 0.0, limits.velocity / np.abs(dq), np.inf), axis=1)
    budget.check()
    K = reachability.squared_backward_pass(alpha, beta, lower, upper, cap, BOUNDARY_MARGIN)
    v = np.empty(s.size)
    failed = reachability.squared_forward_pass(alpha, beta, lower, upper, K, np.concatenate(tolerance), v)
    if failed >= 0:
        raise ConvergenceError(f"retime: no admissible speed after s = {s[failed]:.6g} (controllable up to "
                               f"{K[failed + 1]:.6g}); give more grid_steps")
    dt = 2.0 * ds / (v[:-1] + v[1:])
    step_sdd = (v[1:] ** 2 - v[:-1] ** 2) / (2.0 * ds)
    sdd = np.concatenate([step_sdd[:1], 0.5 * (step_sdd[:-1] + step_sdd[1:]), [0.0]])
    efforts = a * sdd[:, None] + b * (v * v)[:, None] + c
    deviation = float("nan")
    if interpolation == "spline":
        at_points = np.isin(s, path.breakpoints)
        deviation = float(np.max(np.abs(q[at_points] - path.points)))
        if deviation > POINT_DEVIATION_LIMIT:
            raise ConvergenceError(f"retime: the spline misses a given point by {deviation:.3g} rad")
    return RetimedTrajectory(tuple(model.joint_names), s, np.concatenate([[0.0], np.cumsum(dt)]), q,
                             dq * v[:, None], dq * sdd[:, None] + ddq * (v * v)[:, None], efforts, limits.effort,
                             limits.velocity, interpolation, deviation, time.perf_counter() - started)
