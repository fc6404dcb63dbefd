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
- ``retime_trajectory`` (discrete_robot_interfaces/RetimeTrajectory): a stack's JointTrajectory (any joint
  order, timing ignored) timed for minimum time along the cubic spline through its points.

Every plan carries its predicted execution (discrete_robot.planning.prediction: the plan run through the
simulator's model and tracking, faster than real time): per joint the largest tracking error and peak effort
fraction, the end lag, the goal tolerance, and whether the tolerances hold; the message says it in one line.
``effort_scale`` 0 with the model's limits (min_time, retime) takes the largest of 1, 0.9, …, 0.5 whose
predicted execution meets the goal tolerance within MoveIt's 1.2 × duration + 0.5 s; 1 is the true minimum time.

Planning from the arm's state: the node follows ``joint_states``; a request that omits the start
(``from_current_state``, or a single waypoint) plans from the arm's measured positions, a request whose
first waypoint lies more than ``start_tolerance`` from them is refused with the distance, and so is any
request while the arm moves faster than ``rest_tolerance`` (plans start at rest).

Execution (both services): with ``execute`` the plan is sent as a goal to
``<controller_name>/follow_joint_trajectory`` (control_msgs/FollowJointTrajectory) and the service answers when
the result arrives: success only if the goal succeeded, ``execution_error_code`` its error code, the
trajectory's header.stamp the simulated time at which execution began (from the first feedback), and the
measured largest tracking error and end lag (on joint_states) beside the predicted ones. A server that does not
answer within ``execution_timeout`` wall-clock seconds beyond the plan's duration has the goal canceled and the
request fails (discrete_robot.nodes.plan_services).

Publishes, for display only (``publish_plans``; each successful plan, executed or not; latched, so a viewer
started later shows the last plan). A plan never moves the arm unless ``execute`` asks: nothing is published
on a controller's command topic (``<controller>/joint_trajectory``, which the simulator tracks).
- ``planned_trajectory`` (trajectory_msgs/JointTrajectory): the plan, as the service answers it.
- ``planned_path`` (visualization_msgs/MarkerArray): the tool point's path through the plan (the model's
  fingertip, else the tip of its last link), a LINE_STRIP in ``<frame_prefix><base link>``, stamped with the
  node clock, for RViz's or Foxglove's 3D view.
MoveIt publishes its plans on ``display_planned_path`` as moveit_msgs/DisplayTrajectory (moveit2
moveit_ros/planning/planning_pipeline/src/planning_pipeline.cpp, DISPLAY_PATH_TOPIC). moveit_msgs has no
wheel, so the embedded runtime cannot publish that type, and the topic is left to MoveIt rather than used
with another type, which would clash with MoveIt's own publishers and RViz's MotionPlanning display.

Parameters: ``model_file`` (default the shipped config/planar_2link.yaml), ``grid_points``, ``smooth``,
``default_time_step``, ``max_min_effort_steps``, ``max_waypoints``, ``max_duration``, ``request_timeout``,
``start_tolerance``, ``rest_tolerance``, ``publish_plans``, ``frame_prefix``, ``controller_name``,
``goal_time_tolerance``, ``execution_timeout`` (config/trajectory_planner.yaml). The planning itself is
:class:`discrete_robot.planning.planner.TrajectoryPlanner`.

