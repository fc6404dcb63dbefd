"""Issue 39, executed against predicted: on the UR5 URDF, a stack's 50-point path retimed at the default margin and
a min_time plan at the default margin, each executed through FollowJointTrajectory on discrete_robot_node (its
default 1 ms step and gains), meet the goal tolerance within MoveIt's 1.2 × duration + 0.5 s. The measured
largest tracking error is within 20 % (or 1e-3 rad) of the predicted one and the measured end lag within 20 ms of
the predicted one (joint_states at 100 Hz: the measured lag is on a 10 ms grid)."""

import numpy as np
import pytest

pytestmark = pytest.mark.ros


def _path(count: int) -> np.ndarray:
    """A smooth 6-joint path sampled at ``count`` points, as a sampling planner returns one, rad."""
    u = np.linspace(0.0, 1.0, count)[:, None]
    return 0.8 * np.sin(np.pi * u * np.array([1.0, 1.5, 0.7, 2.0, 1.2, 0.5]) + np.linspace(0.1, 0.9, 6))


def _check(response, name: str) -> None:
    assert response.success, f"{name}: {response.message}"
    assert response.execution_error_code == 0
    predicted, measured = (np.array(response.predicted_max_tracking_error),
                           np.array(response.measured_max_tracking_error))
    print(f"{name}: {response.duration:.3f} s; error predicted {predicted.round(5)}, measured {measured.round(5)}; "
          f"lag predicted {response.predicted_end_lag:.3f} s, measured {response.measured_end_lag:.3f} s")
    assert response.predicted_meets_tolerances
    assert response.measured_end_lag <= 0.2 * response.duration + 0.5
    assert np.all(np.abs(measured - predicted) <= np.maximum(0.2 * predicted, 1e-3)), (predicted, measured)
    assert abs(response.measured_end_lag - response.predicted_end_lag) <= 0.02


@pytest.mark.slow
def test_retimed_and_min_time_plans_execute_as_predicted_on_the_ur5(ros):
    from discrete_robot_interfaces.srv import PlanTrajectory, RetimeTrajectory
    from sensor_msgs.msg import JointState
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

    from discrete_robot.model.description import load_model
    from discrete_robot.model.example_robots import example_robot_path

    urdf = str(example_robot_path("ur5"))
    names = list(load_model(urdf).joint_names)
    path = _path(50)
    ros.start("discrete_robot_node", params={"model_file": urdf, "initial_positions": path[0].tolist()})
    ros.start("trajectory_planner_node", params={"model_file": urdf})
    ros.wait_for_message("joint_states", JointState, timeout=60.0)
    ros.spin_until(lambda: ros.node.count_subscribers("joint_states") >= 2, 10.0)
    stack = JointTrajectory(joint_names=names, points=[JointTrajectoryPoint(positions=list(p)) for p in path])
    retimed = ros.call(RetimeTrajectory, "retime_trajectory", RetimeTrajectory.Request(trajectory=stack, execute=True),
                       timeout=300.0)
    _check(retimed, "retime")
    # a plan starts from rest, as it is predicted: the held arm settles from the retimed goal (within the stopped
    # velocity tolerance, 0.01 rad/s, when that goal succeeded) before the next plan is asked for
    ros.wait_for_message("joint_states", JointState, timeout=60.0,
                         predicate=lambda m: np.max(np.abs(m.velocity)) < 1e-4)
    back = JointTrajectoryPoint(positions=path[0].tolist())
    planned = ros.call(PlanTrajectory, "plan_trajectory", PlanTrajectory.Request(waypoints=[back], execute=True),
                       timeout=300.0)
    _check(planned, "min_time")


def test_a_plan_predicted_never_to_settle_answers_minus_one_for_its_lag(ros):
    """A min_time plan of the 2-link arm on a 20-point grid that its tracking cannot follow (found by `make soak`:
    the answer carried an infinite lag, which the node's guard refused as an internal error): the plan is answered,
    its predicted lag is −1 (not met within twice the allowed lag) and the message says it will lag."""
    from discrete_robot_interfaces.srv import PlanTrajectory
    from trajectory_msgs.msg import JointTrajectoryPoint

    ros.start("trajectory_planner_node", params={"grid_points": 20})
    ros.wait_for_service(PlanTrajectory, "plan_trajectory", 30.0)
    waypoints = [[0.6073199756776233, -0.14585056354006443], [0.2121122626301155, -0.8943396673879895]]
    response = ros.call(PlanTrajectory, "plan_trajectory", PlanTrajectory.Request(
        waypoints=[JointTrajectoryPoint(positions=p) for p in waypoints], method="min_time"), timeout=120.0)
    assert response.success, response.message
    assert response.predicted_end_lag == -1.0 and not response.predicted_meets_tolerances
    assert "will LAG past the allowed time" in response.message
