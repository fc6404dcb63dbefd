"""Example 3 of the article: the spherical pendulum on S², integrated without angles.

q ∈ S² is the unit vector from the pivot to the mass, ω the angular velocity (q̇ = ω × q, ω·q = 0) and
e3 = [0, 0, 1] the direction of gravity (q = e3 hangs down). L = ½ m l² q̇·q̇ + m g l e3·q (eq. (28));
the continuous equations are ω̇ = g/l q × e3, q̇ = ω × q (eq. (32)).

The update q_{k+1} = F_k q_k with F_k ∈ SO(3) not rotating about q_k, and the discrete Lagrangian of
eq. (34), give the explicit discrete map of eqs. (35)–(36)::

    a_k = h ω_k + h² g/(2l) q_k × e3,
    q_{k+1} = a_k × q_k + √(1 − |a_k|²) q_k,
    ω_{k+1} = ω_k + h g/(2l) q_k × e3 + h g/(2l) q_{k+1} × e3.

A control moment u (N m, about the pivot, inertial frame) enters through the discrete Lagrange–d'Alembert
principle as in the article's optimal-control example 5: the virtual work of u over a step is split equally
between its two ends, f⁻ = h/2 u_k and f⁺ = h/2 u_{k+1} acting on the rotations δq = ξ × q, so with
ū = u/(m l²) (only the part normal to q acts; the article parametrises u_k = q_k × w_k)::

    a_k = h ω_k + h² g/(2l) q_k × e3 + h²/2 ū_k⊥,
    ω_{k+1} = a_k/h + h g/(2l) q_{k+1} × e3 + h/2 ū_{k+1}⊥.

Without control this is eqs. (35)–(36); with u it is the forced discrete Legendre transform pair
m l² ω_k = (m l²/h) q_k × q_{k+1} − h/2 m g l q_k × e3 − h/2 u_k⊥ and its counterpart at k+1. The map keeps
|q| = 1 and q·ω = 0 to round-off, and ω·e3 (angular momentum about the vertical, per m l²) exactly when
u·e3 = 0. Energies are per unit m l² (s⁻²), as in the article.
"""

from dataclasses import dataclass

import numpy as np
from scipy.integrate import solve_ivp

from discrete_robot.errors import InputError
from discrete_robot.geometry3d import cross
from discrete_robot.variational.planar_pendulum import PendulumParams

E3 = np.array([0.0, 0.0, 1.0])


class SphericalPendulumParams(PendulumParams):
    """The spherical pendulum's parameters (:class:`.planar_pendulum.PendulumParams`)."""

    @property
    def inertia(self) -> float:
        """m l², kg m²."""
        return self.mass * self.length * self.length


@dataclass(frozen=True)
class SphericalPendulumTrajectory:
    t: np.ndarray
    q: np.ndarray  # (N, 3)
    omega: np.ndarray  # (N, 3)
    energy: np.ndarray  # per unit m l², s⁻²
    unit_length_error: np.ndarray  # | |q| − 1 |


def _cross_e3(q: np.ndarray) -> np.ndarray:
    """q × e3."""
    return np.array([q[1], -q[0], 0.0])


def energy_per_ml2(params: SphericalPendulumParams, q: np.ndarray, omega: np.ndarray):
    """E/(m l²) = ½ |ω × q|² − g/l e3·q (s⁻²); q, ω of shape (3,) or (N, 3)."""
    qd = np.cross(omega, q)
    return 0.5 * np.sum(qd * qd, axis=-1) - params.gravity / params.length * q[..., 2]


def _normal_part(u: np.ndarray, q: np.ndarray) -> np.ndarray:
    return u - (u @ q) * q


def _control_ends(control) -> tuple[np.ndarray, np.ndarray]:
    u = np.asarray(control, dtype=float)
    if u.shape == (3,):
        return u, u
    if u.shape == (2, 3):
        return u[0], u[1]
    raise InputError(f"spherical pendulum control: expected a moment of shape (3,) held over the step or "
                     f"(2, 3) = (u_k, u_k+1), got shape {u.shape}")


