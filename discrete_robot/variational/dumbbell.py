"""Example 4 of the article: a rigid body in a potential field on SE(3) — a dumbbell spacecraft in a
central gravity field (the restricted full two-body problem).

The dumbbell is two uniform spheres (mass m_s, radius a) joined by a massless rod; their centres sit at
ρ = ±d e1 in the body frame. A uniform sphere attracts and is attracted like a point mass, so
U(R, x) = −Σ_i μ m_s / |x + R ρ_i| exactly. R ∈ SO(3) maps body to inertial frame, x is the mass centre
(inertial), Ω the body angular velocity, v the inertial velocity. Continuous equations (37)–(40);
the moment due to the potential is M̂ = (∂U/∂R)ᵀ R − Rᵀ ∂U/∂R (eq. (41)), i.e. M = Σ_i ρ_i × f_i with
f_i = −μ m_s Rᵀ r_i/|r_i|³ the body-frame gravity force on sphere i.

Lie group variational integrator (eqs. (42)–(46)), J_d = ½ tr[J] I − J::

    h (JΩ_k)^ + h²/2 M̂_k = F_k J_d − J_d F_kᵀ,           R_{k+1} = R_k F_k,
    x_{k+1} = x_k + h v_k − h²/(2m) ∂U_k/∂x_k,
    J Ω_{k+1} = F_kᵀ J Ω_k + h/2 F_kᵀ M_k + h/2 M_{k+1},
    m v_{k+1} = m v_k − h/2 ∂U_k/∂x_k − h/2 ∂U_{k+1}/∂x_{k+1}.

The implicit eq. (42) is solved for F_k through its Cayley parameter f (F = (I + f̂)(I − f̂)⁻¹), which
turns it into the vector equation g + g × f + (g·f) f − 2 J f = 0, g = h JΩ_k + h²/2 M_k (Lee, Leok &
McClamroch, "Lie group variational integrators for the full body problem", 2007), solved by Newton's
method with its exact Jacobian ĝ + (g·f) I + f gᵀ − 2J. F is a rotation by construction, so R stays
orthogonal to round-off. One potential evaluation per step (the loads at k+1 are reused at the next step).

Units are normalised (μ = 1, total mass 1, rod length 1): the seed text does not state the article's
dumbbell parameters, so :class:`DumbbellParams` documents the ones chosen here.
"""

import enum
from dataclasses import dataclass
from functools import cached_property

import numpy as np
from scipy.integrate import solve_ivp

from discrete_robot.errors import ConvergenceError, InputError
from discrete_robot.geometry3d import (
    cross,
    hat,
    matrix_to_quaternion,
    quaternion_to_matrix_unnormalised,
    rotation_about,
    solve3,
)


@dataclass(frozen=True)
class DumbbellParams:
    """Gravitational parameter μ (L³/T²), mass m_s and radius a of each sphere, half rod length d."""

    mu: float = 1.0
    sphere_mass: float = 0.5
    sphere_radius: float = 0.1
    half_length: float = 0.5

    def __post_init__(self):
        if not (self.mu > 0.0 and self.sphere_mass > 0.0 and self.sphere_radius > 0.0
                and self.half_length > self.sphere_radius):
            raise InputError(f"dumbbell: need μ, m_s, a > 0 and d > a, got {self}")

    @property
    def mass(self) -> float:
        return 2.0 * self.sphere_mass

    @cached_property
    def offsets(self) -> np.ndarray:
        """Sphere centres in the body frame, shape (2, 3)."""
        return np.array([[self.half_length, 0.0, 0.0], [-self.half_length, 0.0, 0.0]])

    @cached_property
    def inertia(self) -> np.ndarray:
        """J = Σ m_s (|ρ|² I − ρρᵀ) + 2 · (2/5) m_s a² I about the mass centre."""
        rho = self.offsets
        parallel_axis = self.sphere_mass * (np.sum(rho * rho) * np.eye(3) - rho.T @ rho)
        return parallel_axis + 2.0 * 0.4 * self.sphere_mass * self.sphere_radius ** 2 * np.eye(3)

    @cached_property
    def inertia_inverse(self) -> np.ndarray:
        return np.linalg.inv(self.inertia)


@dataclass(frozen=True)
class RigidBodyState:
    """(R, x, Ω, v) ∈ SE(3) × R³ × R³."""

    rotation: np.ndarray
    position: np.ndarray
    omega: np.ndarray
    velocity: np.ndarray


@dataclass(frozen=True)
class Loads:
    """U (energy), ∂U/∂x (inertial, force = −∂U/∂x) and the body-frame moment M, at one configuration."""

    potential: float
    gradient: np.ndarray
    moment: np.ndarray


@dataclass(frozen=True)
class DumbbellTrajectory:
    t: np.ndarray
    rotation: np.ndarray  # (N, 3, 3)
    position: np.ndarray  # (N, 3)
    omega: np.ndarray
    velocity: np.ndarray
    energy: np.ndarray
    angular_momentum: np.ndarray  # (N, 3): x × m v + R J Ω about the attracting centre


