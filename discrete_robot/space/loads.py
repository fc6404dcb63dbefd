"""External loads on the space robot: forces at any point of any body, free moments, joint torques.

A load names its body; its point of application is given in that body's frame (a link's frame
sits at its joint; the base frame at the base origin, the base CoM being the model's base ``com``)
and its force and moment components are in the body frame or the world frame. Joint torques are
generalised forces, one per joint DOF in :attr:`SpaceRobot.dof_names` order: for 1-/2-DOF joints
the torque about each joint axis (N m), for a spherical joint the three components, in the link
frame, of the torque the parent exerts on the link (the power conjugate of the quasi-velocity ω_b).
Joint torques are internal: they act on the link and, reversed, on its parent.
"""

import enum
from dataclasses import dataclass, field

import numpy as np

from discrete_robot.errors import InputError
from discrete_robot.space.robot import SpaceRobot


class LoadFrame(enum.Enum):
    """Frame of a load's force and moment components."""

    BODY = "body"
    WORLD = "world"


@dataclass(frozen=True, eq=False)
class ExternalLoad:
    """A force (N) at ``point`` (m, body frame; None = the body's CoM) plus a free moment (N m)."""

    body: str
    force: np.ndarray = field(default_factory=lambda: np.zeros(3))
    point: np.ndarray | None = None
    moment: np.ndarray = field(default_factory=lambda: np.zeros(3))
    frame: LoadFrame = LoadFrame.BODY


@dataclass(frozen=True, eq=False)
class WorldLoads:
    """Loads resolved in the world frame: per load, body index, force, application point and moment."""

    bodies: np.ndarray
    forces: np.ndarray
    points: np.ndarray
    moments: np.ndarray

    def total_force(self) -> np.ndarray:
        return self.forces.sum(axis=0)

    def moment_about(self, point: np.ndarray) -> np.ndarray:
        """Σ (x − point) × F + M, world frame (N m)."""
        return np.cross(self.points - point, self.forces).sum(axis=0) + self.moments.sum(axis=0)


def validate_loads(robot: SpaceRobot, loads) -> tuple[ExternalLoad, ...]:
    """The loads with bodies checked and vectors finite of length 3; InputError otherwise."""
    checked = []
    for load in loads:
        robot.body_index(load.body)
        for name in ("force", "moment") + (("point",) if load.point is not None else ()):
            value = np.asarray(getattr(load, name), dtype=float)
            if value.shape != (3,) or not np.all(np.isfinite(value)):
                raise InputError(f"load on '{load.body}': {name} must be 3 finite numbers, got {value.tolist()}")
        if not isinstance(load.frame, LoadFrame):
            raise InputError(f"load on '{load.body}': frame must be 'body' or 'world', got {load.frame!r}")
        checked.append(load)
    return tuple(checked)


def validate_joint_torques(robot: SpaceRobot, joint_torques) -> np.ndarray:
    """Joint torques as a finite (dof,) array (zeros for None); InputError otherwise."""
    if joint_torques is None:
        return np.zeros(robot.dof)
    torques = np.asarray(joint_torques, dtype=float)
    if torques.shape != (robot.dof,):
        raise InputError(f"joint torques: expected {robot.dof} values ({', '.join(robot.dof_names)}), "
                         f"got shape {torques.shape}")
    if not np.all(np.isfinite(torques)):
        raise InputError(f"joint torques: values must be finite, got {torques.tolist()}")
    return torques


def resolve_loads(robot: SpaceRobot, poses, loads) -> WorldLoads:
    """World-frame forces, points and moments of ``loads`` at the configuration ``poses``."""
    count = len(loads)
    bodies = np.empty(count, dtype=int)
    forces, points, moments = np.zeros((count, 3)), np.zeros((count, 3)), np.zeros((count, 3))
    for k, load in enumerate(loads):
        b = robot.body_index(load.body)
        rotation = poses.rotations[b]
        to_world = rotation if load.frame is LoadFrame.BODY else np.eye(3)
        bodies[k] = b
        forces[k] = to_world @ np.asarray(load.force, dtype=float)
        moments[k] = to_world @ np.asarray(load.moment, dtype=float)
        points[k] = (poses.com_positions[b] if load.point is None
                     else poses.frame_origins[b] + rotation @ np.asarray(load.point, dtype=float))
    return WorldLoads(bodies, forces, points, moments)


def paper_loads(robot: SpaceRobot) -> tuple[ExternalLoad, ...]:
    """The paper's scenario (section 4): F_2(1) = [1, −1, 1] N and F_2(2) = [2, −2, −2] N, in the body
    frames, at the tips of the last links of arms 1 and 2."""
    if len(robot.arms) < 2:
        raise InputError(f"robot '{robot.name}': the paper's loads need two arms, the robot has {len(robot.arms)}")
    loads = []
    for arm, force in zip(robot.arms[:2], ([1.0, -1.0, 1.0], [2.0, -2.0, -2.0]), strict=True):
        link = robot.links[arm[-1] - 1]
        loads.append(ExternalLoad(body=link.name, force=np.array(force), point=link.tip.copy()))
    return tuple(loads)
