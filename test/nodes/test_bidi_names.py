"""Names from messages reach the nodes' logs and refusal reasons escaped (issue 41): a right-to-left override
(U+202E) in a joint name would otherwise reverse the rest of the log line in a terminal."""

import pytest

pytestmark = pytest.mark.ros

OVERRIDE = "\u202e"
NAME = f"joint1{OVERRIDE}evil"
ESCAPED = "joint1\\u202eevil"


def test_a_goal_tolerance_for_an_unknown_joint_is_logged_escaped(ros):
    """The goal is followed with the default tolerances (JTC logs the bad one and goes on); the log names it with
    the override escaped, and holds no raw override anywhere."""
    from control_msgs.action import FollowJointTrajectory
    from control_msgs.msg import JointTolerance

    from jtc_goals import follow_joint_trajectory_goal

    node = ros.start("discrete_robot_node", params={"real_time_factor": 0.0})
    goal = follow_joint_trajectory_goal(["joint1", "joint2"], [(0.1, [0.1, 0.1])])
    goal.path_tolerance = [JointTolerance(name=NAME, position=0.1)]
    handle = ros.send_goal(FollowJointTrajectory, "joint_trajectory_controller/follow_joint_trajectory", goal,
                           timeout=60.0)
    assert handle.accepted
    ros.goal_result(handle, timeout=60.0)
    assert ros.spin_until(lambda: ESCAPED in node.log(), 30.0), node.log()
    assert OVERRIDE not in node.log()


def test_a_plan_request_naming_an_unknown_joint_is_refused_with_the_name_escaped(ros):
    from discrete_robot_interfaces.srv import PlanTrajectory
    from trajectory_msgs.msg import JointTrajectoryPoint

    node = ros.start("trajectory_planner_node", params={"grid_points": 20})
    ros.wait_for_service(PlanTrajectory, "plan_trajectory", timeout=30.0)
    request = PlanTrajectory.Request(joint_names=[NAME, "joint2"], waypoints=[
        JointTrajectoryPoint(positions=[0.0, 0.0]), JointTrajectoryPoint(positions=[0.5, 0.5])])
    answer = ros.call(PlanTrajectory, "plan_trajectory", request, timeout=60.0)
    assert not answer.success and ESCAPED in answer.message and OVERRIDE not in answer.message, answer.message
    assert ros.spin_until(lambda: ESCAPED in node.log(), 30.0), node.log()
    assert OVERRIDE not in node.log()
