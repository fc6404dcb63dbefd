"""Two arms in one system (launch/two_arms.launch.py, here as two bringups): each under its own namespace and
TF frame prefix, one /clock that both worlds' stamps follow."""

import pytest

pytestmark = pytest.mark.ros


def _seconds(time) -> float:
    return time.sec + 1e-9 * time.nanosec


def _stamp(msg) -> float:
    return _seconds(msg.header.stamp)


def test_two_namespaced_arms_share_one_clock_and_one_tf_tree(ros):
    from rclpy.qos import QoSProfile
    from rosgraph_msgs.msg import Clock
    from sensor_msgs.msg import JointState
    from tf2_msgs.msg import TFMessage

    from discrete_robot.nodes.common import LATCHED_QOS

    first = ros.start("bringup", args=["--only", "discrete_robot_node", "--namespace", "arm1"])
    # the second world starts once the first one's clock has run `lead` s: with a clock of its own it would
    # stamp from 0, following the first it stamps from there on
    lead = 3.0
    started = ros.wait_for_message("/clock", Clock, timeout=180.0, predicate=lambda m: _seconds(m.clock) >= lead)
    second = ros.start("bringup", args=["--only", "discrete_robot_node", "--namespace", "arm2"],
                       ros_args=["-p", "publish_clock:=false"])
    states = {ns: ros.wait_for_message(f"/{ns}/joint_states", JointState, timeout=180.0) for ns in ("arm1", "arm2")}
    assert states["arm1"].name == states["arm2"].name
    ros.spin_until(lambda: ros.node.count_publishers("/clock") >= 1, 10.0)
    assert ros.node.count_publishers("/clock") == 1, "the follower must not publish a second /clock"

    # both worlds' frames on the one /tf, each under its own prefix; /tf_static hangs both from the world frame
    children, parents = set(), set()
    def both(received):   # both worlds seen, however long a loaded machine takes to tick the follower
        return {t.child_frame_id.split("/")[0] for _, m in received for t in m.transforms} >= {"arm1", "arm2"}

    for _, msg in ros.collect_until("/tf", TFMessage, both, 90.0, qos=100):
        children.update(t.child_frame_id for t in msg.transforms)
        parents.update(t.header.frame_id for t in msg.transforms)
    assert {c.split("/")[0] for c in children} == {"arm1", "arm2"}, sorted(children)
    assert {p.split("/")[0] for p in parents} == {"arm1", "arm2"}, sorted(parents)
    fixed = set()
    # one latched message per publisher: a depth of 1 would keep only the last of the two worlds' (tf2's static
    # listener keeps 100)
    static_qos = QoSProfile(depth=100, reliability=LATCHED_QOS.reliability, durability=LATCHED_QOS.durability)
    static = ros.node.create_subscription(TFMessage, "/tf_static", lambda m: fixed.update(
        (t.header.frame_id, t.child_frame_id.split("/")[0]) for t in m.transforms), static_qos)
    ros.spin_until(lambda: {("world", "arm1"), ("world", "arm2")} <= fixed, 90.0)   # a loaded machine discovers late
    ros.node.destroy_subscription(static)
    assert {("world", "arm1"), ("world", "arm2")} <= fixed, sorted(fixed)

    # the follower stamps with the leader's simulated time, from where the leader's clock stood when it started
    # (a stamp of 0 is ROS time not yet known: what it publishes before the first /clock reaches it)
    stamped = ros.wait_for_message("/arm2/joint_states", JointState, timeout=60.0, predicate=lambda m: _stamp(m) > 0)
    assert _stamp(stamped) >= _seconds(started.clock) - 1e-9
    for bringup in (first, second):
        assert bringup.stop(timeout=10.0) == 0, bringup.log()
