"""Example 1 of the article: a mass on a linear spring, L = ½ m q̇² − ½ κ q².

The midpoint discrete Lagrangian L_d = h L((q_k+q_{k+1})/2, (q_{k+1}−q_k)/h) (eq. (8)) and the discrete
Legendre transform give the explicit map (q_k, q̇_k) ↦ (q_{k+1}, q̇_{k+1}) of eqs. (10)–(11)::

    (1 + h²κ/4m) q_{k+1} = h q̇_k + (1 − h²κ/4m) q_k,
    q̇_{k+1} = q̇_k − hκ/2m q_k − hκ/2m q_{k+1}.

For this linear system the map is the implicit midpoint rule, which keeps the quadratic energy
½ m q̇² + ½ κ q² exactly (to round-off). Units: m kg, κ N/m, q m, q̇ m/s, E J.
"""

from dataclasses import dataclass

import numpy as np
from scipy.integrate import solve_ivp

from discrete_robot.errors import InputError


@dataclass(frozen=True)
class MassSpringParams:
    """Mass (kg) and spring constant (N/m); the article's m = 1 kg, κ = 1 kg/s² (ω = 1 rad/s)."""

    mass: float = 1.0
    stiffness: float = 1.0

    def __post_init__(self):
        if not (self.mass > 0.0 and self.stiffness > 0.0):
            raise InputError(f"mass-spring: mass and stiffness must be positive, got {self.mass}, {self.stiffness}")


@dataclass(frozen=True)
class MassSpringTrajectory:
    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    energy: np.ndarray


def energy(params: MassSpringParams, q, qd):
    """E = ½ m q̇² + ½ κ q², J."""
    return 0.5 * params.mass * np.square(qd) + 0.5 * params.stiffness * np.square(q)


def vi_step(q: float, qd: float, h: float, params: MassSpringParams) -> tuple[float, float]:
    """Eqs. (10)–(11): one step of the variational integrator."""
    c = h * h * params.stiffness / (4.0 * params.mass)
    q1 = (h * qd + (1.0 - c) * q) / (1.0 + c)
    qd1 = qd - h * params.stiffness / (2.0 * params.mass) * (q + q1)
    return q1, qd1


def simulate_vi(params: MassSpringParams, q0: float, qd0: float, h: float, n_steps: int) -> MassSpringTrajectory:
    """n_steps steps of eqs. (10)–(11) from (q0, q̇0)."""
    q, qd = np.empty(n_steps + 1), np.empty(n_steps + 1)
    q[0], qd[0] = q0, qd0
    qk, qdk = float(q0), float(qd0)
    for k in range(n_steps):
        qk, qdk = vi_step(qk, qdk, h, params)
        q[k + 1], qd[k + 1] = qk, qdk
    return MassSpringTrajectory(np.arange(n_steps + 1) * h, q, qd, energy(params, q, qd))


def simulate_rk45(params: MassSpringParams, q0: float, qd0: float, duration: float, rtol: float,
                  atol: float | None = None) -> MassSpringTrajectory:
    """scipy's RK45 on m q̈ + κ q = 0 (eq. (7)), atol = rtol unless given, sampled at its own accepted steps."""
    omega2 = params.stiffness / params.mass
    solution = solve_ivp(lambda _t, y: [y[1], -omega2 * y[0]], (0.0, duration), [q0, qd0], method="RK45",
                         rtol=rtol, atol=rtol if atol is None else atol)
    q, qd = solution.y
    return MassSpringTrajectory(solution.t, q, qd, energy(params, q, qd))


def exact_solution(params: MassSpringParams, q0: float, qd0: float, t) -> tuple[np.ndarray, np.ndarray]:
    """q(t) = q0 cos ωt + q̇0/ω sin ωt and its derivative, ω = √(κ/m)."""
    omega = np.sqrt(params.stiffness / params.mass)
    t = np.asarray(t, dtype=float)
    q = q0 * np.cos(omega * t) + qd0 / omega * np.sin(omega * t)
    qd = -q0 * omega * np.sin(omega * t) + qd0 * np.cos(omega * t)
    return q, qd
