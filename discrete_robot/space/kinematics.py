"""Forward kinematics of the multi-arm space robot: body poses (eq. (25)) and velocities ((24), (27)).

Views over the compiled kernels of :mod:`.kernels` (where the paper's recursions are documented) for
callers outside the hot loops: loads resolution, the Newton–Euler cross-check, tests and samples.
"""

from dataclasses import dataclass

import numpy as np

from discrete_robot.space import kernels
from discrete_robot.space.robot import SpaceRobot
from discrete_robot.space.state import SpaceRobotState


@dataclass(frozen=True, eq=False)
class Poses:
    """Configuration-dependent quantities of every body (index 0 = base)."""

    relative: np.ndarray        # (N+1, 3, 3) A_b, parent -> child (the base: base -> world)
    rotations: np.ndarray       # (N+1, 3, 3) body -> world
    com_positions: np.ndarray   # (N+1, 3) CoM, world, m
    frame_origins: np.ndarray   # (N+1, 3) body frame origin (a link's joint), world, m


def configuration_arrays(state: SpaceRobotState) -> tuple:
    """(base_q, joint_q, angles, base_position) of ``state`` as the kernels take them."""
    return (state.base_orientation, np.asarray(state.joint_orientations, dtype=float).reshape(-1, 4),
            np.asarray(state.joint_angles, dtype=float), np.asarray(state.base_position, dtype=float))


def evaluated(robot: SpaceRobot, state: SpaceRobotState) -> kernels.Data:
    """The shared data (:func:`.kernels.shared`) with the poses and velocities of ``state`` computed."""
    shared = kernels.shared(robot)
    kernels._bound_forward_kinematics(shared.binding, *configuration_arrays(state), state.quasi_velocities)
    return shared.data


def body_poses(robot: SpaceRobot, state: SpaceRobotState) -> Poses:
    """World attitude and CoM position of every body, eq. (25); the base CoM is ``state.base_position``."""
    data = evaluated(robot, state)
    return Poses(data.relative.copy(), data.oRi.copy(), data.com_positions.copy(), data.oPi.copy())
