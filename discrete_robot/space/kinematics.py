"""Forward kinematics of the multi-arm space robot: body poses (eq. (25)) and velocities ((24), (27)).

Views over the compiled kernels of :mod:`.compiled` (where the paper's recursions are documented) for
callers outside the hot loops: loads resolution, the Newton–Euler cross-check, tests and samples.
"""

from dataclasses import dataclass

import numpy as np

from discrete_robot.space import compiled
from discrete_robot.space.robot import SpaceRobot
from discrete_robot.space.state import SpaceRobotState


@dataclass(frozen=True, eq=False)
class Poses:
    """Configuration-dependent quantities of every body (index 0 = base)."""

    relative: np.ndarray        # (N+1, 3, 3) A_b, parent -> child (the base: base -> world)
    rotations: np.ndarray       # (N+1, 3, 3) body -> world
    com_positions: np.ndarray   # (N+1, 3) CoM, world, m
    frame_origins: np.ndarray   # (N+1, 3) body frame origin (a link's joint), world, m


@dataclass(frozen=True, eq=False)
class Velocities:
    """Ω_b and V_b in body frames (rad/s, m/s) and each link's relative angular velocity ω_b (link frame)."""

    angular: np.ndarray
    linear: np.ndarray
    relative: np.ndarray


def evaluated(robot: SpaceRobot, state: SpaceRobotState) -> tuple:
    """(model arrays, workspace arrays) with the poses and velocities of ``state`` computed."""
    model, work = compiled.shared(robot)
    compiled.configuration(model.arrays, work.arrays, state.base_orientation,
                           np.asarray(state.joint_orientations, dtype=float).reshape(-1, 4),
                           np.asarray(state.joint_angles, dtype=float), np.asarray(state.base_position, dtype=float))
    compiled.velocities(model.arrays, work.arrays, state.quasi_velocities)
    return model.arrays, work.arrays


def body_poses(robot: SpaceRobot, state: SpaceRobotState) -> Poses:
    """World attitude and CoM position of every body, eq. (25); the base CoM is ``state.base_position``."""
    _, work = evaluated(robot, state)
    return Poses(work[0].copy(), work[1].copy(), work[2].copy(), work[3].copy())


def body_velocities(robot: SpaceRobot, state: SpaceRobotState) -> Velocities:
    """Recursive kinematics (24) and (27) from the base quasi-velocities and the joint rates."""
    _, work = evaluated(robot, state)
    return Velocities(work[11].copy(), work[12].copy(), work[13].copy())
