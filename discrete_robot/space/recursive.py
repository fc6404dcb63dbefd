"""Equations of motion of the multi-arm space robot: Lagrange's equations in quasi-coordinates.

The paper's equations (19)–(21), with K the kinetic energy (18) written in body-frame velocities:

- (19) (d/dt + [ω0]) ∂K/∂V0 = F0                       total force, base frame
- (20) (d/dt + [ω0]) ∂K/∂ω0 + [V0] ∂K/∂V0 = M0           total moment about the base CoM, base frame
- (21) (d/dt + [ω_i]) ∂K/∂ω_i + E_i = M_i                moment about joint i of the loads on the
                                                        links outboard of it, link i frame, plus
                                                        the joint torque

K is never formed: the momenta ∂K/∂w = Σ_b ∂V_b/∂w m_b V_b + ∂Ω_b/∂w I_b Ω_b (29), (33), (41) use the
recursive partial derivatives of :mod:`.kinematics`, and E_i comes from (47)–(53). Because every
∂K/∂w is linear in the velocities, d/dt ∂K/∂w = M_w ẇ + Σ_b (Ẏ_b m V_b + Y_b m V̇_b⁰ + Ẋ_b I Ω_b + X_b I Ω̇_b⁰)
with M_w = Σ_b Y_b m Y_bᵀ + X_b I X_bᵀ (the mass matrix in quasi-velocities) and V̇⁰, Ω̇⁰ the
accelerations at ẇ = 0. Joints with fewer than 3 DOF have ω_b = S_b(q) u_b; equations (21) hold for the
unconstrained system along every motion, so the constrained ones are their projection onto the
admissible virtual rotations: Gᵀ [(19); (20); (21)] with G = blockdiag(I₆, S_1, ..., S_N), w = G u. The
joint's constraint moment is orthogonal to S_b and drops out.

Result, in u = [V0, ω0, joint rates]: M(q) u̇ + h(q, u) = Q. Forward dynamics solves it (block
elimination per arm: arms couple only through the base, eq. (39)); inverse dynamics evaluates the
left-hand side recursively from given accelerations without forming M.
"""

from dataclasses import dataclass

import numpy as np
from scipy.linalg import cho_factor, cho_solve

from discrete_robot.errors import ModelError
from discrete_robot.geometry3d import cross3
from discrete_robot.space.kinematics import (
    Partials,
    Poses,
    Velocities,
    body_accelerations,
    body_poses,
    body_velocities,
    joint_e_terms,
    partial_derivative_rates,
    partial_derivatives,
    w_rows,
    w_size,
)
from discrete_robot.space.loads import WorldLoads, resolve_loads, validate_joint_torques, validate_loads
from discrete_robot.space.robot import SpaceRobot
from discrete_robot.space.state import SpaceRobotState, validate_state


@dataclass(frozen=True, eq=False)
class EquationTerms:
    """M(q) u̇ + h(q, u) = Q in the quasi-velocities u = [V0, ω0, joint rates]."""

    mass_matrix: np.ndarray
    bias: np.ndarray
    generalized_forces: np.ndarray


def _joint_blocks(robot: SpaceRobot, poses: Poses):
    """(rows of w, columns of u, S_b or None for S = I) of every link: the blocks of G (w = G u)."""
    for b, link in enumerate(robot.links, start=1):
        columns = slice(6 + link.rates.start, 6 + link.rates.stop)
        yield w_rows(b), columns, None if link.ndof == 3 else poses.subspaces[b]


def project_matrix(robot: SpaceRobot, poses: Poses, matrix_w: np.ndarray) -> np.ndarray:
    """Gᵀ M_w G with G = blockdiag(I₆, S_1, ..., S_N), block by block.

    G is never formed: a dense product of the full (6 + 3N)-square matrices would cost O(N³) and, above
    BLAS's threading threshold, spin several cores for what is a relabelling when every joint is spherical.
    """
    size = 6 + robot.dof
    right = np.empty((matrix_w.shape[0], size))
    right[:, :6] = matrix_w[:, :6]
    for rows, columns, subspace in _joint_blocks(robot, poses):
        right[:, columns] = matrix_w[:, rows] if subspace is None else matrix_w[:, rows] @ subspace
    return project_vector(robot, poses, right)


