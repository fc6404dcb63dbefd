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


def evaluated(robot: SpaceRobot, state: SpaceRobotState) -> tuple[kernels.Model, kernels.Data]:
    """(model, data) of :func:`.kernels.shared` with the poses and velocities of ``state`` computed."""
    model, data = kernels.shared(robot)
    kernels.configuration(model, data, state.base_orientation,
                          np.asarray(state.joint_orientations, dtype=float).reshape(-1, 4),
                          np.asarray(state.joint_angles, dtype=float), np.asarray(state.base_position, dtype=float))
    kernels.velocities(model, data, state.quasi_velocities)
    return model, data


def body_poses(robot: SpaceRobot, state: SpaceRobotState) -> Poses:
    """World attitude and CoM position of every body, eq. (25); the base CoM is ``state.base_position``."""
    _, data = evaluated(robot, state)
    return Poses(data.relative.copy(), data.oRi.copy(), data.com_positions.copy(), data.oPi.copy())
