"""push_predictor_node against the requests and messages that used to kill or hang it (issue 13), replayed over
DDS: each is refused with the bad field named (topics: ignored), and the node then answers a valid request at
once and keeps its streaming object where it was."""

import numpy as np
import pytest

pytestmark = pytest.mark.ros

SQUARE = [(-0.05, -0.05), (0.05, -0.05), (0.05, 0.05), (-0.05, 0.05)]
MICRO = [(x * 1e-6, y * 1e-6) for x, y in SQUARE]


def _points(pairs):
    from geometry_msgs.msg import Point

    return [Point(x=float(x), y=float(y)) for x, y in pairs]


def _simulate(**changes):
    from discrete_robot_interfaces.srv import SimulatePush
    from geometry_msgs.msg import Pose2D

    fields = {"footprint": _points(SQUARE), "normal_force": 2.0, "support_friction": 0.4, "contact_friction": 0.3,
              "pusher_radius": 0.01, "object_pose": Pose2D(x=0.5, y=0.0),
              "pusher_path": _points([(0.3, 0.0), (0.6, 0.0)]), "pusher_speed": 0.1, "time_step": 0.0}
    fields.update(changes)
    return SimulatePush.Request(**fields)


def _predict(**changes):
    from discrete_robot_interfaces.srv import PredictPush
    from geometry_msgs.msg import Point, Vector3

    fields = {"footprint": _points(SQUARE), "normal_force": 2.0, "support_friction": 0.5, "contact_friction": 0.3,
              "contact_point": Point(x=-0.05, y=0.0), "pusher_velocity": Vector3(x=0.1, y=0.0)}
    fields.update(changes)
    return PredictPush.Request(**fields)


def test_the_requests_that_killed_or_hung_the_node_are_refused_naming_the_field(ros):
    from discrete_robot_interfaces.srv import PredictPush, SimulatePush
    from geometry_msgs.msg import Pose2D, Vector3

    node = ros.start("push_predictor_node")
    ros.wait_for_service(SimulatePush, "simulate_push", timeout=30.0)
    ros.wait_for_service(PredictPush, "predict_push", timeout=30.0)
    cases = {
        "pusher_speed": _simulate(pusher_speed=5e-324),
        "time_step": _simulate(time_step=5e-324),
        "pusher_path": _simulate(pusher_path=_points([(0.3, 0.0), (1e300, -1e300)])),
        "MAX_STEPS": _simulate(pusher_speed=1e-5),
        "MAX_MOVES": _simulate(footprint=_points(MICRO), object_pose=Pose2D(x=0.0, y=0.0), time_step=1e4,
                               pusher_path=_points([(-1.0, 0.0), (1.0, 0.0)])),
        "time_step: must be in": _simulate(footprint=_points(MICRO), object_pose=Pose2D(x=0.0, y=0.0),
                                           time_step=1e6, pusher_path=_points([(-1.0, 0.0), (1.0, 0.0)])),
    }
    for field, request in cases.items():
        used = ros.cpu_seconds(node)
        answer = ros.call(SimulatePush, "simulate_push", request, timeout=120.0)
        work = ros.cpu_seconds(node) - used   # CPU time: a loaded machine stretches the wall time, not this
        assert not answer.success, field
        assert field in answer.message, answer.message
        assert work < 5.0, f"{field}: refused only after {work:.1f} s of the node's CPU time"
    for field, request in {"contact_friction": _predict(contact_friction=1e308),
                           "support_friction": _predict(support_friction=1e308),
                           "pusher_velocity.x": _predict(pusher_velocity=Vector3(x=1e308, y=0.0))}.items():
        answer = ros.call(PredictPush, "predict_push", request)
        assert not answer.success and field in answer.message, answer.message
    assert ros.call(SimulatePush, "simulate_push", _simulate(), timeout=30.0).success
    assert node.alive()


def test_finger_jumps_are_ignored_and_the_services_stay_responsive(ros):
    from discrete_robot_interfaces.srv import PredictPush
    from geometry_msgs.msg import Point, PointStamped, PoseStamped

    node = ros.start("push_predictor_node")
    ros.wait_for_service(PredictPush, "predict_push", timeout=30.0)
    poses = []
    ros.node.create_subscription(PoseStamped, "push/object_pose", poses.append, 100)
    ros.publish("push/finger_position", PointStamped(point=Point(x=-0.2, y=0.0)))
    ros.spin_until(lambda: len(poses) >= 1, 10.0)
    for x in (1000.0, 1e300, 1e6, -0.19):
        used = ros.cpu_seconds(node)
        ros.publish("push/finger_position", PointStamped(point=Point(x=x, y=0.0)))
        assert ros.call(PredictPush, "predict_push", _predict(), timeout=60.0).success
        assert ros.cpu_seconds(node) - used < 2.0, f"finger at x = {x:g}: the jump was simulated"
    ros.spin_until(lambda: False, 0.5)
    assert np.allclose([poses[-1].pose.position.x, poses[-1].pose.position.y], 0.0), "the object never moved"
    assert "max_finger_jump" in node.log()
    assert node.alive()


def test_every_request_is_answered_however_many_are_outstanding(ros):
    """3000 requests sent at once (the ROS default queue of 10 dropped all but about ten): every one is answered."""
    from discrete_robot_interfaces.srv import PredictPush
    from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy

    node = ros.start("push_predictor_node")
    # the client keeps all its responses too, or it would drop its own answers
    client = ros.node.create_client(PredictPush, "predict_push", qos_profile=QoSProfile(
        depth=10, history=HistoryPolicy.KEEP_ALL, reliability=ReliabilityPolicy.RELIABLE))
    assert client.wait_for_service(timeout_sec=30.0)
    futures = [client.call_async(_predict()) for _ in range(3000)]
    ros.spin_until(lambda: all(f.done() for f in futures), 120.0)
    answered = [f.result() for f in futures if f.done()]
    assert len(answered) == len(futures)
    assert all(answer.success for answer in answered)
    assert node.alive()
