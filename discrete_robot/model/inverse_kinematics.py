"""Inverse kinematics of a tool point: positions along a path, with the tool's orientation held.

The tool is a point fixed in a link (``offset``, m, in the link frame). Its world position p(q) and the
link's rotation R(q) come from :func:`~discrete_robot.model.kinematics.forward_kinematics`; its Jacobian
from the link's CoM Jacobians, J_p = J_v,c − [p − c]× J_ω (the rigid-body velocity field).

Each target is solved by damped least squares (Levenberg–Marquardt on the task error),

    e = (p − p*, w · θ u),   θ u = the rotation vector of R R*ᵀ,   Δq = Jᵀ (J Jᵀ + λ² I)⁻¹ (−e),

with the orientation rows weighted by ``orientation_weight`` (m per rad) and left out when the arm cannot
orient its tool (fewer than 6 DOF: a planar arm holds only its position). Steps are clipped into the joint
limits. Path points are solved in order, each from the previous solution, so the joint path is continuous
(no jump between IK branches). A target the arm cannot reach raises InfeasibleError naming the point.
"""

from dataclasses import dataclass

import numpy as np
from transforms3d.axangles import mat2axangle

from discrete_robot.errors import InfeasibleError, InputError
from discrete_robot.geometry3d import hat
from discrete_robot.model.description import RobotModel
from discrete_robot.model.kinematics import com_jacobians, forward_kinematics

#: damping λ of the least-squares step, m: keeps steps bounded near singular configurations
DAMPING = 1e-3
MAX_ITERATIONS = 200
#: position error (m) and rotation error (rad) accepted as solved
POSITION_TOLERANCE = 1e-9
ANGLE_TOLERANCE = 1e-9


@dataclass(frozen=True)
class ToolPoint:
    """A point fixed in link ``link`` (index into model.links) at ``offset`` (m, link frame)."""

    link: int
    offset: np.ndarray

    @classmethod
    def on(cls, model: RobotModel, link_name: str, offset) -> "ToolPoint":
        names = [link.name for link in model.links]
        if link_name not in names:
            raise InputError(f"tool link {link_name!r}: the model has links {names}")
        offset = np.asarray(offset, dtype=float)
        if offset.shape != (3,) or not np.all(np.isfinite(offset)):
            raise InputError(f"tool offset: expected 3 finite values (m), got {offset.tolist()}")
        return cls(names.index(link_name), offset)


def tool_pose(model: RobotModel, tool: ToolPoint, q) -> tuple[np.ndarray, np.ndarray]:
    """(p, R): the tool point's world position (m) and its link's rotation at q."""
    frames = forward_kinematics(model, np.asarray(q, dtype=float))
    R = frames.rotations[tool.link]
    return frames.positions[tool.link] + R @ tool.offset, R


def tool_jacobian(model: RobotModel, tool: ToolPoint, q) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(p, R, J_p, J_ω): tool position, link rotation, and the (3, n) Jacobians of ṗ and of ω."""
    q = np.asarray(q, dtype=float)
    frames = forward_kinematics(model, q)
    Jv, Jw = com_jacobians(model, q)
    R = frames.rotations[tool.link]
    p = frames.positions[tool.link] + R @ tool.offset
    Jp = Jv[tool.link] - hat(p - frames.com_positions[tool.link]) @ Jw[tool.link]
    return p, R, Jp, Jw[tool.link]


def _rotation_vector(R: np.ndarray) -> np.ndarray:
    axis, angle = mat2axangle(R, unit_thresh=1e-5)
    return np.asarray(axis) * angle


def solve_tool_position(model: RobotModel, tool: ToolPoint, target, q_start, rotation=None,
                        orientation_weight: float = 0.1) -> np.ndarray:
    """Joint positions placing the tool at ``target`` (m, world) with its link at ``rotation`` (None = any),
    starting from ``q_start``; InfeasibleError when no configuration within the joint limits reaches it."""
    target = np.asarray(target, dtype=float)
    q = np.clip(np.asarray(q_start, dtype=float), model.lower, model.upper)
    oriented = rotation is not None and model.dof >= 6
    for _ in range(MAX_ITERATIONS):
        p, R, Jp, Jw = tool_jacobian(model, tool, q)
        error, J = p - target, Jp
        angle_error = 0.0
        if oriented:
            rotation_error = _rotation_vector(R @ rotation.T)
            angle_error = float(np.linalg.norm(rotation_error))
            error = np.concatenate([error, orientation_weight * rotation_error])
            J = np.vstack([Jp, orientation_weight * Jw])
        if np.linalg.norm(error[:3]) <= POSITION_TOLERANCE and angle_error <= ANGLE_TOLERANCE:
            return q
        step = J.T @ np.linalg.solve(J @ J.T + DAMPING ** 2 * np.eye(len(error)), -error)
        q = np.clip(q + step, model.lower, model.upper)
    p, R = tool_pose(model, tool, q)
    raise InfeasibleError(f"the tool cannot reach {target.round(4).tolist()} m: closest {p.round(4).tolist()} "
                          f"({np.linalg.norm(p - target):.3g} m away) within the joint limits")


def joint_path(model: RobotModel, tool: ToolPoint, points, q_start, rotation=None) -> np.ndarray:
    """Joint positions (k, n) for tool positions ``points`` (k, 3), each solved from the previous one;
    InfeasibleError naming the first point outside the arm's workspace."""
    points = np.asarray(points, dtype=float)
    if points.ndim != 2 or points.shape[1] != 3 or not np.all(np.isfinite(points)):
        raise InputError(f"tool path: expected finite points (k, 3) in m, got shape {points.shape}")
    path, q = [], np.asarray(q_start, dtype=float)
    for i, point in enumerate(points):
        try:
            q = solve_tool_position(model, tool, point, q, rotation)
        except InfeasibleError as error:
            raise InfeasibleError(f"tool path point {i} leaves the arm's workspace: {error}") from None
        path.append(q)
    return np.array(path)