Bounded work: a request with more than ``max_waypoints`` waypoints is refused. Each method (and retime) plans in a
lane of its own (discrete_robot.nodes.work_lanes), one request at a time, so a min_time request never waits behind
min_effort solves; a request is answered within ``request_timeout`` of its arrival, its wait included: one whose
turn comes after that is refused at once with the reason, and planning stops when it runs out. Every request is
kept (SERVICE_QOS). Parameter services answer during a long plan (a multi-threaded executor: a thread per lane and
two more), and Ctrl-C ends the node at once (the planner polls :data:`discrete_robot.budget.STOP`).
"""

import numpy as np
from discrete_robot_interfaces.srv import PlanTrajectory, RetimeTrajectory
from rclpy.callback_groups import ReentrantCallbackGroup
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectory
from visualization_msgs.msg import MarkerArray

from discrete_robot.errors import DiscreteRobotError, InputError
from discrete_robot.model.description import package_config_path
from discrete_robot.nodes.guarded import GuardedNode, refuse
from discrete_robot.nodes.parameters import (
    ROBOT_DESCRIPTION,
    TIP_LINK,
    ParameterSpec,
    declare_parameters,
    model_file,
    node_model,
    positive,
)
from discrete_robot.nodes.plan_messages import PATH_TOPIC, path_markers, tool_point
from discrete_robot.nodes.plan_services import RETIME_SERVICE, PlanExecutor, fill_plan_response, retimed
from discrete_robot.nodes.qos import LATCHED_QOS, STATE_QOS
from discrete_robot.nodes.spin import node_main
from discrete_robot.nodes.work_lanes import Lane
from discrete_robot.planning.planner import ArmState, PlannerSettings, TrajectoryPlanner
from discrete_robot.validation import finite_vector, printable

DEFAULT_MODEL = "planar_2link.yaml"
#: display topics (module docstring)
PLAN_TOPIC = "planned_trajectory"

PARAMETERS = [
    model_file(DEFAULT_MODEL),
    ROBOT_DESCRIPTION,
    TIP_LINK,
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
    ParameterSpec("request_timeout", 60.0, "wall-clock budget of one request, s; planning stops after it and the "
                  "request is refused", check=positive, value_range=(0.01, 600.0)),
    ParameterSpec("start_tolerance", 0.05, "largest distance of a request's first waypoint from the arm's "
                  "joint_states, rad or m", check=positive, value_range=(1e-6, 1e3), read_only=True),
    ParameterSpec("rest_tolerance", 0.05, "fastest joint speed in joint_states still taken as at rest for a "
                  "plan's start, rad/s or m/s", check=positive, value_range=(1e-6, 1e3), read_only=True),
    ParameterSpec("publish_plans", True, f"publish every plan for display on {PLAN_TOPIC} and {PATH_TOPIC} "
                  "(never on a command topic)"),
    ParameterSpec("frame_prefix", "", "prefix of the TF frames, as the simulator's: planned_path's frame is "
                                      "<frame_prefix><base link>", read_only=True),
    ParameterSpec("controller_name", "joint_trajectory_controller", "execute: the action is "
                  "<controller_name>/follow_joint_trajectory", read_only=True),
    ParameterSpec("goal_time_tolerance", 1.0, "execute: the goal's goal_time_tolerance, s", check=positive,
                  value_range=(0.0, 60.0)),
    ParameterSpec("execution_timeout", 30.0, "execute: wall-clock seconds beyond the plan's duration to wait for "
                  "the result before canceling", check=positive, value_range=(0.1, 3600.0)),
]

def arm_state(msg: JointState, joints) -> ArmState:
    """The arm's state in the model's joint order from a JointState naming every joint (velocities default 0)."""
    index = {name: i for i, name in enumerate(msg.name)}
    missing = [name for name in joints if name not in index]
    if missing or len(msg.position) != len(msg.name) or len(msg.velocity) not in (0, len(msg.name)):
        raise InputError(f"joint_states: expected positions (and velocities) for {list(joints)}, got names "
                         f"{list(msg.name)} with {len(msg.position)} positions, {len(msg.velocity)} velocities")
    order = [index[name] for name in joints]
    positions = finite_vector(np.asarray(msg.position)[order], len(joints), "joint_states.position")
    velocities = (np.zeros(len(joints)) if len(msg.velocity) == 0 else
                  finite_vector(np.asarray(msg.velocity)[order], len(joints), "joint_states.velocity"))
    return ArmState(positions, velocities)


class TrajectoryPlannerNode(GuardedNode):
    """Serves plan_trajectory for one robot model: plans, publishes the plan for display, executes it if asked."""

    NODE_NAME = "trajectory_planner_node"
    MULTI_THREADED = True
    THREADS = 5     # a thread per lane and two more

    def __init__(self, **kwargs):
        super().__init__(self.NODE_NAME, **kwargs)
        values = declare_parameters(self, PARAMETERS)
        self.values = values
        model = node_model(values, package_config_path(DEFAULT_MODEL))
        settings = PlannerSettings(grid_points=values["grid_points"], smooth=values["smooth"],
                                   time_step=values["default_time_step"],
                                   max_min_effort_steps=values["max_min_effort_steps"],
                                   max_waypoints=values["max_waypoints"], max_duration=values["max_duration"],
                                   start_tolerance=values["start_tolerance"],
                                   rest_tolerance=values["rest_tolerance"])
        self.planner = TrajectoryPlanner(model, settings)
        self.current: ArmState | None = None
        self.model, self.tool = model, tool_point(model)
        self.path_frame = values["frame_prefix"] + model.base.name
        self.plan_pub = self.create_publisher(JointTrajectory, PLAN_TOPIC, LATCHED_QOS)
        self.path_pub = self.create_publisher(MarkerArray, PATH_TOPIC, LATCHED_QOS)
        self.create_subscription(JointState, "joint_states", self.on_joint_states, STATE_QOS)
        self.add_post_set_parameters_callback(
            lambda parameters: self.values.update({p.name: p.value for p in parameters}))
        self.executor_of_plans = PlanExecutor(self, f"{values['controller_name']}/follow_joint_trajectory")
        self.lanes = {method: Lane(self, method) for method in ("min_time", "min_effort", "retime")}
        self.create_service(PlanTrajectory, "plan_trajectory", self.on_plan, callback_group=ReentrantCallbackGroup())
        self.create_service(RetimeTrajectory, RETIME_SERVICE, self.on_retime, callback_group=ReentrantCallbackGroup())
        self.get_logger().info(f"planning for '{model.name}' ({', '.join(model.joint_names)})")

    def on_joint_states(self, msg: JointState) -> None:
        self.current = arm_state(msg, self.planner.joint_names)
        self.executor_of_plans.on_joint_states(msg, self.current)

    async def on_plan(self, request: PlanTrajectory.Request, response: PlanTrajectory.Response):
        # an unknown method is refused by the planner, at once: the cheap lane
        lane = self.lanes["min_effort" if request.method == "min_effort" else "min_time"]
        return await self._answer(lane, request, response, lambda: self._planned(request))

    async def on_retime(self, request: RetimeTrajectory.Request, response: RetimeTrajectory.Response):
        return await self._answer(self.lanes["retime"], request, response,
                                  lambda: retimed(self.planner, request))

    def _planned(self, request: PlanTrajectory.Request):
        plan = self.planner.plan([p.positions for p in request.waypoints], request.joint_names, request.max_effort,
                                 request.max_velocity, request.method, request.duration, request.time_step_hint,
                                 current=self.current, from_current_state=request.from_current_state,
                                 effort_scale=request.effort_scale)
        return plan, (f"{plan.method.value}: {plan.duration:.4f} s, {len(plan.t)} points, "
                      + ", ".join(f"{k} {v:.4g}" if isinstance(v, float) else f"{k} {v}"
                                  for k, v in plan.details.items() if k != "predicted"))

    async def _answer(self, lane: Lane, request, response, plan_it):
        """Plan in ``lane`` (``plan_it()`` gives the plan and its summary), answer, show it and execute if asked."""
        try:
            async with lane.turn(self.values["request_timeout"]):
                plan, message = plan_it()
        except DiscreteRobotError as error:
            # a joint name may hold a right-to-left override
            self.get_logger().warning(f"{lane.name} refused: {printable(error)}")
            return refuse(response, printable(error))
        fill_plan_response(response, plan, message)
        self.get_logger().info(f"planned {response.message}")
        if self.values["publish_plans"]:
            self.plan_pub.publish(response.trajectory)
            self.path_pub.publish(path_markers(self.model, self.tool, plan.positions, self.path_frame,
                                               self.get_clock().now().to_msg()))
        if request.execute:
            return await self.executor_of_plans.execute(response, plan)
        return response


main = node_main(TrajectoryPlannerNode)
