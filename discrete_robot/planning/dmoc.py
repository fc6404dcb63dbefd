r"""Discrete mechanics and optimal control (DMOC): fixed-time minimum-effort motions with a variational
integrator as the equations of motion, solved by SQP (Lee, Leok & McClamroch, seed 004, example 5).

Spherical pendulum (the article's example). Controls are the moments u_k at the N+1 time nodes; the state
follows the Lie-group variational integrator on S² with the control by the discrete Lagrange–d'Alembert
principle (:func:`~discrete_robot.variational.spherical_pendulum.lgvi_step`, eqs. (35)–(36)). Minimise
J = Σ_{k=0}^{N} h/2 |u_k|² subject to the terminal state. The transcription is the article's: single
shooting over the 3(N+1) control values, terminal conditions as equality constraints, SLSQP with
finite-difference gradients. Two choices differ from the article's text, both because a rank-deficient
constraint Jacobian breaks SQP: (i) u_k ∈ R³ itself rather than u_k = q_k × w_k — the part of u along q
does nothing and costs effort, so the optimum has none, and the objective stays strictly convex (with w
it has flat directions); (ii) the target q_N = −e3, ω_N = 0 is imposed as q_N,x = q_N,y = 0,
ω_N,x = ω_N,y = 0 and q_N,z ≤ 0: the integrator keeps |q| = 1 and q·ω = 0, so these imply the target,
while the full six equations are dependent (rank 4) at the solution. The start guess is a planar swing
with θ(t) = π(1 − cos πt/T)/2 and the moment that would produce it in continuous time.

Arms (any :class:`LagrangianSystem`). DMOC proper (Junge, Marsden & Ober-Blöbaum): the constraints are
the forced discrete Euler–Lagrange equations of the midpoint rule
(:class:`~discrete_robot.variational.midpoint.MidpointVariationalIntegrator`, forces f± = h/2 u_k held over
each step), with rest at both ends (p_0 = p_N = 0)::

    E_0 + h/2 u_0 = 0,   E_m + h/2 (u_{m−1} + u_m) = 0 (m = 1 … N−1),   E_N + h/2 u_{N−1} = 0,
    E_0 = D1 L_d(q_0, q_1),  E_m = D2 L_d(q_{m−1}, q_m) + D1 L_d(q_m, q_{m+1}),  E_N = D2 L_d(q_{N−1}, q_N),

objective J = Σ h/2 |u_k|², |u_k,r| ≤ effort_r. The equations are linear in the forces, so the first N of
them give the forces of given positions exactly, u_m = −(2/h) Σ_{j≤m} (−1)^{m−j} E_j, and the last one
becomes n constraints Σ_j (−1)^{N−j} E_j = 0. The SQP variables are then the inner positions q_1 … q_{N−1}
only. Why not the textbook form with positions and forces as variables: there the objective has no
curvature in the positions, and SLSQP's quasi-Newton Hessian did not converge in 300 iterations for the
6-joint arm, whose joint inertias span three orders of magnitude; with the forces eliminated J has its
true curvature in q and it converges in tens of iterations. The Jacobian ∂E/∂q is banded (E_m involves
three neighbouring positions) and is built by coloured finite differences: 2n batched evaluations of
D1 L_d and D2 L_d over all steps.
"""

import logging
import math

import numpy as np

from discrete_robot import budget
from discrete_robot.errors import InputError
from discrete_robot.model.lagrangian import LagrangianSystem
from discrete_robot.planning.continuous_replay import batch, replay_arm, replay_pendulum
from discrete_robot.planning.sqp import OptimalControlSolution, coloured_jacobian, solve_sqp
from discrete_robot.variational.midpoint import MidpointVariationalIntegrator
from discrete_robot.variational.spherical_pendulum import E3, SphericalPendulumParams, lgvi_step

LOGGER = logging.getLogger(__name__)

HANGING = E3.copy()
INVERTED = -E3


def time_grid(duration: float, h: float) -> tuple[int, float]:
    """(N, h'): N = round(duration/h) steps of h' = duration/N, so the motion lasts exactly ``duration``.

    The article's 1 s at h = 0.033 s gives N = 30 steps of 1/30 s.
    """
    if not (math.isfinite(duration) and duration > 0.0 and math.isfinite(h) and h > 0.0):
        raise InputError(f"optimal control: need duration > 0 and h > 0 (s), got {duration}, {h}")
    steps = max(2, int(round(duration / h)))
    return steps, duration / steps