def project_vector(robot: SpaceRobot, poses: Poses, vector_w: np.ndarray) -> np.ndarray:
    """Gᵀ v (also row-wise for a matrix v): the generalised forces of the joints' own DOF."""
    projected = np.empty((6 + robot.dof,) + vector_w.shape[1:])
    projected[:6] = vector_w[:6]
    for rows, columns, subspace in _joint_blocks(robot, poses):
        projected[columns] = vector_w[rows] if subspace is None else subspace.T @ vector_w[rows]
    return projected


def lift_vector(robot: SpaceRobot, poses: Poses, vector_u: np.ndarray) -> np.ndarray:
    """G u: the relative angular velocities (or their rates) of all joints from the joint rates."""
    lifted = np.zeros(w_size(robot))
    lifted[:6] = vector_u[:6]
    for rows, columns, subspace in _joint_blocks(robot, poses):
        lifted[rows] = vector_u[columns] if subspace is None else subspace @ vector_u[columns]
    return lifted


def quasi_mass_matrix(robot: SpaceRobot, partials: Partials) -> np.ndarray:
    """M_w = Σ_b ∂V_b/∂w m_b (∂V_b/∂w)ᵀ + ∂Ω_b/∂w I_b (∂Ω_b/∂w)ᵀ: ∂K/∂w = M_w w."""
    M = np.zeros((w_size(robot), w_size(robot)))
    for b in range(robot.body_count):
        X, Y = partials.d_omega[b], partials.d_velocity[b]
        rows = partials.rows[b]
        M[np.ix_(rows, rows)] += robot.masses[b] * (Y @ Y.T) + X @ robot.inertias[b] @ X.T
    return M


def generalized_momentum(robot: SpaceRobot, partials: Partials, velocities: Velocities) -> np.ndarray:
    """∂K/∂w by eqs. (29), (33), (41): Σ_b ∂V_b/∂w m_b V_b + ∂Ω_b/∂w I_b Ω_b."""
    momentum = np.zeros(w_size(robot))
    for b in range(robot.body_count):
        momentum[partials.rows[b]] += (partials.d_velocity[b] @ (robot.masses[b] * velocities.linear[b])
                                       + partials.d_omega[b] @ (robot.inertias[b] @ velocities.angular[b]))
    return momentum


def momentum_rate(robot: SpaceRobot, partials: Partials, rates: tuple[list, list], velocities: Velocities,
                  angular_rates: np.ndarray, linear_rates: np.ndarray) -> np.ndarray:
    """d/dt ∂K/∂w = Σ_b Ẏ_b m V_b + Y_b m V̇_b + Ẋ_b I Ω_b + X_b I Ω̇_b for the given body accelerations."""
    rates_omega, rates_velocity = rates
    total = np.zeros(w_size(robot))
    for b in range(robot.body_count):
        m, inertia = robot.masses[b], robot.inertias[b]
        total[partials.rows[b]] += (rates_velocity[b] @ (m * velocities.linear[b])
                                    + partials.d_velocity[b] @ (m * linear_rates[b])
                                    + rates_omega[b] @ (inertia @ velocities.angular[b])
                                    + partials.d_omega[b] @ (inertia @ angular_rates[b]))
    return total


def transport_terms(robot: SpaceRobot, velocities: Velocities, momentum: np.ndarray) -> np.ndarray:
    """The terms of (19)–(21) besides d/dt and E: [ω0] p_V0; [ω0] p_ω0 + [V0] p_V0; [ω_i] p_ω_i."""
    terms = np.empty(w_size(robot))
    terms[0:3] = cross3(velocities.angular[0], momentum[0:3])
    terms[3:6] = cross3(velocities.angular[0], momentum[3:6]) + cross3(velocities.linear[0], momentum[0:3])
    for b in range(1, robot.body_count):
        rows = w_rows(b)
        terms[rows] = cross3(velocities.relative[b], momentum[rows])
    return terms


def load_generalized_forces(robot: SpaceRobot, poses: Poses, loads: WorldLoads) -> np.ndarray:
    """Right-hand sides of (19)–(21) from external loads, in w: F0, M0 (base frame) and each M_i (link frame).

    M_i collects the moments about joint i of the loads on joint i's link and every link outboard of it.
    """
    forces = np.zeros(w_size(robot))
    if len(loads.bodies) == 0:
        return forces
    base_to_world = poses.rotations[0]
    forces[0:3] = base_to_world.T @ loads.total_force()
    forces[3:6] = base_to_world.T @ loads.moment_about(poses.com_positions[0])
    for body, force, point, moment in zip(loads.bodies, loads.forces, loads.points, loads.moments, strict=True):
        for i in robot.ancestors[body]:
            forces[w_rows(i)] += poses.rotations[i].T @ (cross3(point - poses.frame_origins[i], force) + moment)
    return forces


