r"""DMOC on the discrete dynamic model: minimum-effort rest-to-rest motions of any arm, by IPOPT on the sparse
transcription (Junge, Marsden & Ober-Blöbaum's discrete mechanics and optimal control, with Potts' energy-
conserving discrete model (seed 000, eq. 3.5) as the discrete mechanics — the equations the simulator steps).

Variables: the states (q_k, q̇_k) at the N+1 times t_k = k h and the forces F_k held over each step, stored as
fractions w_k = F_k / effort of the joints' effort limits, so that a shoulder's 150 N m and a wrist's 28 N m (and
a wrist whose optimal force is 10⁵ times smaller than the shoulder's) are resolved alike. Per stage the vector
is [q_k, q̇_k, w_k]; the last stage has no force. Constraints, for every step k = 0 … N−1::

    (lhs(q_k, q̇_k, q_{k+1}, q̇_{k+1}) − F_k) / effort = 0      the discrete equations (3.5), a force fraction
    (q_{k+1} − q_k − h (q̇_k + q̇_{k+1})/2) / h = 0             the smoothing formula (3.11), rad/s

with q_0, q̇_0 = 0, q_N, q̇_N = 0 fixed (and any interior waypoints, passed without stopping, fixed at the nodes
allotted in proportion to the largest joint travel along the segments), |w_k| ≤ 1, |q̇_k| ≤ the velocity limits (at
the nodes, where the executed trajectory is sampled) and the position limits. Objective: J = Σ_k h/2 |F_k|² (N² m²
s), the midpoint-rule quadrature of ∫ ½|u|² dt for forces that are constant over each step. Solving the discrete
equations forward from rest under the optimal F_k (the simulator's Newton step) then reproduces the optimised
states: the constraints are those equations, not an approximation of them.

The partial-difference quotient's evaluation. The simulator takes D_r f as the divided difference on edges longer
than its ``small_step`` (1e-5, chosen for speed at 1 kHz), which loses ε|f|/|Δq_r| to cancellation; the quadrature
form (the edge integral of ∂_r f) is the same quotient to below round-off on edges up to 1e-2
(:mod:`discrete_robot.discrete.partial_difference`). Where a joint turns round within a step its edge is short,
and the equations are only defined to that round-off: on the 6-joint arm at h = 0.05 the wrist's 5.6e-5 rad edge
at step 3 makes the left-hand side move by 3.5e-11 N m for one-ulp changes of q(k+1), which the Newton solve maps
to 1.3e-9 rad/s, and the unstable motion (gain 4e2–1e4 from step 4 to the end) to 7.8e-7 rad at the goal. So
the transcription and the replay (:func:`accurate_model`) take the quotient from the edge integral on edges up
to :data:`~.dmoc_compiled.LONG_EDGE` (1e-3), where the Jacobian kernel already does: the same equations, with
the cancellation cut to ε|f|/1e-3 (docs/planning.md).

Derivatives. Each step's equations involve the two states it joins: the constraint Jacobian is block-banded,
n rows × 4n columns per step from :func:`.dmoc_compiled.step_jacobians` (exact, from the compiled model's ∂a/∂q
and ∂V/∂q at the difference paths' vertices), plus the constant smoothing rows and the −I of the forces. The
Lagrangian's Hessian is block-diagonal over the steps (4n × 4n each, overlapping at the shared states) and comes
from forward differences of that exact Jacobian weighted by the multipliers (:meth:`DmocProblem.hessian_values`;
an exact one would need the model's second derivatives). IPOPT (through casadi's ``nlpsol``; casadi is imported
only here, when a solve runs) gets the equations, the Jacobian and the Hessian as casadi Callbacks with their
sparsity given. Measured on the 6-joint arm at h = 0.05: 24 iterations with this Hessian; with IPOPT's
limited-memory BFGS instead, no convergence in 620 (docs/planning.md). Why Callbacks rather than the model
written in casadi's algebra: the constraints are then the compiled kernels the simulator runs (one home for the
physics); the casadi form was not built, so there is no measurement of it.

Start guesses: ``line``, the straight line from start to goal with the time law 3τ² − 2τ³ (at rest at both ends)
and the forces that hold the arm against gravity at each step's midpoint; ``min_time``, the minimum-time plan
along the same line (:func:`~discrete_robot.planning.min_time.plan_min_time`) slowed down to the requested
duration, with the discrete model's inverse dynamics along it.
"""