def swing_up_guess(params: SphericalPendulumParams, t: np.ndarray) -> np.ndarray:
    """Node moments (N+1, 3) of the planar swing θ(t) = π(1 − cos πt/T)/2 about e1: u = m l²(θ̈ + g/l sin θ) e1."""
    T = t[-1]
    theta = 0.5 * np.pi * (1.0 - np.cos(np.pi * t / T))
    theta_dd = 0.5 * np.pi ** 3 / T ** 2 * np.cos(np.pi * t / T)
    u = np.zeros((t.size, 3))
    u[:, 0] = params.inertia * (theta_dd + params.gravity / params.length * np.sin(theta))
    return u


def pendulum_rollout(step, params: SphericalPendulumParams, h: float, controls: np.ndarray):
    """States (q, ω) at the nodes from hanging at rest under node moments ``controls`` (N+1, 3)."""
    n_steps = controls.shape[0] - 1
    q = np.empty((n_steps + 1, 3))
    omega = np.empty((n_steps + 1, 3))
    q[0], omega[0] = HANGING, np.zeros(3)
    for k in range(n_steps):
        q[k + 1], omega[k + 1] = step(q[k], omega[k], h, params, controls[k:k + 2])
    return q, omega


def pendulum_swing_up(step, method: str, duration: float = 1.0, h: float = 0.033,
                      params: SphericalPendulumParams | None = None, maxiter: int = 300) -> OptimalControlSolution:
    """Minimum-effort swing-up from hanging to inverted in ``duration`` with the discrete map ``step``.

    ``step(q, ω, h, params, (u_k, u_{k+1})) -> (q_{k+1}, ω_{k+1})`` is the discretisation under test: the
    variational integrator here, a Runge–Kutta step in :mod:`.collocation`; everything else is shared.
    """
    params = SphericalPendulumParams() if params is None else params
    n_steps, h = time_grid(duration, h)
    t = np.arange(n_steps + 1) * h
    # Variables are ū = u/(m l²) (rad/s², order 10) so that SLSQP's finite-difference steps are well scaled.
    scale = params.inertia
    cache: dict[bytes, tuple[np.ndarray, np.ndarray]] = {}

    def final_state(x: np.ndarray) -> np.ndarray:
        key = x.tobytes()
        if key not in cache:
            try:
                q, omega = pendulum_rollout(step, params, h, scale * x.reshape(-1, 3))
                cache[key] = np.concatenate([q[-1], omega[-1]])
            except InputError:  # the step has no solution for these controls: report it as far off
                cache[key] = np.full(6, 1e3)
        return cache[key]

    def final_state_jacobian(x: np.ndarray) -> np.ndarray:
        """Forward differences of the final state, shared by the equality and inequality Jacobians."""
        key = b"jacobian" + x.tobytes()
        if key not in cache:
            cache.clear()
            base = final_state(x)
            columns = []
            for i in range(x.size):
                shifted = x.copy()
                shifted[i] += 1e-7 * max(1.0, abs(x[i]))
                columns.append((final_state(shifted) - base) / (shifted[i] - x[i]))
            cache[key] = np.array(columns).T
            cache[x.tobytes()] = base
        return cache[key]

    terminal_rows = [0, 1, 3, 4]  # q_x, q_y, ω_x, ω_y
    outcome = solve_sqp(lambda x: 0.5 * h * scale ** 2 * float(x @ x), lambda x: h * scale ** 2 * x,
                        lambda x: final_state(x)[terminal_rows], swing_up_guess(params, t).ravel() / scale,
                        equality_jacobian=lambda x: final_state_jacobian(x)[terminal_rows],
                        inequalities=lambda x: -final_state(x)[2:3],
                        inequality_jacobian=lambda x: -final_state_jacobian(x)[2:3], maxiter=maxiter,
                        objective_scale=1.0 / (h * scale ** 2))
    controls = scale * outcome.x.reshape(-1, 3)
    q, omega = pendulum_rollout(step, params, h, controls)
    q_end, omega_end = replay_pendulum(params, HANGING, np.zeros(3), h, controls)
    return OptimalControlSolution(
        method, t, q, omega, controls, 0.5 * h * float(np.sum(controls * controls)),
        float(max(np.max(np.abs(q[-1] - INVERTED)), np.max(np.abs(omega[-1])))),
        float(max(np.max(np.abs(q_end - INVERTED)), np.max(np.abs(omega_end)))),
        float(np.max(np.abs(np.linalg.norm(q, axis=1) - 1.0))), outcome)


