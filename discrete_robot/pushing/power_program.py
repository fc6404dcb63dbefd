"""Minimum of a Coulomb-friction power on an affine set of velocities (a second-order cone program).

    minimise   c . x + s(x) + sum_i w_i |A_i x + b_i|      subject to   C x = d

x are velocities (of particles, or a planar twist); each norm term is the
power of a Coulomb friction force of magnitude w_i acting against the
velocity y_i = A_i x + b_i; c . x is the power of velocity-independent forces
(c = -F); s is an optional smooth convex power (used only to show where the
principle of minimum power fails); C x = d are the constraints as
constrained directions (Peshkin & Sanderson eq. 18: the gradient of the power
may have any component along them).

Why an interior-point method: the objective is convex but not
differentiable where a friction point is at rest (y_i = 0), and the minimum
very often sits there (the tail of a rope that has not started to move, a
pushed object rotating about one of its support points). Gradient methods
(SLSQP, trust-constr on the raw objective) stall at such kinks, and scipy has
no cone solver. The epigraph form |y_i| <= t_i with the barrier
-log(t_i^2 - |y_i|^2) is smooth; minimising it in t_i for fixed y_i gives
t_i = (1 + sqrt(1 + a_i^2 |y_i|^2)) / a_i with a_i = tau w_i, so each centering
step is Newton's method on the smooth function

    c . x + s(x) + sum_i [ w_i t_i - log(t_i^2 - |y_i|^2) / tau ]

over the null space of C, with gradient c + grad s + sum_i A_i^T g_i,
g_i = w_i y_i / t_i (|g_i| < w_i: the friction force, also defined for points
at rest). tau grows geometrically; the duality gap is 2 p / tau for p cones.
The g_i are the dual solution: at the optimum c + grad s + sum A_i^T g_i =
C^T lambda, which is Newton's law with the constraint forces C^T lambda.
"""

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import scipy.linalg

from discrete_robot.errors import ConvergenceError, InfeasibleError

#: barrier parameter growth per centering (fewer centerings vs more Newton steps each)
GROWTH = 20.0

Smooth = Callable[[np.ndarray], tuple[float, np.ndarray, np.ndarray]]


@dataclass(frozen=True)
class PowerProgram:
    """``norm_matrices`` (p, m, n), ``norm_offsets`` (p, m), ``norm_weights`` (p,) >= 0."""

    linear: np.ndarray
    norm_matrices: np.ndarray
    norm_offsets: np.ndarray
    norm_weights: np.ndarray
    equality_matrix: np.ndarray
    equality_values: np.ndarray
    smooth: Smooth | None = None


@dataclass(frozen=True)
class PowerProgramSolution:
    """The minimiser ``x``, its power, the friction forces' duals g_i (the power's subgradient is
    c + sum A_i^T g_i) and the constraint multipliers lambda (C^T lambda = that subgradient)."""

    x: np.ndarray
    power: float
    norm_duals: np.ndarray
    multipliers: np.ndarray
    gap: float
    newton_steps: int


def _smoothed_norms(program: PowerProgram, x: np.ndarray, tau: float, hessian: bool):
    """Value, gradient (and Hessian) in x of sum_i [w_i t_i - log(t_i^2 - |y_i|^2)/tau], and the duals g_i."""
    p, m, n = program.norm_matrices.shape
    stacked = program.norm_matrices.reshape(p * m, n)
    y = (stacked @ x).reshape(p, m) + program.norm_offsets
    w = program.norm_weights
    a = tau * w
    length2 = np.einsum("pm,pm->p", y, y)
    q = np.sqrt(1.0 + a * a * length2)
    t = (1.0 + q) / a
    # t^2 - |y|^2 = 2 t / a at the eliminated t (stable for points at rest)
    value = float(w @ t - np.sum(np.log(2.0 * t / a)) / tau)
    duals = (w / t)[:, None] * y
    gradient = stacked.T @ duals.ravel()
    if not hessian:
        return value, gradient, None, duals
    blocks = (w / t)[:, None, None] * (np.eye(m)[None] - (a / (t * q))[:, None, None] * y[:, :, None] * y[:, None, :])
    hess = stacked.T @ np.einsum("pmk,pkj->pmj", blocks, program.norm_matrices).reshape(p * m, n)
    return value, gradient, hess, duals


def _objective(program: PowerProgram, x: np.ndarray, tau: float, hessian: bool):
    value, gradient, hess, duals = _smoothed_norms(program, x, tau, hessian)
    value += float(program.linear @ x)
    gradient = gradient + program.linear
    if program.smooth is not None:
        s_value, s_gradient, s_hessian = program.smooth(x)
        value += s_value
        gradient = gradient + s_gradient
        if hessian:
            hess = hess + s_hessian
    return value, gradient, hess, duals


