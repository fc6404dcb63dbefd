"""Recursive kinematics of the multi-arm space robot and the recursive partial derivatives of the paper.

Notation of Khoshnood, Someeh & Nami ("A recursive algorithm ... Lagrange method in terms of
quasi-coordinates"), with a parent index instead of α − 1 so that any tree of links hanging from
the base (arms, and branches within an arm) is covered. For body b with parent p, A_b is the
parent → child rotation (columns: child axes in the parent frame), so the paper's
C_{α−1}^α = A_bᵀ and [C_{α−1}^α]ᵀ = A_b. [a] is the cross-product matrix (3), skew() here.

- (24) Ω_b = A_bᵀ Ω_p + ω_b                           (absolute angular velocity, body frame)
- (25) P_b = P_p + r_p + R_b                            (CoM positions, world)
- (27) V_b = A_bᵀ (V_p − [r_p] Ω_p) − [R_b] Ω_b          (CoM velocity, body frame)

Quasi-velocities of the unconstrained (all joints 3-DOF) system: w = [V0, ω0, ω_1, ..., ω_N],
3 rows each (rows 0:3 V0, 3:6 ω0, 6 + 3(b−1) : 6 + 3b the relative angular velocity of link b).
The partial derivatives use the paper's layout ∂y/∂x = (Jacobian of y in x)ᵀ, stacked over the
rows of w that body b depends on (the base and the joints on its path, eq. (39)–(40)):

- X_b = ∂Ω_b/∂w, Y_b = ∂V_b/∂w; (30), (32), (34)–(37), (42)–(45):
  inherited rows X_b = X_p A_b, Y_b = (Y_p + X_p [r_p]) A_b + X_b [R_b]; own rows X = I, Y = [R_b].
- B(b, i) = −(D_iᵀ)⁻¹ ∂Ω_b/∂ϑ_i and A(b, i) = −(D_iᵀ)⁻¹ ∂V_b/∂ϑ_i, (48)–(53), with the same recursion
  and the seeds B(i, i) = [A_iᵀ Ω_p] (50), A(i, i) = [A_iᵀ (V_p − [r_p] Ω_p)] + B(i, i) [R_i] (52).
  The text of (52) lost the factor C_{i−1}^i = A_iᵀ inside the first bracket; it follows from (27)
  exactly as (50) follows from (24), and the Newton–Euler cross-check fails without it. Likewise
  (51) reads C_{i−1}^α where the recursion needs C_{α−1}^α. Neither needs D_i: the Euler-angle
  matrix cancels, which is what lets the joints be quaternions.

Time derivatives along the motion use Ċ = −[ω]C (13), i.e. Ȧ_b = A_b [ω_b].
"""

from dataclasses import dataclass

import numpy as np

from discrete_robot.geometry3d import cross3, quaternion_to_matrix, skew
from discrete_robot.space.robot import JointKind, SpaceRobot
from discrete_robot.space.state import SpaceRobotState

_EYE = np.eye(3)



@dataclass(frozen=True, eq=False)
class Poses:
    """Configuration-dependent quantities of every body (index 0 = base)."""

    relative: np.ndarray        # (N+1, 3, 3) A_b, parent -> child (the base: base -> world)
    rotations: np.ndarray       # (N+1, 3, 3) body -> world
    com_positions: np.ndarray   # (N+1, 3) CoM, world, m
    frame_origins: np.ndarray   # (N+1, 3) body frame origin (a link's joint), world, m
    subspaces: list             # S_b (3 x ndof) per body, None for the base
    joint_angles: list          # angles of each link's joint (empty for spherical), None for the base


@dataclass(frozen=True, eq=False)
class Partials:
    """X_b = ∂Ω_b/∂w and Y_b = ∂V_b/∂w of every body, stacked over ``rows[b]`` (indices into w)."""

    rows: list
    d_omega: list
    d_velocity: list


