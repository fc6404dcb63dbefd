r"""The same optimal-control problems on a Runge–Kutta discretisation, to compare with DMOC at the same step.

The discretisation is Heun's method (explicit trapezoidal rule, second order like the variational
integrators) applied to the continuous equations of motion:

    k1 = f(x_k, u_k),   k2 = f(x_k + h k1, u_{k+1}),   x_{k+1} = x_k + h/2 (k1 + k2).

* Spherical pendulum: x = (q, ω) ∈ R⁶ with q̇ = ω × q, ω̇ = g/l q × e3 + u⊥/(m l²) (eqs. (31)–(32)), node
  moments u_k as in DMOC, and exactly DMOC's single-shooting transcription and SQP
  (:func:`~discrete_robot.planning.dmoc.pendulum_swing_up`): only the step differs. This is the
  experiment of the article ("using a second-order accurate Runge–Kutta method, the same optimization
  code fails"). Heun's step does not keep |q| = 1, so the terminal conditions q_x = q_y = 0, ω_x = ω_y = 0
  no longer imply q = −e3 exactly.
* Arms: direct collocation with x = (q, q̇) at every inner node and the forces u_k (held over each step,
  Heun with u_k at both stages) as variables, the Heun step as equality constraints, rest at both ends;
  the same objective, torque bounds and SLSQP call as DMOC. (DMOC eliminates its forces, which enter its
  equations linearly; here they enter through Heun's predictor, so they stay variables.)
"""

import numpy as np

from discrete_robot.model.lagrangian import LagrangianSystem
from discrete_robot.planning.continuous_replay import arm_acceleration, batch, pendulum_rates, replay_arm
from discrete_robot.planning.dmoc import (
    pendulum_swing_up,
    smooth_positions,
    step_pattern,
    time_grid,
    validated_endpoints,
)
from discrete_robot.planning.sqp import OptimalControlSolution, coloured_jacobian, solve_sqp
from discrete_robot.variational.spherical_pendulum import SphericalPendulumParams


def heun_pendulum_step(q: np.ndarray, omega: np.ndarray, h: float, params: SphericalPendulumParams, control):
    """One Heun step of eqs. (31)–(32) under node moments (u_k, u_{k+1})."""
    u0, u1 = np.asarray(control, dtype=float)
    dq1, dw1 = pendulum_rates(params, q, omega, u0)
    dq2, dw2 = pendulum_rates(params, q + h * dq1, omega + h * dw1, u1)
    return q + 0.5 * h * (dq1 + dq2), omega + 0.5 * h * (dw1 + dw2)


def pendulum_swing_up_rk(duration: float = 1.0, h: float = 0.033,
                         params: SphericalPendulumParams | None = None) -> OptimalControlSolution:
    """The swing-up with DMOC's shooting transcription and SQP, on Heun's method instead of the LGVI."""
    return pendulum_swing_up(heun_pendulum_step, "rk2-shooting", duration, h, params)


def heun_arm_step(system: LagrangianSystem, q: np.ndarray, qd: np.ndarray, force: np.ndarray, h: float):
    """Heun steps of M q̈ + c + ∇V = u with u held over the step; arrays (..., n); returns (q, q̇) at the next node."""
    a1 = arm_acceleration(system, q, qd, force)
    q_pred, qd_pred = q + h * qd, qd + h * a1
    a2 = arm_acceleration(system, q_pred, qd_pred, force)
    return q + 0.5 * h * (qd + qd_pred), qd + 0.5 * h * (a1 + a2)


def arm_point_to_point_rk(system: LagrangianSystem, q_start, q_goal, duration: float, h: float, effort=None,
                          maxiter: int = 300) -> OptimalControlSolution:
    """Minimum-effort rest-to-rest motion by direct collocation on Heun's method (see the module docstring)."""
    n = system.dof
    q_start, q_goal, effort = validated_endpoints(system, q_start, q_goal, effort)
    n_steps, h = time_grid(duration, h)
    n_inner = (n_steps - 1) * 2 * n  # (q, q̇) at nodes 1 … N−1

    def unpack(x: np.ndarray):
        inner = x[:n_inner].reshape(-1, 2 * n)
        q = np.vstack([q_start, inner[:, :n], q_goal])
        qd = np.vstack([np.zeros(n), inner[:, n:], np.zeros(n)])
        return q, qd, x[n_inner:].reshape(n_steps, n)

    def step_blocks(x: np.ndarray) -> np.ndarray:
        """x_{k+1} − Heun(x_k, u_k) for every step, (N, 2n)."""
        q, qd, u = unpack(x)
        q_next, qd_next = heun_arm_step(system, q[:-1], qd[:-1], u, h)
        return np.hstack([q[1:] - q_next, qd[1:] - qd_next])

    columns, rows = step_pattern(n_steps, 2 * n, n, 2 * n, 2 * n)
    q_guess = smooth_positions(q_start, q_goal, n_steps)
    qd_guess = np.gradient(q_guess, h, axis=0)
    qdd_guess = np.gradient(qd_guess, h, axis=0)
    u_guess = (np.einsum("nij,nj->ni", batch(system, "mass_matrix", q_guess[:-1]), qdd_guess[:-1])
               + batch(system, "potential_gradient", q_guess[:-1]))
    x0 = np.concatenate([np.hstack([q_guess, qd_guess])[1:-1].ravel(), u_guess.ravel()])
    bounds = None if effort is None else [(None, None)] * n_inner + [(-e, e) for e in np.tile(effort, n_steps)]
    def objective(x: np.ndarray) -> float:
        return 0.5 * h * float(x[n_inner:] @ x[n_inner:])

    def gradient(x: np.ndarray) -> np.ndarray:
        return np.concatenate([np.zeros(n_inner), h * x[n_inner:]])

    outcome = solve_sqp(objective, gradient, lambda x: step_blocks(x).ravel(), x0,
                        equality_jacobian=lambda x: coloured_jacobian(step_blocks, x, columns, rows, n_steps * 2 * n),
                        bounds=bounds, maxiter=maxiter, objective_scale=1.0 / max(objective(x0), 1e-12))
    _, _, u = unpack(outcome.x)
    q = np.empty((n_steps + 1, n))
    qd = np.zeros((n_steps + 1, n))
    q[0] = q_start
    for k in range(n_steps):
        q[k + 1], qd[k + 1] = heun_arm_step(system, q[k], qd[k], u[k], h)
    q_end, qd_end = replay_arm(system, q_start, np.zeros(n), h, u)
    return OptimalControlSolution(
        "rk2-collocation", np.arange(n_steps + 1) * h, q, qd, u, 0.5 * h * float(np.sum(u * u)),
        float(max(np.max(np.abs(q[-1] - q_goal)), np.max(np.abs(qd[-1])))),
        float(max(np.max(np.abs(q_end - q_goal)), np.max(np.abs(qd_end)))), None, outcome)