@dataclass(frozen=True, eq=False)
class ConfigurationTerms:
    """What depends on the configuration only: poses, partial derivatives and M = Gᵀ M_w G."""

    poses: Poses
    partials: Partials
    mass_matrix: np.ndarray


def configuration_terms(robot: SpaceRobot, state: SpaceRobotState) -> ConfigurationTerms:
    """Poses (25), partial derivatives (30)–(45) and the mass matrix in u at the state's configuration."""
    poses = body_poses(robot, state)
    partials = partial_derivatives(robot, poses)
    return ConfigurationTerms(poses, partials, project_matrix(robot, poses, quasi_mass_matrix(robot, partials)))


def bias_forces(robot: SpaceRobot, state: SpaceRobotState, config: ConfigurationTerms) -> np.ndarray:
    """h = Gᵀ × the left-hand sides of (19)–(21) at u̇ = 0 (velocity products, E terms)."""
    poses, partials = config.poses, config.partials
    velocities = body_velocities(robot, poses, state)
    momentum = generalized_momentum(robot, partials, velocities)
    rates = partial_derivative_rates(robot, poses, partials, velocities)
    angular_rates, linear_rates = body_accelerations(robot, poses, velocities, state, None)
    bias_w = (momentum_rate(robot, partials, rates, velocities, angular_rates, linear_rates)
              + transport_terms(robot, velocities, momentum) + joint_e_terms(robot, poses, velocities))
    return project_vector(robot, poses, bias_w)


def applied_forces(robot: SpaceRobot, config: ConfigurationTerms, loads, joint_torques: np.ndarray) -> np.ndarray:
    """Q = Gᵀ [F0; M0; M_i] of the external loads plus the joint torques (validated inputs)."""
    world = resolve_loads(robot, config.poses, loads)
    forces = project_vector(robot, config.poses, load_generalized_forces(robot, config.poses, world))
    forces[6:] += joint_torques
    return forces


def equation_terms(robot: SpaceRobot, state: SpaceRobotState, loads=(), joint_torques=None) -> EquationTerms:
    """M, h and Q of M u̇ + h = Q at ``state`` under external ``loads`` and ``joint_torques`` (dof,)."""
    validate_state(robot, state)
    loads = validate_loads(robot, loads)
    torques = validate_joint_torques(robot, joint_torques)
    config = configuration_terms(robot, state)
    return EquationTerms(config.mass_matrix, bias_forces(robot, state, config),
                         applied_forces(robot, config, loads, torques))


def forward_dynamics(robot: SpaceRobot, state: SpaceRobotState, loads=(), joint_torques=None) -> np.ndarray:
    """u̇ = [V̇0, ω̇0, joint accelerations] (rates of the body-frame components; m/s², rad/s²).

    V̇0 is the rate of the base-frame components of the base CoM velocity; the CoM's inertial
    acceleration is R0 (V̇0 + ω0 × V0).
    """
    terms = equation_terms(robot, state, loads, joint_torques)
    return solve_by_arms(robot, terms.mass_matrix, terms.generalized_forces - terms.bias)


def arm_dof_indices(robot: SpaceRobot) -> list[np.ndarray]:
    """Indices into u of each arm's joint rates (arms couple only through the base, eq. (39))."""
    return [np.concatenate([6 + np.arange(robot.links[b - 1].rates.start, robot.links[b - 1].rates.stop)
                            for b in arm]) for arm in robot.arms]


