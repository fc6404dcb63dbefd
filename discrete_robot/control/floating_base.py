"""Computed torque on the free-floating space robot: joint torques that give chosen joints chosen accelerations.

The robot's equations M(q) u̇ + h(q, u) = Q(τ, loads) (quasi-velocities u = [V0, ω0, joint rates];
discrete_robot.space.recursive) have no base actuation: a torque at a joint accelerates the base as well.
For the controlled joints c with the accelerations u̇_c given, and the other joints f driven by given torques
τ_f, the unknowns are the base's u̇_b, the free joints' u̇_f and the controlled torques τ_c; they solve the
square linear system

    M[:, b] u̇_b + M[:, f] u̇_f − S_c τ_c = Q(τ with τ_c = 0) − h − M[:, c] u̇_c,

S_c the columns of the controlled joints. The torques are internal forces: the base reacts, and the system's
momenta change only by the external loads' impulse (dP/dt = ΣF, dL/dt = Σ(x − c) × F + M; Papadopoulos &
Dubowsky 1991; the paper's eqs. 19-53 integrate them).

The computed-torque law itself (as discrete_robot.control.computed_torque): u̇_c = u̇_d + k_d (u_d − u) + k_p (q_d − q)
on the reported joint positions q (for a spherical joint its successive rotation angles, whose rates equal the
joint rates u at zero angles only: there the law is exact, elsewhere it still converges at rest).
"""

from collections.abc import Sequence

import numpy as np

from discrete_robot.control.trajectory import Reference
from discrete_robot.space.recursive import equation_terms
from discrete_robot.space.robot import SpaceRobot
from discrete_robot.space.state import SpaceRobotState

#: the base's six quasi-velocities come first in u
BASE = 6


def controlled_torques(robot: SpaceRobot, state: SpaceRobotState, loads, torques: np.ndarray, controlled: np.ndarray,
                       accelerations: np.ndarray) -> np.ndarray:
    """Joint torques (dof,): ``torques`` for the free joints, and for the joints ``controlled`` (indices into
    the dof) those that give them ``accelerations`` (rad/s²) under ``loads`` (N m)."""
    given = np.array(torques, dtype=float)
    given[controlled] = 0.0
    terms = equation_terms(robot, state, loads, given)
    mass, n = terms.mass_matrix, robot.dof
    free = np.setdiff1d(np.arange(n), controlled)
    system = np.zeros((BASE + n, BASE + n))
    system[:, :BASE] = mass[:, :BASE]
    system[:, BASE:BASE + free.size] = mass[:, BASE + free]
    system[BASE + controlled, BASE + free.size + np.arange(controlled.size)] = -1.0
    rhs = terms.generalized_forces - terms.bias - mass[:, BASE + controlled] @ accelerations
    given[controlled] = np.linalg.solve(system, rhs)[BASE + free.size:]
    return given


def arm_torques(robot: SpaceRobot, state: SpaceRobotState, loads, commanded: np.ndarray, joint_positions: np.ndarray,
                references: Sequence[tuple[np.ndarray, Reference]], kp: float, kd: float) -> np.ndarray:
    """Joint torques (dof,) for arms that track references: for each (joint indices, desired state) in
    ``references`` the computed-torque law u̇_c = u̇_d + k_d (u_d − u) + k_p (q_d − q) (``kp`` 1/s², ``kd`` 1/s) on
    the reported ``joint_positions`` and the state's joint rates, solved on the floating base
    (:func:`controlled_torques`); ``commanded`` on the other joints."""
    controlled = [index for index, _ in references]
    accelerations = [desired.qdd + kd * (desired.qd - state.joint_rates[index])
                     + kp * (desired.q - joint_positions[index]) for index, desired in references]
    return controlled_torques(robot, state, loads, commanded, np.concatenate(controlled),
                              np.concatenate(accelerations))
