"""The second, independent formulation: Newton–Euler equations in generalised coordinates.

Each body's Newton and Euler equations, in the world frame and at its CoM, stacked and multiplied by
the transposed global Jacobian (Schwarz & co., "Mechatronic Systems Modelling and Simulation",
eqs. (6.19)–(6.24)):

    M = Jᵀ diag(m_1 E, ..., m_k E, I_1, ..., I_k) J,    k-bias = Jᵀ k,    Q = Jᵀ pᵉ,

so the joint reaction forces drop out. J stacks, for every body, the world-frame Jacobians of its CoM
velocity and of its angular velocity with respect to the same quasi-velocities u = [V0, ω0, joint rates]
as :mod:`.recursive`, but built geometrically (a rotation axis s through a point o moves the CoM p at
s × (p − o), a sliding axis s moves it at s) rather than by the recursions.
k = [m a⁰; I α⁰ + ω × I ω] with the velocity-product
accelerations a⁰ = J̇u, α⁰ from differentiating those columns (ṡ = ω_carrier × s). Only the poses
(forward kinematics) are shared with the recursive formulation.
"""

from dataclasses import dataclass

import numpy as np

from discrete_robot.geometry3d import hat
from discrete_robot.space.kinematics import body_poses
from discrete_robot.space.loads import resolve_loads, validate_joint_torques, validate_loads
from discrete_robot.space.recursive import EquationTerms, solve_mass_matrix
from discrete_robot.space.robot import JointKind, SpaceRobot
from discrete_robot.space.state import SpaceRobotState, validate_state


@dataclass(frozen=True, eq=False)
class _Axis:
    """One column of the Jacobian: rotation (or, if ``sliding``, translation) axis (world), the body whose frame
    origin is its point, the body whose motion carries the axis."""

    column: int
    body: int
    axis: np.ndarray
    carrier: int
    sliding: bool = False


def _joint_axes(robot: SpaceRobot, poses) -> list[_Axis]:
    """World axis of every joint DOF; the universal joint's first axis rides on the parent."""
    axes = []
    for b, link in enumerate(robot.links, start=1):
        start = 6 + link.rates.start
        if link.kind is JointKind.PRISMATIC:
            axes.append(_Axis(start, b, poses.rotations[b] @ link.axes[0], b, sliding=True))
            continue
        if link.kind is JointKind.SPHERICAL:
            world = [poses.rotations[b][:, k] for k in range(3)]
            carriers = [b, b, b]
        elif link.kind is JointKind.REVOLUTE:
            world, carriers = [poses.rotations[b] @ link.axes[0]], [b]
        else:
            world = [poses.rotations[link.parent] @ link.fixed_rotation @ link.axes[0],
                     poses.rotations[b] @ link.axes[1]]
            carriers = [link.parent, b]
        axes += [_Axis(start + k, b, s, c) for k, (s, c) in enumerate(zip(world, carriers, strict=True))]
    return axes


def body_jacobians(robot: SpaceRobot, state: SpaceRobotState, poses=None) -> tuple[np.ndarray, np.ndarray]:
    """World-frame Jacobians J_v (N+1, 3, 6+dof) of the CoM velocities and J_ω of the angular velocities."""
    poses = body_poses(robot, state) if poses is None else poses
    n, size = robot.body_count, 6 + robot.dof
    Jv, Jw = np.zeros((n, 3, size)), np.zeros((n, 3, size))
    base_rotation, base_com = poses.rotations[0], poses.com_positions[0]
    axes = _joint_axes(robot, poses)
    for b in range(n):
        arm = poses.com_positions[b] - base_com
        Jv[b, :, 0:3] = base_rotation
        Jv[b, :, 3:6] = -hat(arm) @ base_rotation
        Jw[b, :, 3:6] = base_rotation
        for axis in axes:
            if axis.body in robot.ancestors[b] and axis.sliding:
                Jv[b, :, axis.column] = axis.axis
            elif axis.body in robot.ancestors[b]:
                Jw[b, :, axis.column] = axis.axis
                Jv[b, :, axis.column] = np.cross(axis.axis, poses.com_positions[b] - poses.frame_origins[axis.body])
    return Jv, Jw


