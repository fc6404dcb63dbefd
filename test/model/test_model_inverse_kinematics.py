"""Tool-point inverse kinematics: the Jacobian against finite differences of the forward kinematics, and
solutions checked by the forward kinematics on the shipped arms."""

import numpy as np
import pytest

from discrete_robot.errors import InfeasibleError
from discrete_robot.model.inverse_kinematics import ToolPoint, joint_path, solve_tool_position, tool_jacobian, tool_pose

FINGER = [0.0, 0.1, 0.0]  # m in wrist_3_link: past the UR5's flange


def test_the_tool_jacobian_is_the_derivative_of_the_tool_pose(arm_6dof):
    tool = ToolPoint.on(arm_6dof, "wrist_3_link", FINGER)
    q = np.array([0.3, -0.7, 1.1, -0.4, 0.9, 0.2])
    _, R, Jp, Jw = tool_jacobian(arm_6dof, tool, q)
    eps = 1e-6
    for k in range(6):
        dq = np.zeros(6)
        dq[k] = eps
        (p1, R1), (p0, R0) = tool_pose(arm_6dof, tool, q + dq), tool_pose(arm_6dof, tool, q - dq)
        np.testing.assert_allclose((p1 - p0) / (2 * eps), Jp[:, k], atol=1e-8)
        omega_hat = (R1 - R0) / (2 * eps) @ R.T        # Ṙ Rᵀ = [ω]×
        np.testing.assert_allclose([omega_hat[2, 1], omega_hat[0, 2], omega_hat[1, 0]], Jw[:, k], atol=1e-8)


def test_a_reachable_pose_is_found_with_the_orientation_held(arm_6dof):
    tool = ToolPoint.on(arm_6dof, "wrist_3_link", FINGER)
    q_true = np.array([0.4, -0.9, 1.3, -1.9, -1.5, 0.1])
    target, rotation = tool_pose(arm_6dof, tool, q_true)
    q = solve_tool_position(arm_6dof, tool, target, q_true + 0.15, rotation)
    p, R = tool_pose(arm_6dof, tool, q)
    np.testing.assert_allclose(p, target, atol=1e-9)
    np.testing.assert_allclose(R, rotation, atol=1e-8)


def test_a_straight_tool_path_gives_a_continuous_joint_path(arm_6dof):
    tool = ToolPoint.on(arm_6dof, "wrist_3_link", FINGER)
    q0 = np.array([0.4, -0.9, 1.3, -1.9, -1.5, 0.1])
    start, rotation = tool_pose(arm_6dof, tool, q0)
    line = start + np.linspace(0.0, 1.0, 41)[:, None] * np.array([0.1, -0.05, 0.0])
    path = joint_path(arm_6dof, tool, line, q0, rotation)
    for q, point in zip(path, line, strict=True):
        np.testing.assert_allclose(tool_pose(arm_6dof, tool, q)[0], point, atol=1e-9)
    assert np.max(np.abs(np.diff(path, axis=0))) < 0.05    # 2.8 mm steps: no jump between IK branches


def test_the_planar_arm_reaches_points_in_its_plane_and_refuses_points_beyond_its_reach(planar_2link):
    tool = ToolPoint.on(planar_2link, "link2", [1.0, 0.0, 0.0])
    q = solve_tool_position(planar_2link, tool, [1.2, 0.9, 0.0], [0.3, 0.5])
    np.testing.assert_allclose(tool_pose(planar_2link, tool, q)[0], [1.2, 0.9, 0.0], atol=1e-9)
    with pytest.raises(InfeasibleError, match=r"cannot reach \[2.5, 0.0, 0.0\] m: closest"):
        solve_tool_position(planar_2link, tool, [2.5, 0.0, 0.0], [0.3, 0.5])
    with pytest.raises(InfeasibleError, match="tool path point 1 leaves the arm's workspace"):
        joint_path(planar_2link, tool, [[1.2, 0.9, 0.0], [0.0, 2.2, 0.0]], [0.3, 0.5])
