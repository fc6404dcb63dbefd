"""trajectory_planner_node: minimum-time and minimum-effort plans on the discrete dynamic robot model.

Services
- ``plan_trajectory`` (discrete_robot_interfaces/PlanTrajectory): waypoints in the order of
  ``joint_names`` (empty = the model's), optional per-joint ``max_effort`` / ``max_velocity`` (empty =
  the model file's), ``method`` ``min_time`` (default) or ``min_effort`` (with ``duration`` and an
  optional ``time_step_hint``). The response's trajectory is in the model's joint order with positions,
  velocities, accelerations and efforts at every point (effort k = the force held from point k to k+1;
  the last point's = the torque holding the arm at the goal) and strictly increasing time_from_start.
  Any problem with the request (NaN, unknown or missing joint, waypoint outside the joint limits, torque
  limits that cannot hold the arm against gravity, unknown method) gives success=false and the reason;
  the node keeps serving.

Publishes
- ``joint_trajectory`` (trajectory_msgs/JointTrajectory, reliable, volatile): every successful plan, which
  ``discrete_robot_node`` executes.

Parameters: ``model_file`` (default the shipped config/planar_2link.yaml), ``grid_points``, ``smooth``,
``default_time_step``, ``max_min_effort_steps``, ``max_waypoints``, ``max_duration``, ``request_timeout``
(config/trajectory_planner.yaml). The planning itself is
:class:`discrete_robot.planning.planner.TrajectoryPlanner`.

Bounded work: a request with more than ``max_waypoints`` waypoints is refused, and planning stops after
``request_timeout`` seconds with a refusal. The node runs on a multi-threaded executor with the service in
its own callback group, so a long plan never blocks its parameter services, and Ctrl-C ends it at once
(the planner polls :data:`discrete_robot.budget.STOP`).
"""

from builtin_interfaces.msg import Duration
from discrete_robot_interfaces.srv import PlanTrajectory
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from discrete_robot.budget import limited
from discrete_robot.errors import DiscreteRobotError
from discrete_robot.model.description import load_model, package_config_path
from discrete_robot.nodes.common import (
    STATE_QOS,
    GuardedNode,
    ParameterSpec,
    declare_parameters,
    node_main,
    positive,
    seconds_to_duration_fields,
)
from discrete_robot.planning.planner import PlannedTrajectory, PlannerSettings, TrajectoryPlanner

DEFAULT_MODEL = "planar_2link.yaml"

PARAMETERS = [
    ParameterSpec("model_file", "", "robot model YAML (docs/model_format.md, fixed base); empty = the shipped "
                                    f"config/{DEFAULT_MODEL}", read_only=True),
    ParameterSpec("grid_points", 100, "min_time: number of path nodes over the whole path",
                  check=lambda v: None if v >= 3 else "must be >= 3", value_range=(3, 100000), read_only=True),
    ParameterSpec("smooth", False, "min_time: pass interior waypoints without stopping (spline path, NLP)",
                  read_only=True),
    ParameterSpec("default_time_step", 0.033, "min_effort: DMOC time step when the request gives none, s",
                  check=positive, value_range=(1e-4, 1.0), read_only=True),
    ParameterSpec("max_min_effort_steps", 200, "min_effort: largest number of steps (duration / time step)",
                  check=lambda v: None if v >= 2 else "must be >= 2", value_range=(2, 100000), read_only=True),
    ParameterSpec("max_waypoints", 50, "largest number of waypoints in one request",
                  check=lambda v: None if v >= 2 else "must be >= 2", value_range=(2, 10000), read_only=True),
    ParameterSpec("max_duration", 3600.0, "longest plan answered, s (a longer one means limits too small to be "
                  "meant)", check=positive, value_range=(1.0, 1e6), read_only=True),
    ParameterSpec("request_timeout", 10.0, "wall-clock budget of one request, s; planning stops after it and the "
                  "request is refused", check=positive, value_range=(0.01, 600.0)),
]


def trajectory_msg(plan: PlannedTrajectory) -> JointTrajectory:
    """The plan as a JointTrajectory (header stamp zero: start on receipt)."""
    msg = JointTrajectory(joint_names=list(plan.joint_names))
    for k, t in enumerate(plan.t):
        sec, nanosec = seconds_to_duration_fields(float(t))
        msg.points.append(JointTrajectoryPoint(
            positions=plan.positions[k].tolist(), velocities=plan.velocities[k].tolist(),
            accelerations=plan.accelerations[k].tolist(), effort=plan.efforts[k].tolist(),
            time_from_start=Duration(sec=sec, nanosec=nanosec)))
    return msg


class TrajectoryPlannerNode(GuardedNode):
    """Serves plan_trajectory for one robot model and publishes each plan on joint_trajectory."""

    NODE_NAME = "trajectory_planner_node"
    MULTI_THREADED = True

    def __init__(self, **kwargs):
        super().__init__(self.NODE_NAME, **kwargs)
        values = declare_parameters(self, PARAMETERS)
        self.values = values
        path = values["model_file"] or str(package_config_path(DEFAULT_MODEL))
        model = load_model(path)
        settings = PlannerSettings(grid_points=values["grid_points"], smooth=values["smooth"],
                                   time_step=values["default_time_step"],
                                   max_min_effort_steps=values["max_min_effort_steps"],
                                   max_waypoints=values["max_waypoints"], max_duration=values["max_duration"])
        self.planner = TrajectoryPlanner(model, settings)
        self.trajectory_pub = self.create_publisher(JointTrajectory, "joint_trajectory", STATE_QOS)
        self.add_post_set_parameters_callback(
            lambda parameters: self.values.update({p.name: p.value for p in parameters}))
        self.create_service(PlanTrajectory, "plan_trajectory", self.on_plan,
                            callback_group=MutuallyExclusiveCallbackGroup())
        self.get_logger().info(f"planning for '{model.name}' ({', '.join(model.joint_names)}) from {path}")

    def on_plan(self, request: PlanTrajectory.Request, response: PlanTrajectory.Response):
        try:
            with limited(self.values["request_timeout"]):
                plan = self.planner.plan([p.positions for p in request.waypoints], request.joint_names,
                                         request.max_effort, request.max_velocity, request.method, request.duration,
                                         request.time_step_hint)
            response.trajectory = trajectory_msg(plan)
        except DiscreteRobotError as error:
            response.success = False
            response.message = str(error)
            self.get_logger().warning(f"plan_trajectory refused: {error}")
            return response
        response.duration = plan.duration
        response.success = True
        response.message = (f"{plan.method.value}: {plan.duration:.4f} s, {len(plan.t)} points "
                            + ", ".join(f"{k} {v:.4g}" if isinstance(v, float) else f"{k} {v}"
                                        for k, v in plan.details.items()))
        self.trajectory_pub.publish(response.trajectory)
        self.get_logger().info(f"planned {response.message}")
        return response


main = node_main(TrajectoryPlannerNode)