def _velocity_product_accelerations(robot, state, poses, Jv, Jw) -> tuple[np.ndarray, np.ndarray]:
    """J̇_v u and J̇_ω u of every body (world frame), from ṡ = ω_carrier × s and ḋ = v_b − v_o."""
    u = state.quasi_velocities
    v = Jv @ u
    w = Jw @ u
    n = robot.body_count
    linear, angular = np.zeros((n, 3)), np.zeros((n, 3))
    base_omega = w[0]
    axes = _joint_axes(robot, poses)
    for b in range(n):
        linear[b] = np.cross(base_omega, poses.rotations[0] @ state.base_velocity)
        linear[b] += np.cross(base_omega, v[b] - v[0])
        for axis in axes:
            if axis.body not in robot.ancestors[b]:
                continue
            rate = u[axis.column]
            axis_rate = np.cross(w[axis.carrier], axis.axis)
            if axis.sliding:
                linear[b] += rate * axis_rate
                continue
            origin = poses.frame_origins[axis.body]
            origin_velocity = v[axis.body] + np.cross(w[axis.body], origin - poses.com_positions[axis.body])
            linear[b] += rate * (np.cross(axis_rate, poses.com_positions[b] - origin)
                                 + np.cross(axis.axis, v[b] - origin_velocity))
            angular[b] += rate * axis_rate
    return linear, angular


def equation_terms(robot: SpaceRobot, state: SpaceRobotState, loads=(), joint_torques=None) -> EquationTerms:
    """M = Jᵀ diag(m, I) J, h = Jᵀ k and Q = Jᵀ pᵉ + joint torques, in the quasi-velocities u."""
    validate_state(robot, state)
    loads = validate_loads(robot, loads)
    torques = validate_joint_torques(robot, joint_torques)
    poses = body_poses(robot, state)
    Jv, Jw = body_jacobians(robot, state, poses)
    u = state.quasi_velocities
    linear_bias, angular_bias = _velocity_product_accelerations(robot, state, poses, Jv, Jw)
    size = 6 + robot.dof
    M, bias, forces = np.zeros((size, size)), np.zeros(size), np.zeros(size)
    for b in range(robot.body_count):
        m = robot.masses[b]
        inertia = poses.rotations[b] @ robot.inertias[b] @ poses.rotations[b].T
        omega = Jw[b] @ u
        # only the base's and the body's ancestors' columns of J are nonzero; summing over them alone keeps
        # this baseline O(Σ depth²) like the recursive algorithm instead of O(bodies · n²)
        columns = np.concatenate([np.arange(6)] + [6 + np.arange(robot.links[a - 1].rates.start,
                                                                  robot.links[a - 1].rates.stop)
                                                   for a in robot.ancestors[b]])
        jv, jw = Jv[b][:, columns], Jw[b][:, columns]
        M[np.ix_(columns, columns)] += m * jv.T @ jv + jw.T @ inertia @ jw
        gyroscopic = inertia @ angular_bias[b] + np.cross(omega, inertia @ omega)
        bias += Jv[b].T @ (m * linear_bias[b]) + Jw[b].T @ gyroscopic
    world = resolve_loads(robot, poses, loads)
    for b, force, point, moment in zip(world.bodies, world.forces, world.points, world.moments, strict=True):
        point_jacobian = Jv[b] - hat(point - poses.com_positions[b]) @ Jw[b]
        forces += point_jacobian.T @ force + Jw[b].T @ moment
    forces[6:] += torques
    return EquationTerms(M, bias, forces)


def forward_dynamics(robot: SpaceRobot, state: SpaceRobotState, loads=(), joint_torques=None) -> np.ndarray:
    """u̇ from M u̇ = Q − h of the Newton–Euler formulation (same meaning as :func:`.recursive.forward_dynamics`)."""
    terms = equation_terms(robot, state, loads, joint_torques)
    return solve_mass_matrix(robot, terms.mass_matrix, terms.generalized_forces - terms.bias)