def pendulum_swing_up_dmoc(duration: float = 1.0, h: float = 0.033,
                           params: SphericalPendulumParams | None = None) -> OptimalControlSolution:
    """The article's example 5: the spherical pendulum swung up by DMOC on the Lie-group variational integrator."""
    return pendulum_swing_up(lgvi_step, "dmoc-lgvi", duration, h, params)


def validated_endpoints(system: LagrangianSystem, q_start, q_goal, effort):
    n = system.dof
    q_start, q_goal = np.asarray(q_start, dtype=float), np.asarray(q_goal, dtype=float)
    if q_start.shape != (n,) or q_goal.shape != (n,) or not (np.all(np.isfinite(q_start)) and
                                                               np.all(np.isfinite(q_goal))):
        raise InputError(f"point-to-point: need finite start and goal of {n} values, got {q_start}, {q_goal}")
    if effort is None:
        bounds = None
    else:
        effort = np.asarray(effort, dtype=float)
        if effort.shape != (n,) or np.any(effort <= 0.0):
            raise InputError(f"point-to-point: need {n} positive torque limits, got {effort}")
        bounds = effort
    return q_start, q_goal, bounds


def smooth_positions(q_start: np.ndarray, q_goal: np.ndarray, n_steps: int) -> np.ndarray:
    """A start guess: q(τ) = q_start + (q_goal − q_start)(3τ² − 2τ³), τ = k/N (at rest at both ends)."""
    tau = np.arange(n_steps + 1)[:, None] / n_steps
    return q_start + (q_goal - q_start) * (3.0 * tau ** 2 - 2.0 * tau ** 3)


def discrete_lagrangian_derivatives(system: LagrangianSystem, q: np.ndarray, h: float):
    """(D1 L_d, D2 L_d) of the midpoint rule for every step of the node sequence q (N+1, n), each (N, n).

    The formulas of :class:`MidpointVariationalIntegrator` (D1 = h/2 a − M(q̄)v, D2 = h/2 a + M(q̄)v,
    a_k = ½ vᵀ ∂M/∂q_k v − ∂V/∂q_k), evaluated for all steps in one batched call of the system: the SQP
    needs them for every step at every iterate, where the integrator works one step at a time.
    """
    midpoints = 0.5 * (q[:-1] + q[1:])
    v = np.diff(q, axis=0) / h
    D = batch(system, "mass_matrix_derivatives", midpoints)
    a = 0.5 * np.einsum("nkij,ni,nj->nk", D, v, v) - batch(system, "potential_gradient", midpoints)
    momentum = np.einsum("nij,nj->ni", batch(system, "mass_matrix", midpoints), v)
    return 0.5 * h * a - momentum, 0.5 * h * a + momentum


def step_pattern(n_steps: int, node_width: int, n_controls: int, rows_per_step: int, row_stride: int):
    """Variable columns and constraint rows of each step's block for variables [inner nodes 1…N−1, controls].

    Step k involves nodes k and k+1 (only the inner ones are variables, ``node_width`` values each) and its
    control u_k (``n_controls`` values, none for 0); its block fills rows k·row_stride … + rows_per_step.
    """
    n_inner = (n_steps - 1) * node_width

    def node_columns(k: int) -> list[int]:
        return list(range((k - 1) * node_width, k * node_width)) if 1 <= k <= n_steps - 1 else []

    columns = [np.array(node_columns(k) + node_columns(k + 1)
                        + list(range(n_inner + k * n_controls, n_inner + (k + 1) * n_controls)), dtype=int)
               for k in range(n_steps)]
    rows = [np.arange(k * row_stride, k * row_stride + rows_per_step) for k in range(n_steps)]
    return columns, rows


