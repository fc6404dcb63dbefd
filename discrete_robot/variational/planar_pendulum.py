"""Example 2 of the article: the planar pendulum as a Lie group variational integrator on SO(2).

The attitude R ∈ SO(2) maps the body axis e2 = [0, 1] to the pendulum direction in the inertial frame,
whose e2 points along gravity (R = I hangs down); θ is the angle of R = [[cos θ, −sin θ], [sin θ, cos θ]].
Lagrangian (eq. (13)): L = ½ m l² Ω² + m g l e2ᵀ R e2. With the relative update F_k = R_kᵀ R_{k+1} ∈ SO(2)
and the discrete Lagrangian of eq. (20), the discrete Hamiltonian map (R_k, Ω_k) ↦ (R_{k+1}, Ω_{k+1}) is
(eqs. (25)–(27))::

    F_k − F_kᵀ = (2h Ω_k − h² g/l · e2ᵀ R_k e1) Ĵ,     Ĵ = [[0, −1], [1, 0]],
    R_{k+1} = R_k F_k,
    Ω_{k+1} = Ω_k − h g/(2l) e2ᵀ R_k e1 − h g/(2l) e2ᵀ R_{k+1} e1.

On SO(2), F − Fᵀ = 2 sin Δ Ĵ for F the rotation by Δ, so eq. (25) is solved in closed form:
sin Δ = h Ω_k − h² g/(2l) e2ᵀ R_k e1, cos Δ = +√(1 − sin²Δ) (the branch near the identity).
R stays in SO(2) because it is only ever multiplied by rotations. Units: m kg, l m, g m/s², Ω rad/s, E J.
"""

from dataclasses import dataclass

import numpy as np
from scipy.integrate import solve_ivp
from scipy.special import ellipj, ellipk

from discrete_robot.errors import InputError
from discrete_robot.geometry2d import rotation2d


@dataclass(frozen=True)
class PendulumParams:
    """A bob of mass m (kg) on a massless rod of length l (m) under gravity g (m/s²): the article's m = 1 kg,
    l = 9.81 m, so g/l = 1 s⁻² (the planar and the spherical pendulum's)."""

    mass: float = 1.0
    length: float = 9.81
    gravity: float = 9.81

    def __post_init__(self):
        if not (self.mass > 0.0 and self.length > 0.0 and self.gravity >= 0.0):
            raise InputError(f"pendulum: need mass > 0, length > 0, gravity >= 0, got {self}")


class PlanarPendulumParams(PendulumParams):
    """The planar pendulum's parameters (:class:`PendulumParams`)."""


@dataclass(frozen=True)
class PlanarPendulumTrajectory:
    t: np.ndarray
    rotation: np.ndarray  # (N, 2, 2)
    theta: np.ndarray
    omega: np.ndarray
    energy: np.ndarray


def energy(params: PlanarPendulumParams, rotation: np.ndarray, omega):
    """E = ½ m l² Ω² − m g l e2ᵀ R e2 (J); ``rotation`` (2, 2) or (N, 2, 2)."""
    ml = params.mass * params.length
    return 0.5 * ml * params.length * np.square(omega) - ml * params.gravity * rotation[..., 1, 1]


def lgvi_step(rotation: np.ndarray, omega: float, h: float, params: PlanarPendulumParams):
    """Eqs. (25)–(27): (R_k, Ω_k) ↦ (R_{k+1}, Ω_{k+1})."""
    half_gh = 0.5 * h * params.gravity / params.length
    sin_delta = h * omega - h * half_gh * rotation[1, 0]
    if abs(sin_delta) >= 1.0:
        raise InputError(f"planar pendulum: step h = {h} s is too large for Ω = {omega} rad/s "
                         f"(eq. (25) has no rotation near the identity)")
    cos_delta = np.sqrt(1.0 - sin_delta * sin_delta)
    rotation1 = rotation @ np.array([[cos_delta, -sin_delta], [sin_delta, cos_delta]])
    return rotation1, omega - half_gh * (rotation[1, 0] + rotation1[1, 0])


def simulate_vi(params: PlanarPendulumParams, theta0: float, omega0: float, h: float,
                n_steps: int) -> PlanarPendulumTrajectory:
    """n_steps Lie group variational steps from R0 = rotation2d(θ0), Ω0."""
    rotations = np.empty((n_steps + 1, 2, 2))
    omegas = np.empty(n_steps + 1)
    rotations[0], omegas[0] = rotation2d(theta0), omega0
    rotation, omega = rotations[0], float(omega0)
    for k in range(n_steps):
        rotation, omega = lgvi_step(rotation, omega, h, params)
        rotations[k + 1], omegas[k + 1] = rotation, omega
    theta = np.unwrap(np.arctan2(rotations[:, 1, 0], rotations[:, 0, 0]))
    return PlanarPendulumTrajectory(np.arange(n_steps + 1) * h, rotations, theta, omegas,
                                    energy(params, rotations, omegas))


def simulate_rk45(params: PlanarPendulumParams, theta0: float, omega0: float, duration: float, rtol: float,
                  atol: float | None = None) -> PlanarPendulumTrajectory:
    """scipy's RK45 on θ̈ + g/l sin θ = 0 (eqs. (16)–(17) in the angle), atol = rtol unless given, at its steps."""
    g_over_l = params.gravity / params.length
    solution = solve_ivp(lambda _t, y: [y[1], -g_over_l * np.sin(y[0])], (0.0, duration), [theta0, omega0],
                         method="RK45", rtol=rtol, atol=rtol if atol is None else atol)
    theta, omega = solution.y
    rotations = np.moveaxis(rotation2d(theta), -1, 0)      # (2, 2, N) for N angles -> (N, 2, 2)
    return PlanarPendulumTrajectory(solution.t, rotations, theta, omega, energy(params, rotations, omega))


def exact_angle_from_rest(params: PlanarPendulumParams, theta0: float, t) -> np.ndarray:
    """θ(t) released from rest at |θ0| < π: sin(θ/2) = k sn(K(k) − ω0 t; k), k = sin(θ0/2), ω0 = √(g/l)."""
    if not abs(theta0) < np.pi:
        raise InputError(f"exact pendulum solution needs |θ0| < π, got {theta0}")
    k = np.sin(0.5 * theta0)
    m = k * k
    sn, _, _, _ = ellipj(ellipk(m) - np.sqrt(params.gravity / params.length) * np.asarray(t, dtype=float), m)
    return 2.0 * np.arcsin(k * sn)
