"""Two arms in one system (launch/two_arms.launch.py, here as two bringups): each under its own namespace and
TF frame prefix, one /clock that both worlds' stamps follow."""

import pytest

pytestmark = pytest.mark.ros


def _stamp(msg) -> float:
    return msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec


def test_two_namespaced_arms_share_one_clock_and_one_tf_tree(ros):
    from rosgraph_msgs.msg import Clock
    from sensor_msgs.msg import JointState
    from tf2_msgs.msg import TFMessage

    from discrete_robot.nodes.common import LATCHED_QOS

    first = ros.start("bringup", args=["--only", "discrete_robot_node", "--namespace", "arm1"])
    second = ros.start("bringup", args=["--only", "discrete_robot_node", "--namespace", "arm2"],
                       ros_args=["-p", "publish_clock:=false"])
    names = {ns: ros.wait_for_message(f"/{ns}/joint_states", JointState, timeout=60.0).name for ns in ("arm1", "arm2")}
    assert names["arm1"] == names["arm2"]
    ros.spin_until(lambda: ros.node.count_publishers("/clock") >= 1, 10.0)
    assert ros.node.count_publishers("/clock") == 1, "the follower must not publish a second /clock"

    # both worlds' frames on the one /tf, each under its own prefix; /tf_static hangs both from the world frame
    children, parents = set(), set()
    for _, msg in ros.collect("/tf", TFMessage, duration=2.0):
        children.update(t.child_frame_id for t in msg.transforms)
        parents.update(t.header.frame_id for t in msg.transforms)
    assert {c.split("/")[0] for c in children} == {"arm1", "arm2"}, sorted(children)
    assert {p.split("/")[0] for p in parents} == {"arm1", "arm2"}, sorted(parents)
    fixed = set()
    static = ros.node.create_subscription(TFMessage, "/tf_static", lambda m: fixed.update(
        (t.header.frame_id, t.child_frame_id.split("/")[0]) for t in m.transforms), LATCHED_QOS)
    ros.spin_until(lambda: {("world", "arm1"), ("world", "arm2")} <= fixed, 30.0)
    ros.node.destroy_subscription(static)
    assert {("world", "arm1"), ("world", "arm2")} <= fixed, sorted(fixed)

    # the follower stamps with the leader's simulated time: its stamps lie within the /clock values seen
    # around them (one publish period of slack), whatever the wall clock does
    window = {"clock": [], "arm2": []}
    subscriptions = [
        ros.node.create_subscription(Clock, "/clock", lambda m: window["clock"].append(
            m.clock.sec + 1e-9 * m.clock.nanosec), 100),
        ros.node.create_subscription(JointState, "/arm2/joint_states", lambda m: window["arm2"].append(_stamp(m)),
                                     100)]
    ros.spin_until(lambda: len(window["arm2"]) >= 20 and len(window["clock"]) >= 20, 60.0)
    for subscription in subscriptions:
        ros.node.destroy_subscription(subscription)
    period = 0.05
    inner = window["arm2"][2:-2]   # messages in flight at the window's edges may precede or follow it
    assert inner and min(window["clock"]) - period <= min(inner) and max(inner) <= max(window["clock"]) + period
    for bringup in (first, second):
        assert bringup.stop(timeout=10.0) == 0, bringup.log()
