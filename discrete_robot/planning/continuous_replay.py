"""The continuous equations of motion, to judge discrete optimal controls by what they do to the real system.

An optimal-control transcription is only as good as its discretisation: its controls meet the terminal
conditions on its own discrete model exactly, and the question is how far from the target the same
controls take the continuous system. These functions integrate the continuous equations with DOP853 at
tolerances 1e-12 (far below the discretisation errors being measured), one step interval at a time so
that the control's kinks and jumps fall on interval ends.
"""

import numpy as np
from scipy.integrate import solve_ivp

from discrete_robot.model.lagrangian import LagrangianSystem
from discrete_robot.variational.spherical_pendulum import SphericalPendulumParams

TOLERANCE = 1e-12


def batch(system: LagrangianSystem, method: str, q: np.ndarray) -> np.ndarray:
    """``system.<method>`` at configurations q of shape (..., n): one call if the system is ``vectorized``
    (RigidBodySystem is), else one per configuration."""
    function = getattr(system, method)
    if system.vectorized:
        return np.asarray(function(q), dtype=float)
    flat = q.reshape(-1, q.shape[-1])
    values = np.array([np.asarray(function(x), dtype=float) for x in flat])
    return values.reshape(q.shape[:-1] + values.shape[1:])


def arm_acceleration(system: LagrangianSystem, q: np.ndarray, qd: np.ndarray, force: np.ndarray) -> np.ndarray:
    """q̈ = M⁻¹(τ − c − ∇V), c_r = Σ_ij (∂M_rj/∂q_i − ½ ∂M_ij/∂q_r) q̇_i q̇_j (rad/s² or m/s²); arrays (..., n)."""
    D = batch(system, "mass_matrix_derivatives", q)
    coriolis = np.einsum("...irj,...i,...j->...r", D, qd, qd) - 0.5 * np.einsum("...rij,...i,...j->...r", D, qd, qd)
    rhs = force - coriolis - batch(system, "potential_gradient", q)
    return np.linalg.solve(batch(system, "mass_matrix", q), rhs[..., None])[..., 0]


def replay_arm(system: LagrangianSystem, q0, qd0, h: float, forces: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(q, q̇) after the step-wise constant generalised forces ``forces`` (N, n), each held for h seconds."""
    n = system.dof
    state = np.concatenate([np.asarray(q0, dtype=float), np.asarray(qd0, dtype=float)])
    for force in np.asarray(forces, dtype=float):
        def f(_t, y, force=force):
            return np.concatenate([y[n:], arm_acceleration(system, y[:n], y[n:], force)])
        state = solve_ivp(f, (0.0, h), state, method="DOP853", rtol=TOLERANCE, atol=TOLERANCE).y[:, -1]
    return state[:n], state[n:]


def pendulum_rates(params: SphericalPendulumParams, q: np.ndarray, omega: np.ndarray, u: np.ndarray):
    """(q̇, ω̇) = (ω × q, g/l q × e3 + u⊥/(m l²)), u⊥ the part of the moment normal to q (N m)."""
    u_normal = u - (u @ q) / (q @ q) * q
    q_cross_e3 = np.array([q[1], -q[0], 0.0])
    return np.cross(omega, q), params.gravity / params.length * q_cross_e3 + u_normal / params.inertia


def replay_pendulum(params: SphericalPendulumParams, q0, omega0, h: float, node_controls: np.ndarray):
    """(q, ω) after the node moments u_k (N+1, 3), linear in time between nodes."""
    state = np.concatenate([np.asarray(q0, dtype=float), np.asarray(omega0, dtype=float)])
    node_controls = np.asarray(node_controls, dtype=float)
    for u0, u1 in zip(node_controls[:-1], node_controls[1:], strict=True):
        def f(t, y, u0=u0, u1=u1):
            return np.concatenate(pendulum_rates(params, y[:3], y[3:], u0 + (u1 - u0) * (t / h)))
        state = solve_ivp(f, (0.0, h), state, method="DOP853", rtol=TOLERANCE, atol=TOLERANCE).y[:, -1]
    return state[:3], state[3:]