@dataclass(frozen=True, eq=False)
class Velocities:
    """Ω_b and V_b in body frames (rad/s, m/s) and each link's relative angular velocity ω_b (link frame)."""

    angular: np.ndarray
    linear: np.ndarray
    relative: np.ndarray


def w_size(robot: SpaceRobot) -> int:
    """Length of w = [V0, ω0, ω_1..ω_N]."""
    return 6 + 3 * len(robot.links)


def w_rows(body: int) -> np.ndarray:
    """Rows of w that belong to link ``body``'s relative angular velocity."""
    return np.arange(6 + 3 * (body - 1), 6 + 3 * body)


def body_poses(robot: SpaceRobot, state: SpaceRobotState) -> Poses:
    """World attitude and CoM position of every body, eq. (25); the base CoM is ``state.base_position``."""
    n = robot.body_count
    relative = np.empty((n, 3, 3))
    rotations = np.empty((n, 3, 3))
    com = np.empty((n, 3))
    origins = np.empty((n, 3))
    relative[0] = rotations[0] = state.base_rotation()
    com[0] = state.base_position
    origins[0] = com[0] - rotations[0] @ robot.base_com
    subspaces, angles_of = [None], [None]
    for b, link in enumerate(robot.links, start=1):
        angles = state.joint_angles[link.angles]
        quaternion = (quaternion_to_matrix(state.joint_orientations[link.quaternion_index])
                      if link.kind is JointKind.SPHERICAL else None)
        relative[b] = robot.joint_rotation(link, angles, quaternion)
        p = link.parent
        rotations[b] = rotations[p] @ relative[b]
        origins[b] = com[p] + rotations[p] @ link.offset
        com[b] = origins[b] + rotations[b] @ link.com
        subspaces.append(robot.motion_subspace(link, angles))
        angles_of.append(angles)
    return Poses(relative, rotations, com, origins, subspaces, angles_of)


def body_velocities(robot: SpaceRobot, poses: Poses, state: SpaceRobotState) -> Velocities:
    """Recursive kinematics (24) and (27) from the base quasi-velocities and the joint rates."""
    n = robot.body_count
    angular = np.empty((n, 3))
    linear = np.empty((n, 3))
    relative = np.zeros((n, 3))
    angular[0] = state.base_angular_velocity
    linear[0] = state.base_velocity
    for b, link in enumerate(robot.links, start=1):
        p, A = link.parent, poses.relative[b]
        relative[b] = poses.subspaces[b] @ state.joint_rates[link.rates]
        angular[b] = A.T @ angular[p] + relative[b]
        linear[b] = A.T @ (linear[p] + cross3(angular[p], link.offset)) + cross3(angular[b], link.com)
    return Velocities(angular, linear, relative)


def partial_derivatives(robot: SpaceRobot, poses: Poses) -> Partials:
    """∂Ω_b/∂w and ∂V_b/∂w for every body: eqs. (30), (32), (34)–(37), (42)–(45)."""
    rows = [np.arange(6)]
    d_omega = [np.vstack([np.zeros((3, 3)), _EYE])]
    d_velocity = [np.vstack([_EYE, np.zeros((3, 3))])]
    for b, link in enumerate(robot.links, start=1):
        p, A = link.parent, poses.relative[b]
        Rx = skew(link.com)
        inherited_omega = d_omega[p] @ A
        inherited_velocity = (d_velocity[p] + d_omega[p] @ skew(link.offset)) @ A + inherited_omega @ Rx
        rows.append(np.concatenate([rows[p], w_rows(b)]))
        d_omega.append(np.vstack([inherited_omega, _EYE]))
        d_velocity.append(np.vstack([inherited_velocity, Rx]))
    return Partials(rows, d_omega, d_velocity)


