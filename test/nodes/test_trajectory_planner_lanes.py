"""trajectory_planner_node under concurrent requests (issue 41): a min_time plan is not queued behind min_effort
solves, and a min_effort request whose turn comes after its request_timeout is refused with that reason.
Ordering and reasons only: no wall-clock assertion."""

import pytest

pytestmark = pytest.mark.ros

START, GOAL = [0.0, 0.0], [1.5708, 0.7854]
#: s; a min_effort solve below (4000 DMOC steps) takes a good part of it, so of six queued the last cannot start
REQUEST_TIMEOUT = 10.0


def _request(**fields):
    from discrete_robot_interfaces.srv import PlanTrajectory
    from trajectory_msgs.msg import JointTrajectoryPoint

    return PlanTrajectory.Request(waypoints=[JointTrajectoryPoint(positions=p) for p in (START, GOAL)], **fields)


def test_min_time_is_answered_while_min_effort_solves_queue_and_late_ones_are_refused(ros):
    from discrete_robot_interfaces.srv import PlanTrajectory

    from discrete_robot.nodes.common import SERVICE_QOS

    ros.start("trajectory_planner_node", params={"grid_points": 20, "request_timeout": REQUEST_TIMEOUT,
                                                 "max_min_effort_steps": 4000})
    ros.wait_for_service(PlanTrajectory, "plan_trajectory", timeout=30.0)
    # the first plan of a process loads its compiled kernels: not while the min_effort solves share the CPU
    assert ros.call(PlanTrajectory, "plan_trajectory", _request(method="min_time"), timeout=120.0).success
    client = ros.node.create_client(PlanTrajectory, "plan_trajectory", qos_profile=SERVICE_QOS)
    answered: list[str] = []          # request names in the order their answers arrived

    def send(name: str, request):
        future = client.call_async(request)
        future.add_done_callback(lambda _: answered.append(name))
        return future

    efforts = [send(f"min_effort {i}", _request(method="min_effort", duration=20.0, time_step_hint=0.005))
               for i in range(6)]
    ros.spin_until(lambda: False, 0.2)             # the min_effort requests reach the node first
    quick = send("min_time", _request(method="min_time"))
    assert ros.spin_until(lambda: quick.done() and all(f.done() for f in efforts), 6 * REQUEST_TIMEOUT + 120.0), \
        f"answers: {answered}\n{ros.logs()}"

    assert quick.result().success, quick.result().message
    assert answered[0] == "min_time", f"the min_time plan waited behind min_effort solves: {answered}"
    late = [f.result().message for f in efforts if "not started within request_timeout" in f.result().message]
    assert late, [f.result().message for f in efforts]
    assert all(f"= {REQUEST_TIMEOUT:g} s" in reason and "min_effort request(s) were ahead" in reason
               for reason in late), late