def solve_by_arms(robot: SpaceRobot, mass_matrix: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """M⁻¹ rhs by block elimination: each arm's block is factored alone, then the 6x6 base Schur complement.

    M has the arrow structure [[M_bb, M_b1, ..., M_bn], [M_1b, M_11, 0, ...], ...] because no kinematic
    path joins two arms, so the cost is Σ_arms n_arm³ instead of (6 + dof)³: linear in the number of arms.
    """
    base_rows = slice(0, 6)
    schur = mass_matrix[base_rows, base_rows].copy()
    reduced = rhs[base_rows].copy()
    eliminated = []
    for rows in arm_dof_indices(robot):
        block = _cholesky(robot, mass_matrix[np.ix_(rows, rows)])
        coupling = mass_matrix[np.ix_(rows, np.arange(6))]
        solved = cho_solve(block, np.column_stack([coupling, rhs[rows]]))
        schur -= coupling.T @ solved[:, :6]
        reduced -= coupling.T @ solved[:, 6]
        eliminated.append((rows, solved))
    result = np.empty_like(rhs)
    result[base_rows] = cho_solve(_cholesky(robot, schur), reduced)
    for rows, solved in eliminated:
        result[rows] = solved[:, 6] - solved[:, :6] @ result[base_rows]
    return result


def _cholesky(robot: SpaceRobot, matrix: np.ndarray):
    try:
        return cho_factor(matrix)
    except np.linalg.LinAlgError:
        raise ModelError(f"robot '{robot.name}': the mass matrix is not positive definite "
                         f"(a body has no inertia along a direction its joint moves it)") from None


def solve_mass_matrix(robot: SpaceRobot, mass_matrix: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """M⁻¹ rhs by one dense Cholesky factorisation; ModelError if M is not positive definite."""
    return cho_solve(_cholesky(robot, mass_matrix), rhs)


def inverse_dynamics(robot: SpaceRobot, state: SpaceRobotState, accelerations: np.ndarray, loads=()) -> np.ndarray:
    """Generalised forces [F0, M0, joint torques] that, with ``loads``, give ``accelerations`` (= u̇).

    Evaluates (19)–(21) recursively from the accelerations (no mass matrix). For a free-floating
    robot the first six (a base wrench, base frame) are zero whenever the accelerations are feasible.
    """
    validate_state(robot, state)
    loads = validate_loads(robot, loads)
    accelerations = np.asarray(accelerations, dtype=float)
    poses = body_poses(robot, state)
    partials = partial_derivatives(robot, poses)
    velocities = body_velocities(robot, poses, state)
    w_rate = lift_vector(robot, poses, accelerations) + _subspace_rates(robot, poses, state)
    angular_rates, linear_rates = body_accelerations(robot, poses, velocities, state, w_rate)
    momentum = generalized_momentum(robot, partials, velocities)
    rates = partial_derivative_rates(robot, poses, partials, velocities)
    lhs = (momentum_rate(robot, partials, rates, velocities, angular_rates, linear_rates)
           + transport_terms(robot, velocities, momentum) + joint_e_terms(robot, poses, velocities))
    return project_vector(robot, poses, lhs - load_generalized_forces(robot, poses, resolve_loads(robot, poses, loads)))


def _subspace_rates(robot: SpaceRobot, poses: Poses, state: SpaceRobotState) -> np.ndarray:
    """Ṡ_b u_b of every link in w (nonzero for universal joints only)."""
    rates = np.zeros(w_size(robot))
    for b, link in enumerate(robot.links, start=1):
        rates[w_rows(b)] = robot.motion_subspace_rate(link, poses.joint_angles[b], state.joint_rates[link.rates])
    return rates


@dataclass(frozen=True, eq=False)
class MomentumReport:
    """Total linear momentum (kg m/s), angular momentum about the system CoM (kg m²/s), both world frame;
    system CoM (m, world) and kinetic energy (J)."""

    linear: np.ndarray
    angular: np.ndarray
    center_of_mass: np.ndarray
    kinetic_energy: float


def momentum_report(robot: SpaceRobot, state: SpaceRobotState) -> MomentumReport:
    """Momenta, CoM and kinetic energy (18) from the body velocities of the recursive kinematics."""
    poses = body_poses(robot, state)
    velocities = body_velocities(robot, poses, state)
    masses = robot.masses
    center = masses @ poses.com_positions / masses.sum()
    linear_world = np.einsum("bij,bj->bi", poses.rotations, velocities.linear) * masses[:, None]
    spin = np.einsum("bij,bjk,bk->bi", poses.rotations, robot.inertias, velocities.angular)
    angular = (np.cross(poses.com_positions - center, linear_world) + spin).sum(axis=0)
    energy = 0.5 * float(masses @ np.sum(velocities.linear ** 2, axis=1)
                         + np.einsum("bi,bij,bj->", velocities.angular, robot.inertias, velocities.angular))
    return MomentumReport(linear_world.sum(axis=0), angular, center, energy)
