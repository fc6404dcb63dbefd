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

Arms: :mod:`.dmoc_sparse` (IPOPT on the discrete dynamic model). This module keeps what both arm
transcriptions share: the time grid, the start guess's time law, the endpoint checks and the per-step Jacobian
pattern of :mod:`.collocation`.
"""

import logging
import math

import numpy as np

from discrete_robot.errors import InputError
from discrete_robot.model.lagrangian import LagrangianSystem
from discrete_robot.planning.continuous_replay import replay_pendulum
from discrete_robot.planning.sqp import OptimalControlSolution, solve_sqp
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
