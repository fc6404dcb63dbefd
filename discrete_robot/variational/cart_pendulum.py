"""Discrete controlled Lagrangians: kinetic shaping stabilises the inverted pendulum on a cart.

Pendulum angle φ from the upright (φ = 0 inverted), cart position s; only the cart is actuated.
Lagrangian (article eq. (50)) with α = m l², β(φ) = m l cos φ, γ = M + m, V(φ) = m g l cos φ::

    L = ½ (α φ̇² + 2 β(φ) φ̇ ṡ + γ ṡ²) − V(φ).

Kinetic shaping (eq. (53)): L_{τ,σ} = L(φ, φ̇, ṡ + τ(φ) φ̇) + ½ σ γ (τ(φ) φ̇)², τ = κ β(φ), σ = −1/(γκ)
(the matching condition), which is again a natural mechanical system with the controlled metric::

    G_c(φ) = [[α + κ(1 + γκ) β², (1 + γκ) β], [(1 + γκ) β, γ]].

Both are discretised with the midpoint discrete Lagrangian L_d = h L(q_{k+½}, Δq_k/h)
(:class:`~discrete_robot.variational.midpoint.MidpointVariationalIntegrator`). The closed loop is the
physical system: its unactuated φ equation (56), D2 L_d(q_{k−1}, q_k)_φ + D1 L_d(q_k, q_{k+1})_φ = 0, holds
at every step, and the cart force is whatever makes the discrete controlled momentum

    p_k = ∂L^{τ,σ}_d/∂s = [(1 + γκ) β(φ_{k+½}) Δφ_k + γ Δs_k] / h

obey the control law. Without dissipation (the article's Fig. 7) the law is p_k = p_{k−1} (eq. (59)), and
the physical equations (56)–(57) restricted to the level p coincide with the controlled-Lagrangian flow
(58)–(59) on the level p/(1 + γκ) — the discrete matching conditions. With a dissipation rate D > 0 the law
becomes p_k + D B_c(φ_{k+½}) = const, B_c(φ) = (1 + γκ) m l sin φ, the discrete form of ṗ = −D (1+γκ) β φ̇:
it makes the φ energy ½ (α − β²/γ − κβ²) φ̇² + V, whose maximum is the upright state once κ is above
critical, climb to that maximum, so φ → 0.

The cart force u_k (N) at node k follows from the physical s equation (57) as the change of the physical
discrete momentum p^s_k = [β(φ_{k+½}) Δφ_k + γ Δs_k]/h: u_k = (p^s_k − p^s_{k−1})/h, with p^s_{−1} = β φ̇0 + γ ṡ0
(the boundary condition ∂L/∂q̇(q0, q̇0) + D1 L_d(q0, q1) + F_d = 0 that turns (q0, q̇0) into (q0, q1)).

Kinetic shaping stabilises φ for κ above the critical value (α − β(0)²/γ)/β(0)² = M/(m(m + M)), where
the reduced φ inertia α − β²/γ − κβ² turns negative; the article uses twice the critical value.
"""

from dataclasses import dataclass
from functools import cached_property

import numpy as np
from scipy.optimize import root

from discrete_robot.errors import ConvergenceError, InputError
from discrete_robot.variational.midpoint import MidpointVariationalIntegrator


@dataclass(frozen=True)
class CartPendulumParams:
    """The article's cart M = 0.44 kg, bob m = 0.14 kg, length l = 0.215 m; g in m/s²."""

    cart_mass: float = 0.44
    pendulum_mass: float = 0.14
    length: float = 0.215
    gravity: float = 9.81

    def __post_init__(self):
        if not (self.cart_mass > 0.0 and self.pendulum_mass > 0.0 and self.length > 0.0 and self.gravity >= 0.0):
            raise InputError(f"cart-pendulum: masses and length must be positive, gravity non-negative, got {self}")

    @property
    def alpha(self) -> float:
        return self.pendulum_mass * self.length ** 2

    @property
    def gamma(self) -> float:
        return self.pendulum_mass + self.cart_mass

    @property
    def ml(self) -> float:
        return self.pendulum_mass * self.length

    @property
    def critical_kappa(self) -> float:
        """(α − β(0)²/γ)/β(0)² = M/(m(m + M)): kinetic shaping stabilises φ = 0 for κ above it."""
        return (self.alpha - self.ml ** 2 / self.gamma) / self.ml ** 2


