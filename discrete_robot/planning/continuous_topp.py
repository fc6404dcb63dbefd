"""Reference: the continuous time-optimal rest-to-rest motion along a straight joint-space segment.

Independent of the discrete model: it uses only the continuous equations of motion of a
:class:`LagrangianSystem`, M(q)q̈ + C(q, q̇)q̇ + ∇V(q) = τ. Along q = q_a + s u (|u| = 1)::

    τ(s, ṡ, s̈) = m(s) s̈ + c(s) ṡ² + g(s),   m = M u,   c_r = Σ_ij (∂M_rj/∂q_i − ½ ∂M_ij/∂q_r) u_i u_j,
    g = ∇V,

so |τ_r| ≤ effort_r bounds s̈ between a_min(s, ṡ) and a_max(s, ṡ). The classical time-optimal solution
(Bobrow; Shin & McKay) accelerates on s̈ = a_max from rest at s = 0 and brakes on s̈ = a_min into rest at
s = L; both curves are integrated with solve_ivp (DOP853, tolerances 1e-12) and the duration is the time
to their intersection in the phase plane plus the braking time from there. Only this single-switch
structure is handled: if the accelerating curve meets the maximum-velocity curve (a_min > a_max) a
ConvergenceError says so. Used to show that the discrete planner's duration converges as the grid is
refined (docs/planning.md).
"""

from dataclasses import dataclass

import numpy as np
from scipy.integrate import solve_ivp
from scipy.optimize import brentq

from discrete_robot.errors import ConvergenceError, InfeasibleError
from discrete_robot.model.lagrangian import LagrangianSystem

TOLERANCE = 1e-12


@dataclass(frozen=True)
class ContinuousTopp:
    duration: float
    switch_s: float
    switch_speed: float
    accelerating_time: float


def path_dynamics(system: LagrangianSystem, q: np.ndarray, u: np.ndarray):
    """(m, c, g) of τ = m s̈ + c ṡ² + g at configuration q for direction u."""
    D = system.mass_matrix_derivatives(q)  # [k, i, j] = ∂M_ij/∂q_k
    christoffel = np.einsum("irj,i,j->r", D, u, u) - 0.5 * np.einsum("rij,i,j->r", D, u, u)
    return system.mass_matrix(q) @ u, christoffel, system.potential_gradient(q)


def acceleration_bounds(system: LagrangianSystem, start, direction, effort, s: float, speed: float):
    """(a_min, a_max): the path accelerations s̈ (rad/s²) the torque limits allow at (s, ṡ)."""
    m, c, g = path_dynamics(system, start + s * direction, direction)
    rest = c * speed * speed + g
    with np.errstate(divide="ignore", invalid="ignore"):
        first = (effort - rest) / m
        second = (-effort - rest) / m
    upper = np.where(m > 0, first, np.where(m < 0, second, np.inf))
    lower = np.where(m > 0, second, np.where(m < 0, first, -np.inf))
    if np.any((m == 0) & (np.abs(rest) > effort)):
        return np.inf, -np.inf
    return float(np.max(lower)), float(np.min(upper))


def time_optimal_segment(system: LagrangianSystem, start, end, effort) -> ContinuousTopp:
    """Minimum time from rest at ``start`` to rest at ``end`` along the straight segment, torques |τ| ≤ effort."""
    start, end, effort = (np.asarray(v, dtype=float) for v in (start, end, effort))
    length = float(np.linalg.norm(end - start))
    u = (end - start) / length
    a_min0, a_max0 = acceleration_bounds(system, start, u, effort, 0.0, 0.0)
    if a_max0 <= 0.0:
        raise InfeasibleError("continuous TOPP: the arm cannot start moving (gravity exceeds the torque limits)")

    def accelerate(_t, y):
        low, high = acceleration_bounds(system, start, u, effort, y[0], y[1])
        return [y[1], high]

    def brake_backwards(_t, y):  # time reversed: ds/dτ = −ṡ, dṡ/dτ = −a_min
        low, high = acceleration_bounds(system, start, u, effort, y[0], y[1])
        return [-y[1], -low]

    def beyond(limit_s, sign):
        def event(_t, y):
            return sign * (limit_s - y[0])
        event.terminal = True
        return event

    def infeasible(_t, y):
        low, high = acceleration_bounds(system, start, u, effort, y[0], y[1])
        return high - low
    infeasible.terminal = True

    horizon = 1e3
    forward = solve_ivp(accelerate, (0.0, horizon), [0.0, 0.0], method="DOP853", rtol=TOLERANCE, atol=TOLERANCE,
                        dense_output=True, events=[beyond(length, 1.0), infeasible])
    backward = solve_ivp(brake_backwards, (0.0, horizon), [length, 0.0], method="DOP853", rtol=TOLERANCE,
                         atol=TOLERANCE, dense_output=True, events=[beyond(0.0, -1.0), infeasible])
    if forward.t_events[1].size or backward.t_events[1].size:
        raise ConvergenceError("continuous TOPP: the extremal curves meet the maximum-velocity curve; this "
                               "reference handles the single-switch case only")

    def braking_speed(s: float) -> float:
        tau = brentq(lambda t: backward.sol(t)[0] - s, 0.0, backward.t[-1], xtol=1e-15, rtol=1e-15)
        return float(backward.sol(tau)[1]), tau

    def gap(t: float) -> float:
        s, speed = forward.sol(t)
        return speed - braking_speed(min(max(s, 0.0), length))[0]

    t_switch = brentq(gap, forward.t[1] * 1e-3, forward.t[-1], xtol=1e-15, rtol=1e-15)
    s_switch, speed = forward.sol(t_switch)
    _, tau = braking_speed(s_switch)
    return ContinuousTopp(float(t_switch + tau), float(s_switch), float(speed), float(t_switch))
