"""RosSession, the client side of the experiments and of these tests: what it leaves behind when closed."""

import pytest


@pytest.mark.ros
def test_a_closed_session_leaves_the_graph_though_its_node_has_actions_and_clients(ros):
    """close() releases the node (and the DDS participant under it) at once, actions included.

    An rclpy ActionClient is not destroyed with its node and keeps the node alive: before close() destroyed the
    node's actions, the node stayed in the graph until the interpreter's teardown, and
    `experiment plan-execute` once did not exit after printing its summary."""
    from control_msgs.action import FollowJointTrajectory
    from rclpy.action import ActionClient, ActionServer
    from std_srvs.srv import Trigger

    from discrete_robot.ros.session import RosSession, RosTimeoutError

    session = RosSession("closing_session")
    name = session.node.get_name()
    with pytest.raises(RosTimeoutError):
        session.send_goal(FollowJointTrajectory, "closing_session/no_action", FollowJointTrajectory.Goal(),
                          timeout=0.1)
    with pytest.raises(RosTimeoutError):
        session.call(Trigger, "closing_session/no_service", Trigger.Request(), timeout=0.1)
    # a caller's own on the session's node, as the node tests make them
    ActionClient(session.node, FollowJointTrajectory, "closing_session/own_client")
    ActionServer(session.node, FollowJointTrajectory, "closing_session/own_server", lambda handle: None)

    def in_graph() -> bool:
        return name in ros.node.get_node_names()

    assert ros.spin_until(in_graph, 60.0), f"{name} never appeared in the graph"
    session.close()
    # ~0.1 s here; 60 s, as the harness waits for a message, because a busy machine delays discovery
    assert ros.spin_until(lambda: not in_graph(), 60.0), f"{name} is still in the graph after close()"