class CartPendulum:
    """The physical cart–pendulum as a LagrangianSystem, q = (φ, s)."""

    dof = 2
    vectorized = False

    def __init__(self, params: CartPendulumParams):
        self.params = params

    def mass_matrix(self, q: np.ndarray) -> np.ndarray:
        p = self.params
        beta = p.ml * np.cos(q[0])
        return np.array([[p.alpha, beta], [beta, p.gamma]])

    def mass_matrix_derivatives(self, q: np.ndarray) -> np.ndarray:
        d_beta = -self.params.ml * np.sin(q[0])
        return np.array([[[0.0, d_beta], [d_beta, 0.0]], np.zeros((2, 2))])

    def potential(self, q: np.ndarray) -> float:
        p = self.params
        return p.ml * p.gravity * np.cos(q[0])

    def potential_gradient(self, q: np.ndarray) -> np.ndarray:
        p = self.params
        return np.array([-p.ml * p.gravity * np.sin(q[0]), 0.0])


class ControlledCartPendulum(CartPendulum):
    """The controlled Lagrangian L_{τ,σ} (τ = κβ, σ = −1/(γκ)) as a LagrangianSystem: metric G_c, same V."""

    def __init__(self, params: CartPendulumParams, kappa: float):
        super().__init__(params)
        if not kappa > 0.0:
            raise InputError(f"kinetic shaping gain κ must be positive, got {kappa}")
        self.kappa = float(kappa)

    @property
    def coupling(self) -> float:
        """1 + γκ."""
        return 1.0 + self.params.gamma * self.kappa

    def mass_matrix(self, q: np.ndarray) -> np.ndarray:
        p, c = self.params, self.coupling
        beta = p.ml * np.cos(q[0])
        return np.array([[p.alpha + self.kappa * c * beta * beta, c * beta], [c * beta, p.gamma]])

    def mass_matrix_derivatives(self, q: np.ndarray) -> np.ndarray:
        p, c = self.params, self.coupling
        beta, d_beta = p.ml * np.cos(q[0]), -p.ml * np.sin(q[0])
        return np.array([[[2.0 * self.kappa * c * beta * d_beta, c * d_beta], [c * d_beta, 0.0]], np.zeros((2, 2))])


@dataclass(frozen=True)
class CartPendulumTrajectory:
    """Nodes t_k, q_k = (φ_k, s_k); per step k → k+1 the controlled momentum p_k; per node the cart force u_k."""

    t: np.ndarray
    q: np.ndarray
    controlled_momentum: np.ndarray
    force: np.ndarray