def lgvi_step(q: np.ndarray, omega: np.ndarray, h: float, params: SphericalPendulumParams, control=None):
    """One step (q_k, ω_k) ↦ (q_{k+1}, ω_{k+1}) of eqs. (35)–(36), with an optional control moment (N m).

    ``control`` is either one moment u (3,) held over the step, or the node values (u_k, u_{k+1}) of
    shape (2, 3) as in the article's discrete optimal control (u at the N+1 time nodes).
    """
    half_gh = 0.5 * h * params.gravity / params.length
    a = h * (omega + half_gh * _cross_e3(q))
    if control is not None:
        u0, u1 = _control_ends(control)
        a = a + (0.5 * h * h / params.inertia) * _normal_part(u0, q)
    a2 = a @ a
    if a2 >= 1.0:
        raise InputError(f"spherical pendulum: step h = {h} s is too large for |ω| = {np.linalg.norm(omega)} "
                         "rad/s (eq. (35) has no solution)")
    q1 = cross(a, q) + np.sqrt(1.0 - a2) * q
    omega1 = a / h + half_gh * _cross_e3(q1)
    if control is not None:
        omega1 = omega1 + (0.5 * h / params.inertia) * _normal_part(u1, q1)
    return q1, omega1


def simulate_vi(params: SphericalPendulumParams, q0, omega0, h: float, n_steps: int,
                controls=None) -> SphericalPendulumTrajectory:
    """n_steps steps from (q0, ω0); ``controls`` are optional node moments of shape (n_steps + 1, 3)."""
    q0, omega0 = np.asarray(q0, dtype=float), np.asarray(omega0, dtype=float)
    if abs(np.linalg.norm(q0) - 1.0) > 1e-12 or abs(q0 @ omega0) > 1e-12:
        raise InputError(f"spherical pendulum: q0 must be a unit vector and ω0 normal to it, got {q0}, {omega0}")
    if controls is not None:
        controls = np.asarray(controls, dtype=float)
        if controls.shape != (n_steps + 1, 3):
            raise InputError(f"controls: expected shape {(n_steps + 1, 3)}, got {controls.shape}")
    qs, omegas = np.empty((n_steps + 1, 3)), np.empty((n_steps + 1, 3))
    qs[0], omegas[0] = q0, omega0
    for k in range(n_steps):
        qs[k + 1], omegas[k + 1] = lgvi_step(qs[k], omegas[k], h, params,
                                             None if controls is None else controls[k:k + 2])
    return SphericalPendulumTrajectory(np.arange(n_steps + 1) * h, qs, omegas, energy_per_ml2(params, qs, omegas),
                                       np.abs(np.linalg.norm(qs, axis=1) - 1.0))


def continuous_dynamics(params: SphericalPendulumParams):
    """f(t, y) of eqs. (31)–(32) for y = [q, ω]: q̇ = ω × q, ω̇ = g/l q × e3."""
    g_over_l = params.gravity / params.length

    def f(_t, y):
        q, omega = y[:3], y[3:]
        return np.concatenate([cross(omega, q), g_over_l * _cross_e3(q)])

    return f


def simulate_rk45(params: SphericalPendulumParams, q0, omega0, duration: float, rtol: float,
                  atol: float | None = None, method: str = "RK45") -> SphericalPendulumTrajectory:
    """scipy's ``method`` on eqs. (31)–(32), atol = rtol unless given, sampled at its own accepted steps."""
    solution = solve_ivp(continuous_dynamics(params), (0.0, duration), np.concatenate([q0, omega0]),
                         method=method, rtol=rtol, atol=rtol if atol is None else atol)
    qs, omegas = solution.y[:3].T, solution.y[3:].T
    return SphericalPendulumTrajectory(solution.t, qs, omegas, energy_per_ml2(params, qs, omegas),
                                       np.abs(np.linalg.norm(qs, axis=1) - 1.0))


def article_initial_state() -> tuple[np.ndarray, np.ndarray]:
    """q0 = [√3/2, 0, 1/2], ω0 = 0.1 [√3, 0, −3] rad/s (tangent to S² at q0; E = −0.44 per m l²)."""
    return np.array([np.sqrt(3.0) / 2.0, 0.0, 0.5]), 0.1 * np.array([np.sqrt(3.0), 0.0, -3.0])