def solve_power_program(program: PowerProgram, tolerance: float = 1e-13, max_newton_steps: int = 500,
                        start: np.ndarray | None = None) -> PowerProgramSolution:
    """Minimise the program's power; ``tolerance`` is the final duality gap relative to sum w_i |x|-scale.

    Raises InfeasibleError when the constraints are inconsistent or the power
    is unbounded below (velocity-independent forces stronger than friction
    along a free direction: not a quasistatic motion), ConvergenceError if the
    Newton budget runs out.
    """
    C = np.atleast_2d(program.equality_matrix)
    d = np.asarray(program.equality_values, dtype=float)
    n = len(program.linear)
    if C.size:
        particular, *_ = np.linalg.lstsq(C, d, rcond=None)
        if np.linalg.norm(C @ particular - d) > 1e-9 * (1.0 + np.linalg.norm(d)):
            raise InfeasibleError("the constraints are inconsistent: no velocity satisfies them all")
        basis = scipy.linalg.null_space(C)
    else:
        particular, basis = np.zeros(n), np.eye(n)
    if start is not None:
        particular = particular + basis @ (basis.T @ (start - particular))
    scale = max(float(np.linalg.norm(particular)), float(np.max(np.abs(d), initial=0.0)), 1e-300)
    if scale <= 1e-300:
        scale = 1.0
    weights = program.norm_weights
    count = int(np.count_nonzero(weights))
    power_scale = max(float(weights.sum()), float(np.linalg.norm(program.linear)), 1e-300) * scale
    x = particular
    steps = 0
    if basis.shape[1] == 0:
        tau = np.inf
    else:
        # without friction cones there is no barrier: one Newton solve, to the rounding floor
        tau = count / power_scale if count else np.inf
        final_tau = 2.0 * count / (tolerance * power_scale) if count else tau
        while True:
            x, steps = _center(program, basis, x, tau, steps, max_newton_steps, 1e8 * scale)
            if tau >= final_tau:
                break
            tau = min(GROWTH * tau, final_tau)
    if np.isfinite(tau):
        value, gradient, _, duals = _objective(program, x, tau, hessian=False)
    else:
        duals = _exact_duals(program, x)
        gradient = program.linear + np.einsum("pmn,pm->n", program.norm_matrices, duals)
        if program.smooth is not None:
            gradient = gradient + program.smooth(x)[1]
    y = np.einsum("pmn,n->pm", program.norm_matrices, x) + program.norm_offsets
    power = float(program.linear @ x + weights @ np.linalg.norm(y, axis=1))
    if program.smooth is not None:
        power += program.smooth(x)[0]
    multipliers = np.linalg.lstsq(C.T, gradient, rcond=None)[0] if C.size else np.zeros(0)
    gap = 2.0 * count / tau if np.isfinite(tau) else 0.0
    return PowerProgramSolution(x=x, power=power, norm_duals=duals, multipliers=multipliers, gap=gap,
                                newton_steps=steps)


def _exact_duals(program: PowerProgram, x: np.ndarray) -> np.ndarray:
    y = np.einsum("pmn,n->pm", program.norm_matrices, x) + program.norm_offsets
    length = np.linalg.norm(y, axis=1)
    return np.where(length[:, None] > 0.0, program.norm_weights[:, None] * y / np.where(length > 0, length, 1)[:, None],
                    0.0)


def _center(program, basis, x, tau, steps, max_steps, blow_up):
    """Damped Newton on the smoothed power over x + range(basis) until the Newton decrement is negligible
    (below 1e-10 / tau, or no longer shrinking: the rounding floor of the power's value)."""
    value, gradient, hess, _ = _objective(program, x, tau, hessian=True)
    previous = np.inf
    while True:
        reduced = basis.T @ gradient
        curvature = basis.T @ hess @ basis
        step = -scipy.linalg.lstsq(curvature, reduced, cond=1e-15)[0] if curvature.size else reduced
        decrement = -float(reduced @ step)
        if decrement <= 1e-10 / tau or (decrement > 0.25 * previous and decrement <= 1e-12 * (abs(value) + 1e-300)):
            return x, steps
        previous = decrement
        steps += 1
        if steps > max_steps:
            raise ConvergenceError(f"minimum-power program: no convergence in {max_steps} Newton steps")
        direction = basis @ step
        length = 1.0
        while True:
            trial = x + length * direction
            result = _objective(program, trial, tau, hessian=True)
            if result[0] <= value - 0.25 * length * decrement:
                break
            length *= 0.5
            if length < 1e-14:  # no decrease left above rounding: centred as well as it can be
                return x, steps
        x = trial
        value, gradient, hess, _ = result
        if np.linalg.norm(x) > blow_up:
            raise InfeasibleError("the power is unbounded below: applied forces exceed friction along a free "
                                  "direction, the motion is not quasistatic")