class _EliminatedForces:
    """E(q) and ∂E/∂x of the forced DEL equations, and the forces they determine (see the module docstring)."""

    def __init__(self, system: LagrangianSystem, q_start: np.ndarray, q_goal: np.ndarray, n_steps: int, h: float):
        self.system, self.q_start, self.q_goal, self.n_steps, self.h = system, q_start, q_goal, n_steps, h
        self.n = system.dof
        self.columns, self.rows = step_pattern(n_steps, self.n, 0, 2 * self.n, self.n)
        # u_m = −(2/h) Σ_{j≤m} (−1)^{m−j} E_j, and the rest condition Σ_j (−1)^{N−j} E_j = 0
        index = np.arange(n_steps)
        signs = np.where((index[:, None] - index[None, :]) % 2 == 0, 1.0, -1.0)
        self.to_forces = -(2.0 / h) * np.tril(signs)
        self.rest = np.where((n_steps - np.arange(n_steps + 1)) % 2 == 0, 1.0, -1.0)
        self._cache: dict[bytes, tuple[np.ndarray, np.ndarray | None]] = {}

    def positions(self, x: np.ndarray) -> np.ndarray:
        return np.vstack([self.q_start, x.reshape(-1, self.n), self.q_goal])

    def _blocks(self, x: np.ndarray) -> np.ndarray:
        d1, d2 = discrete_lagrangian_derivatives(self.system, self.positions(x), self.h)
        return np.hstack([d1, d2])

    def _assemble(self, blocks: np.ndarray) -> np.ndarray:
        equations = np.zeros((self.n_steps + 1,) + blocks.shape[1:-1] + (self.n,))
        equations[:-1] += blocks[..., :self.n]
        equations[1:] += blocks[..., self.n:]
        return equations

    def evaluate(self, x: np.ndarray, jacobian: bool = False):
        """(E (N+1, n), ∂E/∂x ((N+1)n, len x) or None); x are the inner positions q_1 … q_{N−1}."""
        key = x.tobytes()
        cached = self._cache.get(key)
        if cached is None or (jacobian and cached[1] is None):
            equations = self._assemble(self._blocks(x))
            derivative = None
            if jacobian:
                derivative = coloured_jacobian(self._blocks, x, self.columns, self.rows,
                                               (self.n_steps + 1) * self.n)
            self._cache = {key: (equations, derivative)}
            cached = self._cache[key]
        return cached

    def forces(self, x: np.ndarray) -> np.ndarray:
        """u (N, n) from the first N equations."""
        equations, _ = self.evaluate(x)
        return self.to_forces @ equations[:-1]

    def force_jacobian(self, x: np.ndarray) -> np.ndarray:
        """∂u/∂x, shape (N n, len x)."""
        _, derivative = self.evaluate(x, jacobian=True)
        n = self.n
        per_equation = derivative[:-n].reshape(self.n_steps, n, -1)
        return np.einsum("mj,jrc->mrc", self.to_forces, per_equation).reshape(self.n_steps * n, -1)

    def rest_residual(self, x: np.ndarray) -> np.ndarray:
        equations, _ = self.evaluate(x)
        return self.rest @ equations

    def rest_jacobian(self, x: np.ndarray) -> np.ndarray:
        _, derivative = self.evaluate(x, jacobian=True)
        return np.einsum("m,mrc->rc", self.rest, derivative.reshape(self.n_steps + 1, self.n, -1))