import logging
import time
from dataclasses import dataclass

import numpy as np

from discrete_robot import budget
from discrete_robot.discrete import compiled
from discrete_robot.discrete.dynamic_model import DiscreteDynamicModel
from discrete_robot.errors import InputError
from discrete_robot.jit import bind
from discrete_robot.planning import dmoc_compiled
from discrete_robot.planning.continuous_replay import replay_arm
from discrete_robot.planning.dmoc import smooth_positions, time_grid, validated_endpoints
from discrete_robot.planning.dmoc_compiled import LONG_EDGE, _bound_step_jacobians
from discrete_robot.planning.sqp import OptimalControlSolution, SqpOutcome

LOGGER = logging.getLogger(__name__)

GUESSES = ("line", "min_time")
#: relative step of the Hessian's forward differences of the exact Jacobian (error ~1e-8 of its entries)
HESSIAN_STEP = 1e-7
#: largest residual of the discrete equations (force fraction) and the smoothing formula (rad/s) IPOPT accepts
CONSTRAINT_TOL = 1e-10


@dataclass(frozen=True)
class Transcription:
    """Index bookkeeping of the sparse DMOC problem (module docstring) for n joints and N steps."""

    n: int
    steps: int

    @property
    def stride(self) -> int:
        return 3 * self.n

    @property
    def size(self) -> int:
        return self.steps * self.stride + 2 * self.n

    @property
    def rows(self) -> int:
        return 2 * self.n * self.steps

    def split(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(q (N+1, n), q̇ (N+1, n), w (N, n)) of the variable vector x."""
        n, N = self.n, self.steps
        stages = x[:N * self.stride].reshape(N, 3 * n)
        q = np.vstack([stages[:, :n], x[N * self.stride:][None, :n]])
        qd = np.vstack([stages[:, n:2 * n], x[N * self.stride:][None, n:]])
        return q, qd, stages[:, 2 * n:]

    def join(self, q: np.ndarray, qd: np.ndarray, w: np.ndarray) -> np.ndarray:
        return np.concatenate([np.hstack([q[:-1], qd[:-1], w]).ravel(), q[-1], qd[-1]])

    def pattern(self) -> tuple[np.ndarray, np.ndarray]:
        """(rows, columns) of the Jacobian's nonzeros, in the order :meth:`DmocProblem.jacobian_values` fills."""
        n, N = self.n, self.steps
        k = np.arange(N)[:, None, None]
        r = np.arange(n)[None, :, None]
        state = np.concatenate([np.arange(2 * n), self.stride + np.arange(2 * n)])[None, None, :]
        dynamics_rows = np.broadcast_to(2 * n * k + r, (N, n, 4 * n))
        dynamics_columns = np.broadcast_to(self.stride * k + state, (N, n, 4 * n))
        force_rows = (2 * n * k + r)[..., 0]
        force_columns = (self.stride * k[..., 0] + 2 * n + r[..., 0])
        # smoothing rows: q_k, q̇_k, q_{k+1}, q̇_{k+1} of joint r
        smooth_rows = np.broadcast_to(2 * n * k + n + r, (N, n, 4))
        smooth_columns = self.stride * k + r + np.array([0, n, self.stride, self.stride + n])[None, None, :]
        rows = np.concatenate([dynamics_rows.ravel(), force_rows.ravel(), smooth_rows.ravel()])
        columns = np.concatenate([dynamics_columns.ravel(), force_columns.ravel(), smooth_columns.ravel()])
        return rows, columns


def waypoint_nodes(waypoints: np.ndarray, steps: int) -> np.ndarray:
    """The node of each waypoint (m, n): 0, N and the interior ones in proportion to the largest joint travel along
    the straight segments (rad or m); InputError when two waypoints would fall on one node."""
    travel = np.concatenate([[0.0], np.cumsum(np.max(np.abs(np.diff(waypoints, axis=0)), axis=1))])
    if travel[-1] <= 0.0:
        raise InputError("waypoints: the start and the goal are the same configuration")
    nodes = np.rint(travel / travel[-1] * steps).astype(int)
    if np.any(np.diff(nodes) < 1):
        raise InputError(f"waypoints: {len(waypoints)} waypoints need more than {steps} steps (or a waypoint repeats "
                         "the one before it): give a smaller time step")
    return nodes


def accurate_model(discrete: DiscreteDynamicModel) -> DiscreteDynamicModel:
    """``discrete`` with its quotient switch ``small_step`` at :data:`LONG_EDGE` (module docstring): the same
    discrete equations, evaluated without the divided difference's cancellation on edges up to 1e-3 rad or m.
    :func:`.dmoc_compiled.step_jacobians` needs ``small_step`` ≤ its ``long_edge``: above, it would skip the
    quotient of the edges between the two."""
    if discrete.small_step == LONG_EDGE:
        return discrete
    return DiscreteDynamicModel(discrete.system, discrete.operator, discrete.tol, discrete.max_iter, LONG_EDGE,
                                discrete.dissipation)


class DmocProblem:
    """The sparse DMOC transcription of one rest-to-rest move of a compiled arm (module docstring), on
    :func:`accurate_model` of ``discrete`` (kept as ``self.discrete``)."""

    def __init__(self, discrete: DiscreteDynamicModel, q_start, q_goal, duration: float, h: float, effort,
                 velocity=None, lower=None, upper=None, via=()):
        discrete = accurate_model(discrete)
        system = discrete.system
        if getattr(system, "compiled", None) is None:
            raise InputError("sparse DMOC needs a rigid-body system with a compiled model (RigidBodySystem)")
        self.discrete = discrete
        self.system = system
        self.q_start, self.q_goal, effort = validated_endpoints(system, q_start, q_goal, effort)
        if effort is None:
            raise InputError("sparse DMOC: give the joints' effort limits (they scale the forces)")
        self.effort = effort
        self.n = system.dof
        self.steps, self.h = time_grid(duration, h)
        self.layout = Transcription(self.n, self.steps)
        #: the discrete model's compiled Model, bound to the Data of its step kernels and of the Jacobian kernel
        self.model = discrete.compiled
        self._steps = bind(self.model, compiled.create_data(self.model))
        self._jacobians = bind(self.model, dmoc_compiled.create_data(self.model))
        self._dt = np.full(self.steps, self.h)
        self._lhs = np.empty((self.steps, self.n))
        self._jacobian = np.empty((self.steps, self.n, 4 * self.n))
        self.velocity = np.full(self.n, np.inf) if velocity is None else np.asarray(velocity, dtype=float)
        self.lower = np.full(self.n, -np.inf) if lower is None else np.asarray(lower, dtype=float)
        self.upper = np.full(self.n, np.inf) if upper is None else np.asarray(upper, dtype=float)
        self.waypoints = np.vstack([self.q_start, np.asarray(via, dtype=float).reshape(-1, self.n), self.q_goal])
        self.waypoint_nodes = waypoint_nodes(self.waypoints, self.steps)

    @property
    def t(self) -> np.ndarray:
        return np.arange(self.steps + 1) * self.h

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """(lower, upper) of every variable: the ends fixed at rest, the limits elsewhere."""
        N = self.steps
        q_low, q_high = np.tile(self.lower, (N + 1, 1)), np.tile(self.upper, (N + 1, 1))
        qd_low, qd_high = np.tile(-self.velocity, (N + 1, 1)), np.tile(self.velocity, (N + 1, 1))
        q_low[self.waypoint_nodes] = q_high[self.waypoint_nodes] = self.waypoints
        qd_low[[0, -1]] = qd_high[[0, -1]] = 0.0
        ones = np.ones((N, self.n))
        return self.layout.join(q_low, qd_low, -ones), self.layout.join(q_high, qd_high, ones)

    def forces(self, x: np.ndarray) -> np.ndarray:
        return self.layout.split(x)[2] * self.effort

    def exact_forces(self, x: np.ndarray) -> np.ndarray:
        """The forces (N, n) under which the discrete model steps exactly through the optimised velocities: its
        inverse dynamics (:meth:`DiscreteDynamicModel.generalized_forces_batch`) along them, the positions taken
        from the smoothing formula. They differ from the force variables by the solver's residual (1e-12), which
        the motion's instability under gravity would amplify some 10³ times over 1.5 s in a replay."""
        _, qd, _ = self.layout.split(x)
        steps = 0.5 * self.h * (qd[:-1] + qd[1:])
        q = self.q_start + np.vstack([np.zeros(self.n), np.cumsum(steps, axis=0)])
        return self.discrete.generalized_forces_batch(q[:-1], qd[:-1], q[1:], qd[1:], self._dt)

    def effort_cost(self, x: np.ndarray) -> float:
        """J = Σ h/2 |F_k|², N² m² s."""
        F = self.forces(x)
        return 0.5 * self.h * float(np.sum(F * F))

    def _evaluate(self, x: np.ndarray, jacobian: bool):
        q, qd, _ = self.layout.split(x)
        states = [np.ascontiguousarray(v) for v in (q[:-1], qd[:-1], q[1:], qd[1:])]
        if jacobian:
            _bound_step_jacobians(self._jacobians, *states, self._dt, LONG_EDGE, self._lhs, self._jacobian)
        else:
            compiled._bound_left_hand_sides(self._steps, *states, self._dt, self._lhs)
        return q, qd

    def constraints(self, x: np.ndarray) -> np.ndarray:
        """The 2nN equality residuals, per step [dynamics (force fraction), smoothing (rad/s)]."""
        q, qd = self._evaluate(x, jacobian=False)
        dynamics = (self._lhs - self.forces(x)) / self.effort
        smoothing = (np.diff(q, axis=0) - 0.5 * self.h * (qd[:-1] + qd[1:])) / self.h
        return np.hstack([dynamics, smoothing]).ravel()

    def jacobian_values(self, x: np.ndarray) -> np.ndarray:
        """The Jacobian's nonzeros in the order of :meth:`Transcription.pattern`."""
        self._evaluate(x, jacobian=True)
        N, n, h = self.steps, self.n, self.h
        smooth = np.broadcast_to(np.array([-1.0 / h, -0.5, 1.0 / h, -0.5]), (N, n, 4))
        return np.concatenate([(self._jacobian / self.effort[None, :, None]).ravel(), -np.ones(N * n),
                               smooth.ravel()])

    def hessian_pattern(self) -> tuple[np.ndarray, np.ndarray]:
        """(rows, columns) of the Lagrangian Hessian's upper triangle, in the order of :meth:`hessian_values`
        (with repetitions where two steps' blocks overlap: the values there are summed)."""
        n, N, stride = self.n, self.steps, self.layout.stride
        state = np.concatenate([np.arange(2 * n), stride + np.arange(2 * n)])
        index = stride * np.arange(N)[:, None] + state[None, :]                     # (N, 4n)
        upper = np.triu_indices(4 * n)            # index increases along a block: its upper triangle is upper
        forces = (stride * np.arange(N)[:, None] + 2 * n + np.arange(n)[None, :]).ravel()
        return (np.concatenate([index[:, upper[0]].ravel(), forces]),
                np.concatenate([index[:, upper[1]].ravel(), forces]))

    def hessian_values(self, x: np.ndarray, objective_weight: float, multipliers: np.ndarray) -> np.ndarray:
        """The Lagrangian's Hessian σ ∇²J + Σ λ_i ∇²c_i at x in the order of :meth:`hessian_pattern`.

        Only the discrete equations are curved in the states: each step's block (4n × 4n, in the states it
        joins) is the forward difference of the exact Jacobian rows weighted by their multipliers, taken for
        all steps at once (they are independent); ``objective_weight`` σ carries the objective's scale.
        """
        q, qd, _ = self.layout.split(x)
        states = np.ascontiguousarray(np.hstack([q[:-1], qd[:-1], q[1:], qd[1:]]))      # (N, 4n)
        weights = multipliers.reshape(self.steps, 2, self.n)[:, 0] / self.effort           # dynamics rows
        base = self._step_jacobians(states)
        blocks = np.empty((self.steps, 4 * self.n, 4 * self.n))
        for j in range(4 * self.n):
            shifted = states.copy()
            delta = HESSIAN_STEP * np.maximum(1.0, np.abs(states[:, j]))
            shifted[:, j] += delta
            change = (self._step_jacobians(shifted) - base) / delta[:, None, None]
            blocks[:, :, j] = np.einsum("kr,krc->kc", weights, change)
        upper = np.triu_indices(4 * self.n)
        blocks = 0.5 * (blocks + blocks.transpose(0, 2, 1))[:, upper[0], upper[1]]
        forces = np.full(self.steps * self.n, objective_weight * self.h) * np.tile(self.effort ** 2, self.steps)
        return np.concatenate([blocks.ravel(), forces])

    def _step_jacobians(self, states: np.ndarray) -> np.ndarray:
        n = self.n
        columns = [np.ascontiguousarray(states[:, i * n:(i + 1) * n]) for i in range(4)]
        _bound_step_jacobians(self._jacobians, *columns, self._dt, LONG_EDGE, self._lhs, self._jacobian)
        return self._jacobian.copy()

    def guess(self, kind: str, limits=None) -> np.ndarray:
        """A start point: ``line`` or ``min_time`` (module docstring; ``limits``: JointLimits for the latter)."""
        N, n, h = self.steps, self.n, self.h
        if kind == "line":
            q, qd = np.empty((N + 1, n)), np.empty((N + 1, n))
            nodes = self.waypoint_nodes
            for i, (first, last) in enumerate(zip(nodes[:-1], nodes[1:], strict=True)):
                steps = last - first
                q[first:last + 1] = smooth_positions(self.waypoints[i], self.waypoints[i + 1], steps)
                tau = np.arange(steps + 1)[:, None] / steps
                qd[first:last + 1] = (self.waypoints[i + 1] - self.waypoints[i]) * 6.0 * tau * (1.0 - tau) / (steps * h)
            F = self.system.potential_gradient(0.5 * (q[:-1] + q[1:]))
        elif kind == "min_time":
            q, qd = self._min_time_states(limits)
            self._evaluate(self.layout.join(q, qd, np.zeros((N, n))), jacobian=False)
            F = self._lhs.copy()
        else:
            raise InputError(f"DMOC start guess: use one of {', '.join(GUESSES)}, got {kind!r}")
        return self.layout.join(q, qd, np.clip(F / self.effort, -1.0, 1.0))

    def _min_time_states(self, limits) -> tuple[np.ndarray, np.ndarray]:
        """The minimum-time plan along the straight segments, slowed to the duration: states at the DMOC times."""
        from scipy.interpolate import CubicHermiteSpline

        from discrete_robot.planning.min_time import plan_min_time
        from discrete_robot.planning.path import WaypointPath

        plan = plan_min_time(self.discrete, WaypointPath(self.waypoints), limits)
        duration = self.steps * self.h
        if plan.duration > duration:
            raise InputError(f"min_time guess: the fastest motion along the line takes {plan.duration:.4g} s, "
                             f"more than the {duration:.4g} s asked for")
        slow = plan.duration / duration
        spline = CubicHermiteSpline(plan.t, plan.q, plan.qd)
        times = np.clip(self.t * slow, 0.0, plan.duration)
        return spline(times), spline(times, 1) * slow


def solve(problem: DmocProblem, x0: np.ndarray, tol: float = 1e-8, max_iter: int = 500,
          print_level: int = 0) -> tuple[np.ndarray, SqpOutcome]:
    """IPOPT on the problem from x0 (module docstring): (x, outcome). Polls :func:`budget.check` at each
    evaluation; a spent budget ends the solve (at the end of that iteration) with BudgetExceededError."""
    import casadi

    layout = problem.layout
    rows, columns = layout.pattern()
    order = np.lexsort((rows, columns))          # casadi stores column by column
    sparsity = casadi.Sparsity.triplet(layout.rows, layout.size, rows[order].tolist(), columns[order].tolist())
    failure: list[BaseException] = []

    def guarded(function, size: int):
        """``function`` for a casadi Callback: budget checked first; an error is kept (raised after the solve) and
        answered with NaN, which ends IPOPT's iteration (through ``Stop``) without a traceback in the log."""
        def call(x):
            try:
                budget.check()
                return function(x)
            except Exception as error:  # noqa: BLE001 - kept and raised after the solve
                failure.append(error)
                return np.full(size, np.nan)
        return call

    constraint_values = guarded(problem.constraints, layout.rows)
    jacobian_values = guarded(lambda x: problem.jacobian_values(x)[order], rows.size)

    class NumpyFunction(casadi.Callback):
        """A casadi function evaluated by numpy: inputs of the sparsities ``inputs``, one output of sparsity
        ``output`` whose nonzeros ``values(arg)`` computes from casadi's arguments."""

        def __init__(self, name, inputs, output, values, options=None):
            casadi.Callback.__init__(self)
            self.inputs, self.output, self.values = inputs, output, values
            self.construct(name, {} if options is None else options)

        def get_n_in(self):
            return len(self.inputs)

        def get_n_out(self):
            return 1

        def get_sparsity_in(self, i):
            return self.inputs[i]

        def get_sparsity_out(self, i):
            return self.output

        def eval(self, arg):
            return [casadi.DM(self.output, self.values(arg))]

    class Constraints(NumpyFunction):
        """The constraints x -> g(x), with their exact Jacobian."""

        def __init__(self):
            super().__init__("dmoc_constraints", [casadi.Sparsity.dense(layout.size, 1)],
                             casadi.Sparsity.dense(layout.rows, 1),
                             lambda arg: constraint_values(np.asarray(arg[0]).ravel()))

        def has_jac_sparsity(self, output, input):
            return True

        def get_jac_sparsity(self, output, input, symmetric):
            return sparsity

        def has_jacobian(self):
            return True

        def get_jacobian(self, name, inames, onames, options):
            # (x, g) -> ∂g/∂x; casadi keeps no reference of its own
            inputs = [casadi.Sparsity.dense(layout.size, 1), casadi.Sparsity(layout.rows, 1)]
            self.jacobian = NumpyFunction(name, inputs, sparsity,
                                          lambda arg: jacobian_values(np.asarray(arg[0]).ravel()), options)
            return self.jacobian

    hessian_rows, hessian_columns = problem.hessian_pattern()
    linear = hessian_columns * layout.size + hessian_rows              # column by column, as casadi stores
    unique, gather = np.unique(linear, return_inverse=True)
    hessian_sparsity = casadi.Sparsity.triplet(layout.size, layout.size, (unique % layout.size).tolist(),
                                               (unique // layout.size).tolist())
    hessian_values = guarded(lambda arguments: np.bincount(
        gather, weights=problem.hessian_values(*arguments), minlength=unique.size), unique.size)

    def lagrangian_hessian(arg):
        x_value, sigma, lam = (np.asarray(arg[i]).ravel() for i in (0, 2, 3))
        return hessian_values((x_value, float(sigma[0]) * scale, lam))

    class Stop(casadi.Callback):
        """IPOPT's iteration callback: ends the solve once an evaluation has failed (the budget ran out)."""

        def __init__(self):
            casadi.Callback.__init__(self)
            self.construct("dmoc_stop", {})

        def get_n_in(self):
            return casadi.nlpsol_n_out()

        def get_n_out(self):
            return 1

        def get_sparsity_in(self, i):
            size = {"f": 1, "x": layout.size, "lam_x": layout.size, "g": layout.rows, "lam_g": layout.rows}
            return casadi.Sparsity.dense(size.get(casadi.nlpsol_out(i), 0), 1)

        def eval(self, arg):
            return [1 if failure else 0]

    constraints = Constraints()
    # (x, p, σ, λ) -> the Lagrangian's Hessian, upper triangle (casadi's ``hess_lag``)
    hessian = NumpyFunction("dmoc_hessian", [casadi.Sparsity.dense(layout.size, 1), casadi.Sparsity(0, 1),
                                             casadi.Sparsity.dense(1, 1), casadi.Sparsity.dense(layout.rows, 1)],
                            hessian_sparsity, lagrangian_hessian)
    stop = Stop()
    x = casadi.MX.sym("x", layout.size)
    force_columns = np.concatenate([layout.stride * k + 2 * problem.n + np.arange(problem.n)
                                    for k in range(problem.steps)])
    weights = np.tile(problem.effort, problem.steps)
    scale = 1.0 / max(problem.effort_cost(x0), 1e-12)        # IPOPT's tolerances act on an objective of order 1
    forces = x[force_columns.tolist()] * casadi.DM(weights)
    objective = scale * 0.5 * problem.h * casadi.sumsqr(forces)
    options = {"ipopt.tol": tol, "ipopt.constr_viol_tol": CONSTRAINT_TOL, "ipopt.max_iter": max_iter,
               "hess_lag": hessian, "iteration_callback": stop, "ipopt.print_level": print_level, "ipopt.sb": "yes",
               "print_time": False, "error_on_fail": False}
    solver = casadi.nlpsol("dmoc", "ipopt", {"x": x, "f": objective, "g": constraints(x)}, options)
    low, high = problem.bounds()
    started = time.perf_counter()
    result = solver(x0=np.clip(x0, low, high), lbx=low, ubx=high, lbg=0.0, ubg=0.0)
    elapsed = time.perf_counter() - started
    if failure:
        raise failure[0]
    stats = solver.stats()
    x_opt = np.asarray(result["x"]).ravel()
    violation = float(np.max(np.abs(problem.constraints(x_opt))))
    outcome = SqpOutcome(x_opt, bool(stats["success"]), str(stats["return_status"]), int(stats["iter_count"]),
                         elapsed, violation)
    LOGGER.info("IPOPT: %s (%d iterations, %.2f s, equality residual %.2e)", outcome.message, outcome.iterations,
                elapsed, violation)
    return x_opt, outcome


def min_effort(discrete: DiscreteDynamicModel, q_start, q_goal, duration: float, h: float, limits,
               guess: str = "line", continuous: bool = True, tol: float = 1e-8, print_level: int = 0,
               via=()) -> OptimalControlSolution:
    """The minimum-effort rest-to-rest motion in ``duration`` s at step ``h`` within ``limits`` (JointLimits),
    through the interior waypoints ``via`` (k, n) without stopping (each at the node :func:`waypoint_nodes`
    allots it), from the start guess ``guess`` (module docstring). The returned motion is the simulator's: the
    discrete model (:func:`accurate_model` of ``discrete``) stepped forward from rest under the optimal forces;
    ``terminal_error`` is its distance from the goal at rest and, with ``continuous``, ``continuous_terminal_error``
    the same for the continuous equations (DOP853 at 1e-12; NaN without)."""
    problem = DmocProblem(discrete, q_start, q_goal, duration, h, limits.effort, limits.velocity, limits.lower,
                          limits.upper, via)
    x, outcome = solve(problem, problem.guess(guess, limits), tol=tol, print_level=print_level)
    forces = problem.exact_forces(x)
    simulated = problem.discrete.simulate(problem.q_start, np.zeros(problem.n), problem.h, problem.steps, forces=forces)
    continuous_error = float("nan")
    if continuous:
        q_end, qd_end = replay_arm(problem.system, problem.q_start, np.zeros(problem.n), problem.h, forces)
        continuous_error = float(max(np.max(np.abs(q_end - problem.q_goal)), np.max(np.abs(qd_end))))
    return OptimalControlSolution(
        "dmoc-discrete", simulated.t, simulated.q, simulated.qd, forces, 0.5 * problem.h * float(np.sum(forces ** 2)),
        float(max(np.max(np.abs(simulated.q[-1] - problem.q_goal)), np.max(np.abs(simulated.qd[-1])))),
        continuous_error, None, outcome)