def loads(params: DumbbellParams, rotation: np.ndarray, position: np.ndarray) -> Loads:
    """U = −Σ μ m_s/|r_i|, ∂U/∂x = Σ μ m_s r_i/|r_i|³, M = Σ ρ_i × (−μ m_s Rᵀ r_i/|r_i|³), r_i = x + R ρ_i."""
    rho = params.offsets
    r = position + rho @ rotation.T
    distance = np.sqrt(np.sum(r * r, axis=1))
    mu_m = params.mu * params.sphere_mass
    weighted = (mu_m / distance ** 3)[:, None] * r
    body_force = weighted @ rotation
    return Loads(-mu_m * float(np.sum(1.0 / distance)), weighted[0] + weighted[1],
                 cross(body_force[0], rho[0]) + cross(body_force[1], rho[1]))


def energy(params: DumbbellParams, state: RigidBodyState, potential: float) -> float:
    """E = ½ m |v|² + ½ ΩᵀJΩ + U."""
    v, omega = state.velocity, state.omega
    return 0.5 * params.mass * float(v @ v) + 0.5 * float(omega @ params.inertia @ omega) + potential


def angular_momentum(params: DumbbellParams, state: RigidBodyState) -> np.ndarray:
    """Total angular momentum about the attracting centre, x × m v + R J Ω (conserved: U is rotation-invariant)."""
    return (params.mass * cross(state.position, state.velocity)
            + state.rotation @ (params.inertia @ state.omega))


def cayley(f: np.ndarray) -> np.ndarray:
    """(I + f̂)(I − f̂)⁻¹ = I + 2/(1 + |f|²) (f̂ + f̂²), a rotation by 2 arctan|f| about f."""
    s = hat(f)
    return np.eye(3) + (2.0 / (1.0 + f @ f)) * (s + s @ s)


def solve_relative_rotation(g: np.ndarray, inertia: np.ndarray, inertia_inverse: np.ndarray,
                            tol: float = 1e-14, max_iter: int = 30) -> np.ndarray:
    """F ∈ SO(3) with F J_d − J_d Fᵀ = ĝ (eq. (42)), via Newton on g + g×f + (g·f) f − 2Jf = 0, F = cay(f)."""
    # Small-rotation solution (F ≈ I + 2f̂ gives 2Jf ≈ g) improved by one fixed-point sweep of the equation:
    # Newton then starts O(|g|³) away and needs two or three iterations.
    f = 0.5 * inertia_inverse @ g
    f = 0.5 * inertia_inverse @ (g + cross(g, f) + (g @ f) * f)
    g_hat_minus_2J = hat(g) - 2.0 * inertia
    tol2 = tol * tol
    for _ in range(max_iter):
        gf = g @ f
        residual = g + cross(g, f) + gf * f - 2.0 * inertia @ f
        jacobian = g_hat_minus_2J + np.outer(f, g)
        jacobian.flat[::4] += gf
        delta = solve3(jacobian, -residual)
        f = f + delta
        if delta @ delta <= tol2 * max(1.0, f @ f):
            return cayley(f)
    raise ConvergenceError(f"dumbbell: eq. (42) for F_k did not converge in {max_iter} Newton iterations "
                           f"(|g| = {np.linalg.norm(g):.3e}); reduce the time step")


def lgvi_step(state: RigidBodyState, h: float, params: DumbbellParams,
              loads_k: Loads | None = None) -> tuple[RigidBodyState, Loads]:
    """Eqs. (42)–(46): (R_k, x_k, Ω_k, v_k) ↦ (R_{k+1}, x_{k+1}, Ω_{k+1}, v_{k+1}); returns the loads at k+1 too."""
    if loads_k is None:
        loads_k = loads(params, state.rotation, state.position)
    J, m = params.inertia, params.mass
    Jomega = J @ state.omega
    F = solve_relative_rotation(h * Jomega + 0.5 * h * h * loads_k.moment, J, params.inertia_inverse)
    rotation1 = state.rotation @ F
    position1 = state.position + h * state.velocity - (0.5 * h * h / m) * loads_k.gradient
    loads1 = loads(params, rotation1, position1)
    omega1 = params.inertia_inverse @ (F.T @ (Jomega + 0.5 * h * loads_k.moment) + 0.5 * h * loads1.moment)
    velocity1 = state.velocity - (0.5 * h / m) * (loads_k.gradient + loads1.gradient)
    return RigidBodyState(rotation1, position1, omega1, velocity1), loads1


def simulate_vi(params: DumbbellParams, initial: RigidBodyState, h: float, n_steps: int) -> DumbbellTrajectory:
    """n_steps LGVI steps from ``initial``."""
    states, energies = [initial], np.empty(n_steps + 1)
    current_loads = loads(params, initial.rotation, initial.position)
    energies[0] = energy(params, initial, current_loads.potential)
    state = initial
    for k in range(n_steps):
        state, current_loads = lgvi_step(state, h, params, current_loads)
        states.append(state)
        energies[k + 1] = energy(params, state, current_loads.potential)
    return _trajectory(params, np.arange(n_steps + 1) * h, states, energies)