def partial_derivative_rates(robot: SpaceRobot, poses: Poses, partials: Partials,
                             velocities: Velocities) -> tuple[list, list]:
    """d/dt of X_b and Y_b along the motion (same stacking), from Ȧ_b = A_b [ω_b]; own rows are constant."""
    zero = np.zeros((3, 3))
    rates_omega = [np.zeros((6, 3))]
    rates_velocity = [np.zeros((6, 3))]
    for b, link in enumerate(robot.links, start=1):
        p, A = link.parent, poses.relative[b]
        A_rate = A @ skew(velocities.relative[b])
        rx = skew(link.offset)
        rate_omega = rates_omega[p] @ A + partials.d_omega[p] @ A_rate
        rate_velocity = ((rates_velocity[p] + rates_omega[p] @ rx) @ A
                         + (partials.d_velocity[p] + partials.d_omega[p] @ rx) @ A_rate
                         + rate_omega @ skew(link.com))
        rates_omega.append(np.vstack([rate_omega, zero]))
        rates_velocity.append(np.vstack([rate_velocity, zero]))
    return rates_omega, rates_velocity


def body_accelerations(robot: SpaceRobot, poses: Poses, velocities: Velocities, state: SpaceRobotState,
                       w_rate: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """Ω̇_b and V̇_b (body-frame components' rates) by differentiating (24) and (27) with Ċ = −[ω]C.

    ``w_rate`` is ẇ (base V̇0, ω̇0 and each link's ω̇_b); None means ẇ = 0 except the Ṡ(q) u part of
    universal joints, which gives the velocity-product ("bias") accelerations.
    """
    n = robot.body_count
    angular = np.empty((n, 3))
    linear = np.empty((n, 3))
    angular[0] = np.zeros(3) if w_rate is None else w_rate[3:6]
    linear[0] = np.zeros(3) if w_rate is None else w_rate[0:3]
    for b, link in enumerate(robot.links, start=1):
        p, A = link.parent, poses.relative[b]
        omega = velocities.relative[b]
        if w_rate is None:
            omega_rate = robot.motion_subspace_rate(link, poses.joint_angles[b], state.joint_rates[link.rates])
        else:
            omega_rate = w_rate[w_rows(b)]
        angular[b] = A.T @ angular[p] - cross3(omega, A.T @ velocities.angular[p]) + omega_rate
        carried = A.T @ (velocities.linear[p] + cross3(velocities.angular[p], link.offset))
        linear[b] = (A.T @ (linear[p] + cross3(angular[p], link.offset)) - cross3(omega, carried)
                     + cross3(angular[b], link.com))
    return angular, linear


def joint_e_terms(robot: SpaceRobot, poses: Poses, velocities: Velocities) -> np.ndarray:
    """E_i(j) of every link's joint, eqs. (47)–(53), scattered into the rows of w (base rows zero).

    E_i = Σ_{α ≥ i} A(α, i) m_α V_α + B(α, i) I_α Ω_α over the bodies outboard of joint i.
    """
    e_terms = np.zeros(w_size(robot))
    stacks_b = [np.zeros((0, 3))]
    stacks_a = [np.zeros((0, 3))]
    for b, link in enumerate(robot.links, start=1):
        p, A = link.parent, poses.relative[b]
        Rx, rx = skew(link.com), skew(link.offset)
        own_b = skew(A.T @ velocities.angular[p])                                                  # (50)
        own_a = skew(A.T @ (velocities.linear[p] - rx @ velocities.angular[p])) + own_b @ Rx        # (52)
        inherited_b = stacks_b[p] @ A                                                               # (51)
        inherited_a = (stacks_a[p] + stacks_b[p] @ rx) @ A + inherited_b @ Rx                       # (53)
        stacks_b.append(np.vstack([inherited_b, own_b]))
        stacks_a.append(np.vstack([inherited_a, own_a]))
        rows = np.concatenate([w_rows(a) for a in robot.ancestors[b]])
        e_terms[rows] += (stacks_a[b] @ (link.mass * velocities.linear[b])
                          + stacks_b[b] @ (link.inertia @ velocities.angular[b]))                   # (47)
    return e_terms
