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
``default_time_step``, ``max_min_effort_steps`` (config/trajectory_planner.yaml). The planning itself is
:class:`discrete_robot.planning.planner.TrajectoryPlanner`.
"""

from builtin_interfaces.msg import Duration
from discrete_robot_interfaces.srv import PlanTrajectory
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

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

    def __init__(self, **kwargs):
        super().__init__(self.NODE_NAME, **kwargs)
        values = declare_parameters(self, PARAMETERS)
        path = values["model_file"] or str(package_config_path(DEFAULT_MODEL))
        model = load_model(path)
        settings = PlannerSettings(grid_points=values["grid_points"], smooth=values["smooth"],
                                   time_step=values["default_time_step"],
                                   max_min_effort_steps=values["max_min_effort_steps"])
        self.planner = TrajectoryPlanner(model, settings)
        self.trajectory_pub = self.create_publisher(JointTrajectory, "joint_trajectory", STATE_QOS)
        self.create_service(PlanTrajectory, "plan_trajectory", self.on_plan)
        self.get_logger().info(f"planning for '{model.name}' ({', '.join(model.joint_names)}) from {path}")

    def on_plan(self, request: PlanTrajectory.Request, response: PlanTrajectory.Response):
        try:
            plan = self.planner.plan([p.positions for p in request.waypoints], request.joint_names,
                                     request.max_effort, request.max_velocity, request.method, request.duration,
                                     request.time_step_hint)
        except DiscreteRobotError as error:
            response.success = False
            response.message = str(error)
            self.get_logger().warning(f"plan_trajectory refused: {error}")
            return response
        response.trajectory = trajectory_msg(plan)
        response.duration = plan.duration
        response.success = True
        response.message = (f"{plan.method.value}: {plan.duration:.4f} s, {len(plan.t)} points "
                            + ", ".join(f"{k} {v:.4g}" if isinstance(v, float) else f"{k} {v}"
                                        for k, v in plan.details.items()))
        self.trajectory_pub.publish(response.trajectory)
        self.get_logger().info(f"planned {response.message}")
        return response


main = node_main(TrajectoryPlannerNode)