def step_differences(n_steps: int, n: int, q_start: np.ndarray, q_goal: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(D, c) with q_{k+1} − q_k = (D x + c)_k for the inner positions x = q_1 … q_{N−1}: D (N n, (N−1) n)."""
    D = np.zeros((n_steps * n, (n_steps - 1) * n))
    eye = np.eye(n)
    for k in range(n_steps):
        if k < n_steps - 1:
            D[k * n:(k + 1) * n, k * n:(k + 1) * n] = eye
        if k > 0:
            D[k * n:(k + 1) * n, (k - 1) * n:k * n] = -eye
    c = np.zeros(n_steps * n)
    c[:n] -= q_start
    c[-n:] += q_goal
    return D, c


def arm_point_to_point_dmoc(system: LagrangianSystem, q_start, q_goal, duration: float, h: float,
                            effort=None, weights=None, maxiter: int = 300, lower=None, upper=None,
                            velocity=None) -> OptimalControlSolution:
    """Minimum-effort rest-to-rest motion q_start → q_goal in ``duration`` by DMOC on the midpoint VI.

    ``weights`` (n,) make the objective the weighted effort Σ h/2 Σ_r w_r u_r² (the article's weighted l2
    norm; default all 1); ``effort`` bounds |u_r|; ``lower``/``upper`` bound the positions (bounds on the
    SQP variables) and ``velocity`` the mean speed of each step, |q_{k+1,r} − q_{k,r}| ≤ h velocity_r (linear
    constraints; the node velocities of the midpoint rule can differ from the step means by O(h)).
    """
    n = system.dof
    q_start, q_goal, effort = validated_endpoints(system, q_start, q_goal, effort)
    n_steps, h = time_grid(duration, h)
    weights = np.ones(n) if weights is None else np.asarray(weights, dtype=float)
    if weights.shape != (n,) or not np.all(np.isfinite(weights)) or np.any(weights <= 0.0):
        raise InputError(f"point-to-point: need {n} positive finite weights, got {weights}")
    problem = _EliminatedForces(system, q_start, q_goal, n_steps, h)
    x0 = smooth_positions(q_start, q_goal, n_steps)[1:-1].ravel()
    rms = np.sqrt(np.mean(problem.forces(x0) ** 2, axis=0))
    scale = np.maximum(rms, 1e-3 * max(float(np.max(rms)), 1e-9))  # typical force per joint, N m
    weight_rows = np.tile(weights, n_steps)

    def objective(x: np.ndarray) -> float:
        budget.check()
        u = problem.forces(x).ravel()
        return 0.5 * h * float(np.sum(weight_rows * u * u))

    def gradient(x: np.ndarray) -> np.ndarray:
        return h * problem.force_jacobian(x).T @ (weight_rows * problem.forces(x).ravel())

    rows, row_jacobians = [], []
    if effort is not None:
        limit = np.tile(effort, n_steps)
        force_scale = np.tile(scale, n_steps)
        rows.append(lambda x: np.concatenate([limit - problem.forces(x).ravel(),
                                              limit + problem.forces(x).ravel()]) / np.tile(force_scale, 2))
        row_jacobians.append(lambda x: np.vstack([-problem.force_jacobian(x) / force_scale[:, None],
                                                  problem.force_jacobian(x) / force_scale[:, None]]))
    if velocity is not None and np.any(np.isfinite(velocity)):
        D, c = step_differences(n_steps, n, q_start, q_goal)
        capped = np.tile(np.isfinite(velocity), n_steps)
        travel = h * np.tile(velocity, n_steps)[capped]   # largest step travel, rad or m
        D, c = D[capped] / travel[:, None], c[capped] / travel
        rows.append(lambda x: np.concatenate([1.0 - (D @ x + c), 1.0 + (D @ x + c)]))
        row_jacobians.append(lambda x: np.vstack([-D, D]))
    inequalities = inequality_jacobian = None
    if rows:
        def inequalities(x: np.ndarray) -> np.ndarray:
            return np.concatenate([row(x) for row in rows])

        def inequality_jacobian(x: np.ndarray) -> np.ndarray:
            return np.vstack([jacobian(x) for jacobian in row_jacobians])

    bounds = None
    if lower is not None or upper is not None:
        low = np.full(n, -np.inf) if lower is None else np.asarray(lower, dtype=float)
        high = np.full(n, np.inf) if upper is None else np.asarray(upper, dtype=float)
        bounds = list(zip(np.tile(low, n_steps - 1), np.tile(high, n_steps - 1), strict=True))
        x0 = np.clip(x0, np.tile(low, n_steps - 1), np.tile(high, n_steps - 1))

    # Rest condition divided by h·scale (a force fraction) so that joints needing very different forces weigh
    # alike; objective divided by its size at the start guess.
    outcome = solve_sqp(objective, gradient, lambda x: problem.rest_residual(x) / (h * scale), x0,
                        equality_jacobian=lambda x: problem.rest_jacobian(x) / (h * scale)[:, None],
                        inequalities=inequalities, inequality_jacobian=inequality_jacobian, bounds=bounds,
                        maxiter=maxiter,
                        objective_scale=1.0 / max(objective(x0), 1e-12))
    u = problem.forces(outcome.x)
    simulated = MidpointVariationalIntegrator(system).simulate(q_start, np.zeros(n), h, n_steps, forces=u)
    q_end, qd_end = replay_arm(system, q_start, np.zeros(n), h, u)
    return OptimalControlSolution(
        "dmoc-midpoint", simulated.t, simulated.q, simulated.qd, u, 0.5 * h * float(np.sum(u * u)),
        float(max(np.max(np.abs(simulated.q[-1] - q_goal)), np.max(np.abs(simulated.qd[-1])))),
        float(max(np.max(np.abs(q_end - q_goal)), np.max(np.abs(qd_end)))), None, outcome)
