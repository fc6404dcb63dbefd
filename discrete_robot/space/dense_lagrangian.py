"""A dense Lagrangian baseline: Lagrange's equations in generalised coordinates, Christoffel terms by
finite differences of the mass matrix. Used as the classical-method reference of the benchmarks.

Generalised coordinates local to the current state (so no Euler angle is ever needed): the base CoM
x0 (world), rotation vectors φ0 of the base and φ_s of every spherical joint about their current
attitudes (R = R* exp([φ])), and the angles of the 1-/2-DOF joints. The quasi-velocities are u = T(q) q̇
with V0 = R0(q)ᵀ ẋ0 and ω = J_r(φ) φ̇, so the kinetic energy is K = ½ q̇ᵀ M_q(q) q̇ with
M_q = Tᵀ M_u T and M_u = Jᵀ diag(m, I) J (:mod:`.newton_euler`). Lagrange's equations

    M_q q̈ + Σ_k (∂M_q/∂q_k q̇_k) q̇ − ½ [q̇ᵀ ∂M_q/∂q_k q̇]_k = Q_q

take ∂M_q/∂q_k by central differences: 2n + 1 mass matrices per call, O(n) times the cost of the
recursive algorithm, which never forms K or its partial derivatives. At q = q* (φ = 0), T = blockdiag(R0ᵀ,
I), u̇ = [R0ᵀ ẍ0 − ω0 × V0, φ̈, ...] because J̇_r(0) φ̇ = −½ φ̇ × φ̇ = 0.
"""

from dataclasses import replace

import numpy as np

from discrete_robot.geometry3d import hat, quaternion_exp, quaternion_multiply
from discrete_robot.model.lagrangian import velocity_product_forces
from discrete_robot.space.loads import validate_joint_torques, validate_loads
from discrete_robot.space.newton_euler import equation_terms as newton_euler_terms
from discrete_robot.space.recursive import solve_mass_matrix
from discrete_robot.space.robot import JointKind, SpaceRobot
from discrete_robot.space.state import SpaceRobotState, validate_state

STEP = 1e-5  # central-difference step in q (m or rad); balances truncation (h²) and round-off (1/h)


def _right_jacobian(phi: np.ndarray) -> np.ndarray:
    """J_r(φ) = I − (1 − cos θ)/θ² [φ] + (θ − sin θ)/θ³ [φ]², θ = |φ|: ω = J_r(φ) φ̇ for R = R* exp([φ])."""
    angle = float(np.linalg.norm(phi))
    phi_hat = hat(phi)
    if angle < 1e-4:
        return np.eye(3) - 0.5 * phi_hat + phi_hat @ phi_hat / 6.0
    return (np.eye(3) - (1.0 - np.cos(angle)) / angle ** 2 * phi_hat
            + (angle - np.sin(angle)) / angle ** 3 * phi_hat @ phi_hat)


def _rotation_blocks(robot: SpaceRobot) -> list[slice]:
    """Slices of q (and u) holding rotation vectors: the base attitude and each spherical joint."""
    blocks = [slice(3, 6)]
    blocks += [slice(6 + link.rates.start, 6 + link.rates.stop) for link in robot.links
               if link.kind is JointKind.SPHERICAL]
    return blocks


def _configuration(robot: SpaceRobot, reference: SpaceRobotState, q: np.ndarray) -> SpaceRobotState:
    """The configuration at local coordinates q (velocities irrelevant, left at the reference's)."""
    joint_quaternions = reference.joint_orientations.copy()
    angles = reference.joint_angles.copy()
    for link in robot.links:
        values = q[6 + link.rates.start:6 + link.rates.stop]
        if link.kind is JointKind.SPHERICAL:
            joint_quaternions[link.quaternion_index] = quaternion_multiply(joint_quaternions[link.quaternion_index],
                                                             quaternion_exp(values))
        else:
            angles[link.angles] = values
    return replace(reference, base_position=q[:3], joint_angles=angles, joint_orientations=joint_quaternions,
                   base_orientation=quaternion_multiply(reference.base_orientation, quaternion_exp(q[3:6])))


def _coordinate_mass_matrix(robot: SpaceRobot, reference: SpaceRobotState, q: np.ndarray) -> np.ndarray:
    """M_q(q) = T(q)ᵀ M_u T(q)."""
    state = _configuration(robot, reference, q)
    T = np.eye(6 + robot.dof)
    T[:3, :3] = state.base_rotation().T
    for block in _rotation_blocks(robot):
        T[block, block] = _right_jacobian(q[block])
    return T.T @ newton_euler_terms(robot, state).mass_matrix @ T


def forward_dynamics(robot: SpaceRobot, state: SpaceRobotState, loads=(), joint_torques=None) -> np.ndarray:
    """u̇ from Lagrange's equations in local generalised coordinates (same meaning as the other formulations)."""
    validate_state(robot, state)
    loads = validate_loads(robot, loads)
    torques = validate_joint_torques(robot, joint_torques)
    n = 6 + robot.dof
    q = np.zeros(n)
    q[:3] = state.base_position
    for link in robot.links:
        if link.kind is not JointKind.SPHERICAL:
            q[6 + link.rates.start:6 + link.rates.stop] = state.joint_angles[link.angles]
    base_rotation = state.base_rotation()
    q_rate = state.quasi_velocities.copy()
    q_rate[:3] = base_rotation @ state.base_velocity
    derivatives = np.empty((n, n, n))
    for k in range(n):
        shift = np.zeros(n)
        shift[k] = STEP
        derivatives[k] = (_coordinate_mass_matrix(robot, state, q + shift)
                          - _coordinate_mass_matrix(robot, state, q - shift)) / (2.0 * STEP)
    mass = _coordinate_mass_matrix(robot, state, q)
    coriolis = velocity_product_forces(derivatives, q_rate)
    forces = newton_euler_terms(robot, state, loads, torques).generalized_forces
    forces[:3] = base_rotation @ forces[:3]
    q_acceleration = solve_mass_matrix(robot, mass, forces - coriolis)
    accelerations = q_acceleration.copy()
    accelerations[:3] = base_rotation.T @ q_acceleration[:3] - np.cross(state.base_angular_velocity,
                                                                          state.base_velocity)
    return accelerations
