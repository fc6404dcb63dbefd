"""trajectory_planner_node's retime_trajectory: a stack's path, in any joint order, comes back timed through its
own points within the effort limits, with its predicted execution; malformed requests fail naming the field."""

import math

import numpy as np
import pytest

pytestmark = pytest.mark.ros

#: config/planar_2link.yaml's effort limits, N m (joint1, joint2)
EFFORT = np.array([20.0, 10.0])


def _request(joint_names, points, **fields):
    from discrete_robot_interfaces.srv import RetimeTrajectory
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

    trajectory = JointTrajectory(joint_names=joint_names,
                                 points=[JointTrajectoryPoint(positions=list(p)) for p in points])
    return RetimeTrajectory.Request(trajectory=trajectory, **fields)


def test_retime_keeps_the_stacks_points_and_the_limits(ros):
    """The stack's points (given joint2 first) are on the retimed path to 1e-9 rad; the effort stays within the
    scaled limits; the prediction comes per joint in the model's order."""
    from discrete_robot_interfaces.srv import RetimeTrajectory

    ros.start("trajectory_planner_node")
    ros.wait_for_service(RetimeTrajectory, "retime_trajectory", 30.0)
    s = np.linspace(0.0, 1.0, 7)
    # about upright (joint1 = π/2), where holding the arm takes well under 0.8 of the limits
    path = np.column_stack([math.pi / 2 + 0.6 * s, 0.3 * np.sin(math.pi * s / 2)])   # (joint1, joint2)
    response = ros.call(RetimeTrajectory, "retime_trajectory",
                        _request(["joint2", "joint1"], path[:, ::-1], effort_scale=0.8), timeout=120.0)
    assert response.success, response.message
    assert list(response.trajectory.joint_names) == list(response.joint_names) == ["joint1", "joint2"]
    positions = np.array([p.positions for p in response.trajectory.points])
    efforts = np.array([p.effort for p in response.trajectory.points])
    for point in path:
        assert np.min(np.max(np.abs(positions - point), axis=1)) <= 1e-9
    assert np.all(np.abs(efforts) <= 0.8 * EFFORT * (1 + 1e-6))
    assert len(response.predicted_max_tracking_error) == len(response.predicted_peak_effort_fraction) == 2
    assert "predicted execution" in response.message


@pytest.mark.parametrize(("joint_names", "fields", "named"), [
    (["joint1", "elbow"], {}, "joint_names"),
    (["joint1", "joint2"], {"effort_scale": 1.5}, "effort_scale"),
    (["joint1", "joint2"], {"execute": True}, "execute"),
])
def test_malformed_retime_requests_fail_naming_the_field(ros, joint_names, fields, named):
    from discrete_robot_interfaces.srv import RetimeTrajectory

    ros.start("trajectory_planner_node")
    ros.wait_for_service(RetimeTrajectory, "retime_trajectory", 30.0)
    response = ros.call(RetimeTrajectory, "retime_trajectory",
                        _request(joint_names, [[0.0, 0.0], [0.5, 0.2], [1.0, 0.4]], **fields), timeout=60.0)
    assert not response.success
    assert named in response.message
