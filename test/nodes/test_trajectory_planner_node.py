"""trajectory_planner_node: plan_trajectory answers with a full trajectory and publishes it for display only;
bad requests fail."""

import math

import numpy as np
import pytest

pytestmark = pytest.mark.ros

START, GOAL = [0.0, 0.0], [math.pi / 2, math.pi / 4]
EFFORT = np.array([20.0, 10.0])


def _request(waypoints, **fields):
    from discrete_robot_interfaces.srv import PlanTrajectory
    from trajectory_msgs.msg import JointTrajectoryPoint

    return PlanTrajectory.Request(waypoints=[JointTrajectoryPoint(positions=list(p)) for p in waypoints], **fields)


def _seconds(point) -> float:
    return point.time_from_start.sec + point.time_from_start.nanosec * 1e-9


def _planar_tip(q) -> np.ndarray:
    """The 2-link arm's fingertip (end of link 2, 1 m links hinged about z, config/planar_2link.yaml), m."""
    return np.array([math.cos(q[0]) + math.cos(q[0] + q[1]), math.sin(q[0]) + math.sin(q[0] + q[1]), 0.0])


def test_plan_is_answered_and_published_for_display_only(ros):
    """The plan goes to planned_trajectory and, as the tool's path, to planned_path (latched: a viewer that
    subscribes after the plan still gets it); the planner publishes on no command topic."""
    from discrete_robot_interfaces.srv import PlanTrajectory
    from trajectory_msgs.msg import JointTrajectory
    from visualization_msgs.msg import Marker, MarkerArray

    from discrete_robot.nodes.common import LATCHED_QOS

    node = ros.start("trajectory_planner_node", params={"grid_points": 60, "frame_prefix": "arm/"})
    ros.wait_for_service(PlanTrajectory, "plan_trajectory", 30.0)
    response = ros.call(PlanTrajectory, "plan_trajectory", _request([START, GOAL], joint_names=["joint1", "joint2"]),
                        timeout=60.0)
    assert response.success, response.message
    plan = response.trajectory
    assert list(plan.joint_names) == ["joint1", "joint2"]
    times = np.array([_seconds(p) for p in plan.points])
    assert times[0] == 0.0 and np.all(np.diff(times) > 0.0)
    assert response.duration == pytest.approx(times[-1], abs=1e-9)
    # the 2-link arm's minimum time from (0, 0) to (π/2, π/4) under 20/10 N m is about 3.3 s (docs/planning.md)
    assert 3.2 < response.duration < 3.4
    for point in plan.points:
        assert len(point.positions) == len(point.velocities) == len(point.accelerations) == len(point.effort) == 2
    positions = np.array([p.positions for p in plan.points])
    efforts = np.array([p.effort for p in plan.points])
    np.testing.assert_allclose(positions[0], START, atol=1e-12)
    np.testing.assert_allclose(positions[-1], GOAL, atol=1e-12)
    np.testing.assert_allclose(plan.points[-1].velocities, 0.0, atol=1e-9)
    assert np.all(np.abs(efforts[:-1]) <= EFFORT * (1 + 1e-9))
    assert np.all(np.max(np.abs(efforts[:-1]) / EFFORT, axis=1) >= 1 - 1e-6)   # bang-bang

    # subscribed after the plan: the latched topics still deliver it
    shown = ros.wait_for_message("planned_trajectory", JointTrajectory, timeout=20.0, qos=LATCHED_QOS)
    assert len(shown.points) == len(plan.points)
    assert _seconds(shown.points[-1]) == pytest.approx(response.duration, abs=1e-9)
    [path] = ros.wait_for_message("planned_path", MarkerArray, timeout=20.0, qos=LATCHED_QOS).markers
    assert path.type == Marker.LINE_STRIP and path.header.frame_id == "arm/base_link"
    tips = np.array([[p.x, p.y, p.z] for p in path.points])
    assert len(tips) == len(plan.points)
    for k in (0, len(positions) // 2, -1):
        np.testing.assert_allclose(tips[k], _planar_tip(positions[k]), atol=1e-12)

    for topic in ("joint_trajectory", "joint_trajectory_controller/joint_trajectory"):
        assert not ros.node.get_publishers_info_by_topic(topic), f"the planner publishes on {topic}"
    assert node.alive()


BAD_REQUESTS = [
    ({"waypoints": [START, [0.5, 4.0]]}, "joint2.*outside its limits"),
    ({"waypoints": [START, GOAL], "max_effort": [15.0, 10.0]}, "joint1.*hold the arm against gravity"),
    ({"waypoints": [START, [math.nan, 0.0]]}, "finite"),
    ({"waypoints": [START, GOAL], "joint_names": ["joint1", "elbow"]}, "do not match the model's joints"),
    ({"waypoints": [START, GOAL], "method": "fastest"}, "unknown method 'fastest'"),
    ({"waypoints": [START, GOAL], "method": "min_effort"}, "min_effort needs duration > 0"),
    ({"waypoints": []}, "none given"),
    ({"waypoints": [START]}, "start is omitted but the arm's state is unknown"),
]


def test_infeasible_or_malformed_requests_are_refused_with_a_reason(ros):
    import re

    from discrete_robot_interfaces.srv import PlanTrajectory

    node = ros.start("trajectory_planner_node", params={"grid_points": 30})
    for fields, reason in BAD_REQUESTS:
        fields = dict(fields)
        waypoints = fields.pop("waypoints")
        response = ros.call(PlanTrajectory, "plan_trajectory", _request(waypoints, **fields), timeout=60.0)
        assert not response.success, fields
        assert re.search(reason, response.message), response.message
        assert len(response.trajectory.points) == 0
    # the node kept serving: a good min_effort request after them succeeds
    good = ros.call(PlanTrajectory, "plan_trajectory",
                    _request([START, GOAL], method="min_effort", duration=1.5, time_step_hint=0.05), timeout=120.0)
    assert good.success, good.message
    assert good.duration == pytest.approx(1.5)
    assert node.alive()
