"""trajectory_planner_node's retime_trajectory service: a stack's JointTrajectory retimed for minimum time under the
model's limits (planning.retime through TrajectoryPlanner.retime), with its predicted execution."""

from discrete_robot_interfaces.srv import RetimeTrajectory

from discrete_robot.errors import DiscreteRobotError, InputError
from discrete_robot.nodes.plan_messages import trajectory_msg
from discrete_robot.planning.planner import TrajectoryPlanner
from discrete_robot.validation import printable

SERVICE = "retime_trajectory"


def retime_response(planner: TrajectoryPlanner, request: RetimeTrajectory.Request,
                    response: RetimeTrajectory.Response) -> RetimeTrajectory.Response:
    """Fill ``response`` for ``request`` (RetimeTrajectory.srv); a malformed request answers success=false with a
    reason that names the field."""
    try:
        if request.execute:
            # executing needs the node's action client and the measured-against-predicted report (issue #39 item 4)
            raise InputError("execute: not supported by retime_trajectory yet; execute the returned trajectory "
                             "through follow_joint_trajectory")
        # 0 means "unset" in a ROS request: the automatic effort margin, and the full velocity limits
        velocity_scale = request.velocity_scale if request.velocity_scale != 0.0 else 1.0
        plan = planner.retime([point.positions for point in request.trajectory.points],
                              request.trajectory.joint_names, request.effort_scale, velocity_scale)
    except DiscreteRobotError as error:
        response.success = False
        response.message = printable(error)     # a joint name may hold a right-to-left override
        return response
    predicted = plan.predicted
    response.success = True
    response.trajectory = trajectory_msg(plan)
    response.duration = plan.duration
    response.joint_names = list(predicted.joint_names)
    response.predicted_max_tracking_error = predicted.max_tracking_error.tolist()
    response.predicted_peak_effort_fraction = predicted.peak_effort_fraction.tolist()
    response.predicted_end_lag = predicted.end_lag
    response.goal_tolerance = predicted.goal_tolerance.tolist()
    response.predicted_meets_tolerances = predicted.meets_tolerances
    response.message = (f"retime: {plan.duration:.4f} s, {len(plan.t)} points, effort scale "
                        f"{plan.details['effort_scale']}; {predicted.message()}")
    return response