class KineticShapingController:
    """The closed loop of the discrete controlled Lagrangian (module docstring), κ and dissipation D (1/s)."""

    def __init__(self, params: CartPendulumParams, kappa: float, dissipation: float = 0.0, xtol: float = 1e-13):
        if not dissipation >= 0.0:
            raise InputError(f"dissipation must be non-negative, got {dissipation}")
        self.params = params
        self.controlled = ControlledCartPendulum(params, kappa)
        self.dissipation = float(dissipation)
        self.xtol = xtol

    @cached_property
    def physical_integrator(self) -> MidpointVariationalIntegrator:
        return MidpointVariationalIntegrator(CartPendulum(self.params))

    @cached_property
    def controlled_integrator(self) -> MidpointVariationalIntegrator:
        return MidpointVariationalIntegrator(self.controlled)

    def shaped_momentum_offset(self, phi: float) -> float:
        """D B_c(φ) = D (1 + γκ) m l sin φ."""
        return self.dissipation * self.controlled.coupling * self.params.ml * np.sin(phi)

    def controlled_momentum(self, q0: np.ndarray, q1: np.ndarray, h: float) -> float:
        """p_k = −∂L^{τ,σ}_d/∂s_k(q_k, q_{k+1}) = [(1 + γκ) β(φ_{k+½}) Δφ_k + γ Δs_k]/h."""
        return float(-self.controlled_integrator.d1_lagrangian(q0, q1, h)[1])

    def simulate(self, q0, qd0, h: float, n_steps: int) -> CartPendulumTrajectory:
        """n_steps closed-loop steps from (q0, q̇0) = ((φ0, s0), (φ̇0, ṡ0))."""
        q0, qd0 = np.asarray(q0, dtype=float), np.asarray(qd0, dtype=float)
        if q0.shape != (2,) or qd0.shape != (2,) or not np.all(np.isfinite(np.concatenate([q0, qd0]))):
            raise InputError(f"cart-pendulum: q0 and qd0 must be finite pairs (φ, s), got {q0}, {qd0}")
        physical = self.physical_integrator
        momentum0 = CartPendulum(self.params).mass_matrix(q0) @ qd0
        level = float(self.controlled.mass_matrix(q0)[1] @ qd0) + self.shaped_momentum_offset(q0[0])
        q = np.empty((n_steps + 1, 2))
        q[0] = q0
        controlled_momentum, force = np.empty(n_steps), np.empty(n_steps)
        p_phi, p_s_previous, guess_velocity = momentum0[0], momentum0[1], qd0
        for k in range(n_steps):
            qk = q[k]

            def residual(q1, qk=qk, p_phi=p_phi):
                phi_mid = 0.5 * (qk[0] + q1[0])
                return [p_phi + physical.d1_lagrangian(qk, q1, h)[0],
                        self.controlled_momentum(qk, q1, h) + self.shaped_momentum_offset(phi_mid) - level]

            solution = root(residual, qk + h * guess_velocity, method="hybr", options={"xtol": self.xtol})
            # hybr reports "not making good progress" once the residual is at round-off; judge the residual.
            scale = abs(p_phi) + abs(level) + self.params.gamma * float(np.max(np.abs(guess_velocity))) + 1e-12
            if not (solution.success or np.max(np.abs(solution.fun)) <= 1e-12 * scale):
                raise ConvergenceError(f"cart-pendulum closed loop: step {k} did not converge ({solution.message})")
            q[k + 1] = solution.x
            p_phi = physical.d2_lagrangian(qk, q[k + 1], h)[0]
            p_s = float(-physical.d1_lagrangian(qk, q[k + 1], h)[1])
            force[k] = (p_s - p_s_previous) / h
            controlled_momentum[k] = self.controlled_momentum(qk, q[k + 1], h)
            p_s_previous, guess_velocity = p_s, (q[k + 1] - qk) / h
        return CartPendulumTrajectory(np.arange(n_steps + 1) * h, q, controlled_momentum, force)


def simulate_uncontrolled(params: CartPendulumParams, q0, qd0, h: float, n_steps: int) -> CartPendulumTrajectory:
    """The same discrete cart–pendulum with the cart force held at zero (the inverted pendulum falls)."""
    trajectory = MidpointVariationalIntegrator(CartPendulum(params)).simulate(q0, qd0, h, n_steps)
    return CartPendulumTrajectory(trajectory.t, trajectory.q, np.full(n_steps, np.nan), np.zeros(n_steps))


ARTICLE_TIME_STEP = 0.05
"""h = 0.05 s of the article's Fig. 7."""


def default_initial_state() -> tuple[np.ndarray, np.ndarray]:
    """(φ0, s0) = (0.1 rad, 0 m), (φ̇0, ṡ0) = (0, 0.1 m/s): the seed text does not give the article's values.

    A non-zero cart speed puts the motion on a non-zero controlled-momentum level, which is what makes the
    cart drift in the article's Fig. 7 ("the s dynamics exhibits both a drift and oscillations").
    """
    return np.array([0.1, 0.0]), np.array([0.0, 0.1])
