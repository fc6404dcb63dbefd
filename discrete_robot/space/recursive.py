"""Equations of motion of the multi-arm space robot: Lagrange's equations in quasi-coordinates.

M(q) u̇ + h(q, u) = Q in u = [V0, ω0, joint rates], by the paper's recursive Boltzmann–Hamel
equations (19)–(21) (Khoshnood, Someeh & Nami), evaluated by the compiled kernels of
:mod:`.kernels`, where the equations are written out. This module is their Python face:
validated inputs, the terms as arrays, forward and inverse dynamics and the momenta.
"""

from dataclasses import dataclass

import numpy as np

from discrete_robot.errors import ModelError
from discrete_robot.model.lagrangian import solve_mass_matrix as solve_spd
from discrete_robot.space import kernels
from discrete_robot.space.kinematics import configuration_arrays, evaluated
from discrete_robot.space.loads import validate_joint_torques, validate_loads
from discrete_robot.space.robot import SpaceRobot
from discrete_robot.space.state import SpaceRobotState, validate_state


@dataclass(frozen=True, eq=False)
class EquationTerms:
    """M(q) u̇ + h(q, u) = Q in the quasi-velocities u = [V0, ω0, joint rates]."""

    mass_matrix: np.ndarray
    bias: np.ndarray
    generalized_forces: np.ndarray


def _arguments(robot: SpaceRobot, state: SpaceRobotState, loads, joint_torques) -> tuple:
    """The validated state, torques and loads as the kernels take them (after the shared binding)."""
    validate_state(robot, state)
    loads = kernels.pack_loads(robot, validate_loads(robot, loads))
    torques = validate_joint_torques(robot, joint_torques)
    return (kernels.shared(robot).binding, *configuration_arrays(state), state.quasi_velocities, torques, *loads)


def _evaluate(robot: SpaceRobot, state: SpaceRobotState, loads, joint_torques) -> kernels.Data:
    """Validate, then fill the shared data with M, h and Q at ``state``."""
    kernels._bound_equation_terms(*_arguments(robot, state, loads, joint_torques))
    return kernels.shared(robot).data


def equation_terms(robot: SpaceRobot, state: SpaceRobotState, loads=(), joint_torques=None) -> EquationTerms:
    """M, h and Q of M u̇ + h = Q at ``state`` under external ``loads`` and ``joint_torques`` (dof,)."""
    data = _evaluate(robot, state, loads, joint_torques)
    return EquationTerms(data.M.copy(), data.nle.copy(), data.tau.copy())


def forward_dynamics(robot: SpaceRobot, state: SpaceRobotState, loads=(), joint_torques=None) -> np.ndarray:
    """u̇ = [V̇0, ω̇0, joint accelerations] (rates of the body-frame components; m/s², rad/s²).

    V̇0 is the rate of the base-frame components of the base CoM velocity; the CoM's inertial
    acceleration is R0 (V̇0 + ω0 × V0).
    """
    status = kernels._bound_forward_dynamics(*_arguments(robot, state, loads, joint_torques))
    kernels.check_status(status, robot, "forward dynamics")
    return kernels.shared(robot).data.ddq.copy()


def inverse_dynamics(robot: SpaceRobot, state: SpaceRobotState, accelerations: np.ndarray, loads=()) -> np.ndarray:
    """Generalised forces [F0, M0, joint torques] that, with ``loads``, give ``accelerations`` (= u̇): M u̇ + h − Q.

    For a free-floating robot the first six (a base wrench, base frame) are zero whenever the
    accelerations are feasible.
    """
    data = _evaluate(robot, state, loads, None)
    return data.M @ np.asarray(accelerations, dtype=float) + data.nle - data.tau


def arm_dof_indices(robot: SpaceRobot) -> list[np.ndarray]:
    """Indices into u of each arm's joint rates (arms couple only through the base, eq. (39))."""
    model = kernels.shared(robot).model
    return [rates[rates >= 0] for rates in model.arm_rates]


def solve_mass_matrix(robot: SpaceRobot, mass_matrix: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """M⁻¹ rhs by one dense Cholesky factorisation; ModelError if M is not positive definite."""
    try:
        return solve_spd(mass_matrix, rhs)
    except np.linalg.LinAlgError:
        raise ModelError(f"robot '{robot.name}': the mass matrix is not positive definite "
                         f"(a body has no inertia along a direction its joint moves it)") from None


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
    data = evaluated(robot, state)
    rotations, positions = data.oRi, data.com_positions
    angular_velocity, velocity = data.angular_velocity, data.linear_velocity
    masses = robot.masses
    center = masses @ positions / masses.sum()
    linear_world = np.einsum("bij,bj->bi", rotations, velocity) * masses[:, None]
    spin = np.einsum("bij,bjk,bk->bi", rotations, robot.inertias, angular_velocity)
    angular = (np.cross(positions - center, linear_world) + spin).sum(axis=0)
    energy = 0.5 * float(masses @ np.sum(velocity ** 2, axis=1)
                         + np.einsum("bi,bij,bj->", angular_velocity, robot.inertias, angular_velocity))
    return MomentumReport(linear_world.sum(axis=0), angular, center, energy)
