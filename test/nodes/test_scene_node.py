"""The scene inside discrete_robot_node (issue 38): the planar 2-link arm's table scene
(config/table_scene_planar_2link.yaml, a 12 cm square at (1.1, 0, 0)) loaded with ``scene_file``; its pose is
published stamped with simulated time, set_state places it, a reset puts it back, and a goal that drives the
fingertip through it pushes it.

The arm is folded symmetrically (q = (-a, 2a)) so that its fingertip (a 2 cm sphere at link 2's tip; both links
1 m) lies on the x axis at x = 2 cos a, the object's axis of symmetry: from x = 0.95 (clear of the object's
edge at 1.04) to x = 1.05 the finger would push the object ahead by 1.05 + 0.02 - 1.04 = 0.03 m (the
finger's radius and the object's half-width give the contact) if it tracked its path exactly.
"""

import math

import pytest

from discrete_robot.model.description import package_config_path

pytestmark = pytest.mark.ros

NS = "/scene_node"
IN_NS = ("-r", f"__ns:={NS}")
ACTION = f"{NS}/joint_trajectory_controller/follow_joint_trajectory"
START_POSE = (1.1, 0.0, 0.0)
#: m: the straight push from fingertip x 0.95 to 1.05 (module docstring)
PUSH = 0.03


def _folded(x: float) -> list[float]:
    """The joint positions (rad) that put the fingertip at (x, 0): q = (-a, 2a), x = 2 cos a."""
    a = math.acos(x / 2.0)
    return [-a, 2.0 * a]


def _pose(msg) -> tuple[float, float, float]:
    p, o = msg.pose.position, msg.pose.orientation
    return p.x, p.y, 2.0 * math.atan2(o.z, o.w)


def _start(ros):
    return ros.start("discrete_robot_node", ros_args=IN_NS, params={
        "scene_file": str(package_config_path("table_scene_planar_2link.yaml")), "initial_positions": _folded(0.95),
        "time_step": 0.002, "publish_rate": 50.0})


def test_the_object_is_published_with_simulated_stamps_pushed_by_a_goal_and_reset(ros):
    from builtin_interfaces.msg import Duration
    from control_msgs.action import FollowJointTrajectory
    from geometry_msgs.msg import PoseStamped
    from rosgraph_msgs.msg import Clock
    from std_srvs.srv import Trigger
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

    node = _start(ros)
    clocks, poses = [], []
    ros.node.create_subscription(Clock, "/clock", lambda m: clocks.append(m.clock), 100)
    ros.node.create_subscription(PoseStamped, f"{NS}/objects/object/pose", poses.append, 100)
    assert ros.spin_until(lambda: len(poses) > 5 and len(clocks) > 5, 60.0), f"no object pose\n{ros.logs()}"
    assert poses[0].header.frame_id == "world"
    assert _pose(poses[0]) == pytest.approx(START_POSE, abs=1e-12)
    clock_stamps = {(c.sec, c.nanosec) for c in clocks}
    assert any((p.header.stamp.sec, p.header.stamp.nanosec) in clock_stamps for p in poses), \
        "object poses not stamped with the simulated time /clock carries"

    goal = FollowJointTrajectory.Goal(trajectory=JointTrajectory(joint_names=["joint1", "joint2"], points=[
        JointTrajectoryPoint(positions=_folded(1.05), velocities=[0.0, 0.0], time_from_start=Duration(sec=2))]))
    handle = ros.send_goal(FollowJointTrajectory, ACTION, goal)
    assert handle.accepted
    ros.goal_result(handle, 60.0)
    count = len(poses)
    assert ros.spin_until(lambda: len(poses) > count + 2, 30.0)
    x, y, theta = _pose(poses[-1])
    # the object's friction loads the arm (τ += Jᵀ f), whose PD tracking then stops the finger short of its goal
    # by f / (m k_p) (centimetres: 0.8 N of support friction at k_p = 100 1/s²); it never goes past it
    assert START_POSE[0] + 0.005 < x <= START_POSE[0] + PUSH + 1e-9, f"the goal did not push the object: x = {x}"
    # the tracked fingertip leaves the axis by millimetres (gravity acts along -y), so the object goes mostly ahead
    assert abs(y) < 0.5 * (x - START_POSE[0]), f"the object went sideways: y = {y}, θ = {theta}"

    assert ros.call(Trigger, f"{NS}/simulation/reset", Trigger.Request()).success
    count = len(poses)
    assert ros.spin_until(lambda: len(poses) > count + 2, 30.0)
    assert _pose(poses[-1]) == pytest.approx(START_POSE, abs=1e-12), "the reset left the object where it was"
    assert node.alive()


def test_a_bad_scene_file_is_refused_in_one_line(ros, tmp_path):
    bad = tmp_path / "scene.yaml"
    bad.write_text("table: {x: [0, 1]}\n")
    node = ros.start("discrete_robot_node", params={"scene_file": str(bad)})
    assert node.wait(timeout=120.0) == 1, node.log()
    log = node.log()
    fatal = [line for line in log.splitlines() if "[FATAL]" in line]
    assert "Traceback" not in log and len(fatal) == 1 and "scene_file" in fatal[0], log


def test_set_state_places_a_named_object_and_refuses_an_unknown_one(ros):
    from discrete_robot_interfaces.srv import SetSimulationState
    from geometry_msgs.msg import Pose, PoseStamped

    node = _start(ros)
    poses = []
    ros.node.create_subscription(PoseStamped, f"{NS}/objects/object/pose", poses.append, 100)
    assert ros.spin_until(lambda: poses, 60.0), f"no object pose\n{ros.logs()}"
    placed = Pose()
    placed.position.x, placed.position.y = 1.3, 0.1
    placed.orientation.z, placed.orientation.w = math.sin(0.25), math.cos(0.25)    # yaw 0.5 rad
    request = SetSimulationState.Request(object_names=["object"], object_poses=[placed])
    response = ros.call(SetSimulationState, f"{NS}/simulation/set_state", request)
    assert response.success, response.message
    count = len(poses)
    assert ros.spin_until(lambda: len(poses) > count + 2, 30.0)
    assert _pose(poses[-1]) == pytest.approx((1.3, 0.1, 0.5), abs=1e-12)

    request.object_names = ["cup"]
    response = ros.call(SetSimulationState, f"{NS}/simulation/set_state", request)
    assert not response.success and "cup" in response.message and "object" in response.message, response.message
    count = len(poses)
    assert ros.spin_until(lambda: len(poses) > count + 2, 30.0)
    assert _pose(poses[-1]) == pytest.approx((1.3, 0.1, 0.5), abs=1e-12), "a refused request moved the object"
    assert node.alive()