def _trajectory(params: DumbbellParams, t: np.ndarray, states: list[RigidBodyState],
                energies: np.ndarray) -> DumbbellTrajectory:
    return DumbbellTrajectory(t, np.array([s.rotation for s in states]), np.array([s.position for s in states]),
                              np.array([s.omega for s in states]), np.array([s.velocity for s in states]),
                              energies, np.array([angular_momentum(params, s) for s in states]))


class AttitudeForm(enum.Enum):
    """How the RK45 baseline carries the attitude: 9 rotation-matrix entries or a 4-entry quaternion."""

    ROTATION_MATRIX = "rotation_matrix"
    QUATERNION = "quaternion"


def continuous_dynamics(params: DumbbellParams, attitude: AttitudeForm = AttitudeForm.ROTATION_MATRIX):
    """f(t, y) of eqs. (37)–(40) with the attitude as R (Ṙ = RΩ̂) or as a quaternion (q̇ = ½ q ⊗ [0, Ω])."""
    J, J_inv, m = params.inertia, params.inertia_inverse, params.mass
    n_att = 9 if attitude == AttitudeForm.ROTATION_MATRIX else 4

    def f(_t, y):
        att, x, omega, v = y[:n_att], y[n_att:n_att + 3], y[n_att + 3:n_att + 6], y[n_att + 6:]
        if attitude == AttitudeForm.ROTATION_MATRIX:
            rotation = att.reshape(3, 3)
            d_att = (rotation @ hat(omega)).ravel()
        else:
            rotation = quaternion_to_matrix_unnormalised(att)
            w, u = att[0], att[1:]
            d_att = 0.5 * np.concatenate([[-(u @ omega)], w * omega + cross(u, omega)])
        load = loads(params, rotation, x)
        omega_dot = J_inv @ (cross(J @ omega, omega) + load.moment)
        return np.concatenate([d_att, v, omega_dot, -load.gradient / m])

    return f


def simulate_rk45(params: DumbbellParams, initial: RigidBodyState, duration: float, rtol: float,
                  attitude: AttitudeForm = AttitudeForm.ROTATION_MATRIX, atol: float | None = None,
                  method: str = "RK45") -> DumbbellTrajectory:
    """scipy's ``method`` on eqs. (37)–(40), atol = rtol unless given, sampled at its own accepted steps."""
    matrix_form = attitude == AttitudeForm.ROTATION_MATRIX
    att0 = initial.rotation.ravel() if matrix_form else matrix_to_quaternion(initial.rotation)
    y0 = np.concatenate([att0, initial.position, initial.omega, initial.velocity])
    solution = solve_ivp(continuous_dynamics(params, attitude), (0.0, duration), y0, method=method,
                         rtol=rtol, atol=rtol if atol is None else atol)
    n_att = att0.size
    states, energies = [], np.empty(solution.t.size)
    for k, y in enumerate(solution.y.T):
        rotation = (y[:9].reshape(3, 3) if attitude == AttitudeForm.ROTATION_MATRIX
                    else quaternion_to_matrix_unnormalised(y[:4]))
        state = RigidBodyState(rotation, y[n_att:n_att + 3], y[n_att + 3:n_att + 6], y[n_att + 6:])
        states.append(state)
        energies[k] = energy(params, state, loads(params, rotation, state.position).potential)
    return _trajectory(params, solution.t, states, energies)


def default_initial_state(params: DumbbellParams, orbit_radius: float = 4.0) -> RigidBodyState:
    """A near-circular orbit of radius r0 in the x–y plane combined with a tumbling rotation.

    The mass centre starts at r0 e1 moving along e2 at the speed that balances the radial pull on the
    dumbbell in its initial attitude (v² = r0 |∂U/∂x·e1|/m; the rod makes the pull differ from μm/r0²).
    The rod starts 30° out of the radial direction and tilted 20° out of the orbit plane, with
    Ω0 = [0.05, 0.1, 0.4] rad/T (about three times the mean motion about the orbit normal, plus a wobble).
    With r0 = 4 rod lengths the radius stays within about ±3 % (near-circular) while the attitude and the
    orbit still exchange energy and angular momentum.
    The seed text does not state the article's values; these are this package's choice.
    """
    rotation = rotation_about(np.array([0.0, 0.0, 1.0]), np.pi / 6) @ rotation_about(np.array([0.0, 1.0, 0.0]),
                                                                                        np.deg2rad(20.0))
    position = np.array([orbit_radius, 0.0, 0.0])
    radial_pull = loads(params, rotation, position).gradient[0]
    return RigidBodyState(rotation, position, np.array([0.05, 0.1, 0.4]),
                          np.array([0.0, np.sqrt(orbit_radius * radial_pull / params.mass), 0.0]))
