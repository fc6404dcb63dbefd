"""manipulation_node: the simulated arm pushes a table-top object to a goal pose (docs/manipulation.md).

Action
- ``push_object`` (discrete_robot_interfaces/PushObject): plans the pushes (core:
  :mod:`discrete_robot.manipulation.push_to_pose`), sends the finger motion as a goal to the arm's
  ``<controller_name>/follow_joint_trajectory`` and reports the object's pose and the push under way as
  feedback; the result holds the final pose, its error to the goal and the largest difference between the
  executed and the planned object path. Success: the arm's goal succeeded and the object ended within
  ``position_tolerance`` and ``angle_tolerance`` of the goal. A goal its start already meets (within those
  tolerances) succeeds at once, and the arm does not move. A bad goal (NaN, off the table, unreachable, no
  push found) is aborted with the reason, and nothing runs. The action's goal, cancel and result services keep
  every request (KEEP_ALL); so does its client of the arm's action. A goal that arrives before the arm's first
  ``joint_states`` waits for them for up to ``STATE_WAIT_S`` (2 s of wall-clock time).

The object follows the real fingertip: every ``joint_states`` message of the arm places the fingertip by
forward kinematics, and the object moves by the minimum-power model from the fingertip's previous position
(:class:`discrete_robot.manipulation.chain.PushedObjectState`). No state is dropped (``JOINT_STATE_QOS``
on both ends), and a goal's result is taken once the object has followed the states up to the arm's last
feedback.

Publishes (at ``publish_rate``, stamped with the time of the last joint_states, i.e. simulated time)
- ``manipulation/object_pose`` (geometry_msgs/PoseStamped, frame ``world``) and the TF frame ``object``;
- ``manipulation/fingertip`` (geometry_msgs/PointStamped): the fingertip centre;
- ``manipulation/markers`` (visualization_msgs/MarkerArray): table, object outline, fingertip, goal pose,
  planned and executed object paths.

Parameters: ``model_file`` (an arm with a fingertip; default config/planar_2link.yaml, as the simulator's),
``scene_file`` (default config/table_scene_<model name>.yaml), ``finger_radius``, ``max_push_speed``,
``reposition_speed``, ``position_tolerance``, ``angle_tolerance``, ``controller_name``, ``planning_timeout``,
``execution_timeout``, ``publish_rate`` (config/manipulation.yaml).
"""

import numpy as np
from builtin_interfaces.msg import Duration
from control_msgs.action import FollowJointTrajectory
from discrete_robot_interfaces.action import PushObject
from geometry_msgs.msg import Point, PointStamped, Pose2D, PoseStamped, TransformStamped, Vector3
from rclpy.action import ActionClient, ActionServer, CancelResponse
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.clock import Clock, ClockType
from rclpy.task import Future
from sensor_msgs.msg import JointState
from std_msgs.msg import ColorRGBA
from tf2_msgs.msg import TFMessage
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint
from visualization_msgs.msg import Marker, MarkerArray

from discrete_robot.budget import limited
from discrete_robot.config_files import regular_file
from discrete_robot.errors import DiscreteRobotError
from discrete_robot.geometry2d import to_world, yaw_quaternion
from discrete_robot.manipulation.arm import ArmFinger
from discrete_robot.manipulation.chain import PushedObjectState
from discrete_robot.manipulation.push_to_pose import (
    PushMotion,
    path_difference,
    plan_push_motion,
    pose_error,
    push_goal,
)
from discrete_robot.manipulation.scene import load_scene, scene_for
from discrete_robot.model.description import package_config_path
from discrete_robot.model.urdf import WORLD_FRAME
from discrete_robot.nodes.common import (
    ACTION_QOS,
    JOINT_STATE_QOS,
    ROBOT_DESCRIPTION,
    STATE_QOS,
    TIP_LINK,
    GuardedNode,
    ParameterSpec,
    declare_parameters,
    duration_seconds,
    node_main,
    node_model,
    non_negative,
    positive,
    quaternion_msg,
    ros_name,
    seconds_to_duration_fields,
)
from discrete_robot.nodes.trajectory_planner_node import arm_state

DEFAULT_MODEL = "planar_2link.yaml"
#: the share of the goal's tolerances a plan may use: the rest is the executed push's margin over its plan (a plan
#: that ends just inside 5 degrees ended the push at 5.01)
PLANNING_SHARE = 0.5
OBJECT_FRAME = "object"
#: wall-clock seconds to wait for the arm's FollowJointTrajectory server to be discovered
SERVER_WAIT_S = 2.0
#: wall-clock seconds a goal waits for the arm's first joint_states: a goal can arrive as soon as the action
#: server is discovered, before the joint_states subscription is matched
STATE_WAIT_S = 2.0
#: m: the executed-path marker gets a point where the object has moved this far from the last one. A point per
#: joint_states made the marker grow with the motion, and rebuilding it at publish_rate starved the node.
TRACE_SPACING = 1e-3

PARAMETERS = [
    ParameterSpec("model_file", "", f"arm model (YAML, URDF or xacro) with a fingertip or a tip_link; empty = "
                                    f"config/{DEFAULT_MODEL}", read_only=True),
    ROBOT_DESCRIPTION,
    TIP_LINK,
    ParameterSpec("scene_file", "", "table scene; empty = config/table_scene_<model name>.yaml", read_only=True),
    ParameterSpec("finger_radius", 0.0, "fingertip radius, m; 0 = the model file's", check=non_negative,
                  value_range=(0.0, 0.5), read_only=True),
    ParameterSpec("max_push_speed", 0.05, "fastest fingertip speed while it may touch the object, m/s",
                  check=positive, value_range=(1e-4, 1.0)),
    ParameterSpec("reposition_speed", 0.2, "fastest fingertip speed between pushes, m/s", check=positive,
                  value_range=(1e-4, 5.0)),
    ParameterSpec("position_tolerance", 0.01, "goal position tolerance, m", check=positive,
                  value_range=(1e-4, 1.0)),
    ParameterSpec("angle_tolerance", 0.0873, "goal angle tolerance, rad (5 degrees)", check=positive,
                  value_range=(1e-4, 3.2)),
    ParameterSpec("controller_name", "joint_trajectory_controller", "the arm's action is "
                  "<controller_name>/follow_joint_trajectory", check=ros_name(), read_only=True),
    ParameterSpec("planning_timeout", 60.0, "wall-clock budget of planning one goal, s (a plan takes seconds "
                                            "alone, several times that beside the simulators in one bringup)",
                  check=positive, value_range=(0.1, 600.0)),
    ParameterSpec("execution_timeout", 10.0, "wall-clock seconds without feedback from the arm after which its "
                  "goal is canceled (a slow simulator is waited for as long as it makes progress)", check=positive,
                  value_range=(0.1, 3600.0)),
    ParameterSpec("publish_rate", 20.0, "object pose, TF and markers, Hz", check=positive,
                  value_range=(0.1, 1000.0), read_only=True),
]


def _pose2d(pose) -> Pose2D:
    return Pose2D(x=float(pose[0]), y=float(pose[1]), theta=float(pose[2]))


def _time(stamp) -> tuple[int, int]:
    """A builtin_interfaces/Time as (sec, nanosec), which order as the times do."""
    return stamp.sec, stamp.nanosec


def _color(r, g, b, a=1.0) -> ColorRGBA:
    return ColorRGBA(r=float(r), g=float(g), b=float(b), a=float(a))


class ManipulationNode(GuardedNode):
    """Serves push_object with the simulated arm and keeps the object following its fingertip."""

    NODE_NAME = "manipulation_node"
    MULTI_THREADED = True

    def __init__(self, **kwargs):
        super().__init__(self.NODE_NAME, **kwargs)
        self.values = declare_parameters(self, PARAMETERS)
        self.add_post_set_parameters_callback(
            lambda parameters: self.values.update({p.name: p.value for p in parameters}))
        model = node_model(self.values, package_config_path(DEFAULT_MODEL))
        self.scene = (load_scene(regular_file(self.values["scene_file"], "scene_file")) if self.values["scene_file"]
                      else scene_for(model))      # the shipped scene of this arm, or one derived from its reach
        self.arm = ArmFinger.in_scene(model, self.scene, self.values["finger_radius"])
        self.pose = self.scene.start_pose.copy()
        self.obj = self.scene.obj
        self.contact_friction = self.scene.contact_friction
        self.state: PushedObjectState | None = None
        self.q: np.ndarray | None = None
        self.first_state = Future()
        self.stamp = None
        self.motion: PushMotion | None = None
        self.goal_pose: np.ndarray | None = None
        self.executed: list[np.ndarray] = []
        self.trace: list[Point] = []     # the executed path's marker points (TRACE_SPACING apart)
        self.awaited: tuple[tuple[int, int], Future] | None = None    # see states_through

        self.pose_pub = self.create_publisher(PoseStamped, "manipulation/object_pose", STATE_QOS)
        self.finger_pub = self.create_publisher(PointStamped, "manipulation/fingertip", STATE_QOS)
        self.tf_pub = self.create_publisher(TFMessage, "/tf", STATE_QOS)
        self.marker_pub = self.create_publisher(MarkerArray, "manipulation/markers", STATE_QOS)
        self.create_subscription(JointState, "joint_states", self.on_joint_states, JOINT_STATE_QOS)
        group = ReentrantCallbackGroup()
        self.arm_action = f"{self.values['controller_name']}/follow_joint_trajectory"
        self.arm_client = ActionClient(self, FollowJointTrajectory, self.arm_action, callback_group=group,
                                       **ACTION_QOS)
        self.action_server = ActionServer(
            self, PushObject, "push_object",
            self.guard("action push_object", self.execute, lambda reason: PushObject.Result(message=reason)),
            cancel_callback=lambda handle: CancelResponse.ACCEPT, callback_group=group, **ACTION_QOS)
        self.create_timer(1.0 / self.values["publish_rate"], self.publish,
                          clock=Clock(clock_type=ClockType.STEADY_TIME))
        self.get_logger().info(f"pushing with '{model.name}' (fingertip on {model.fingertip.link}) in the scene's "
                               f"table x {list(self.scene.table.x)}, y {list(self.scene.table.y)} m")

    # ------------------------------------------------------------------------------------- the object

    def on_joint_states(self, msg: JointState) -> None:
        q = arm_state(msg, self.arm.model.joint_names).positions
        finger = self.arm.position(q)
        if self.state is None:
            self.state = PushedObjectState(self.obj, self.pose, finger, self.arm.radius, self.contact_friction)
        else:
            self.state.follow(finger)
        if self.motion is not None:
            pose = self.state.pose.copy()
            self.executed.append(pose)
            if not self.trace or np.hypot(pose[0] - self.trace[-1].x, pose[1] - self.trace[-1].y) >= TRACE_SPACING:
                self.trace.append(Point(x=float(pose[0]), y=float(pose[1]), z=self.scene.table.height))
        # q last: a goal, on another thread, takes a known q to mean the object's state exists
        self.stamp, self.q = msg.header.stamp, q
        if not self.first_state.done():
            self.first_state.set_result(True)
        self._release_awaited()

    def _release_awaited(self) -> None:
        awaited = self.awaited
        if awaited is not None and self.stamp is not None and _time(self.stamp) >= awaited[0]:
            awaited[1].done() or awaited[1].set_result(True)

    async def states_through(self, stamp) -> None:
        """Wait until the object has followed the arm's joint_states up to ``stamp`` (simulated time, the arm's
        last feedback), at most execution_timeout wall-clock seconds: a node behind the arm's states would
        report the object before the last moves of the push."""
        self.awaited = (_time(stamp), Future())
        self._release_awaited()
        try:
            await self.wall_clock_result(self.awaited[1], self.values["execution_timeout"])
        finally:
            self.awaited = None

    def publish(self) -> None:
        if self.state is None:
            return
        x, y, theta = (float(v) for v in self.state.pose)
        rotation = quaternion_msg(yaw_quaternion(theta))
        pose = PoseStamped()
        pose.header.stamp, pose.header.frame_id = self.stamp, WORLD_FRAME
        pose.pose.position = Point(x=x, y=y, z=self.scene.table.height)
        pose.pose.orientation = rotation
        self.pose_pub.publish(pose)
        finger = PointStamped(point=Point(x=float(self.state.finger[0]), y=float(self.state.finger[1]),
                                          z=float(self.arm.height)))
        finger.header = pose.header
        self.finger_pub.publish(finger)
        transform = TransformStamped(child_frame_id=OBJECT_FRAME)
        transform.header = pose.header
        transform.transform.translation = Vector3(x=x, y=y, z=self.scene.table.height)
        transform.transform.rotation = rotation
        self.tf_pub.publish(TFMessage(transforms=[transform]))
        self.marker_pub.publish(self._markers())

    def _markers(self) -> MarkerArray:
        def marker(ns: str, kind: int, color: ColorRGBA, width: float = 0.003) -> Marker:
            m = Marker(ns=ns, id=0, type=kind, action=Marker.ADD, color=color)
            m.header.stamp, m.header.frame_id = self.stamp, WORLD_FRAME
            m.pose.orientation.w = 1.0
            m.scale = Vector3(x=width, y=width, z=width)
            return m

        def outline(ns: str, pose, color) -> Marker:
            m = marker(ns, Marker.LINE_STRIP, color)
            corners = to_world(pose, self.obj.footprint)
            m.points = [Point(x=float(px), y=float(py), z=z) for px, py in np.vstack([corners, corners[:1]])]
            return m

        def path(ns: str, points: list[Point], color) -> Marker:
            m = marker(ns, Marker.LINE_STRIP, color)
            m.points = points
            return m

        z = self.scene.table.height
        table = marker("manipulation/table", Marker.LINE_STRIP, _color(0.5, 0.4, 0.3))
        (x0, x1), (y0, y1) = self.scene.table.x, self.scene.table.y
        table.points = [Point(x=x, y=y, z=z) for x, y in ((x0, y0), (x1, y0), (x1, y1), (x0, y1), (x0, y0))]
        finger = marker("manipulation/fingertip", Marker.SPHERE, _color(1.0, 0.2, 0.1), 2 * self.arm.radius)
        finger.pose.position = Point(x=float(self.state.finger[0]), y=float(self.state.finger[1]),
                                     z=float(self.arm.height))
        markers = [table, outline("manipulation/object", self.state.pose, _color(0.2, 0.4, 1.0)), finger]
        if self.goal_pose is not None:
            markers.append(outline("manipulation/goal", self.goal_pose, _color(0.1, 0.8, 0.2)))
        if self.motion is not None and len(self.motion.planned_poses) > 1:
            planned = [Point(x=float(p[0]), y=float(p[1]), z=z) for p in self.motion.planned_poses]
            markers.append(path("manipulation/planned_path", planned, _color(0.6, 0.6, 0.6)))
        if len(self.trace) > 1:
            markers.append(path("manipulation/executed_path", self.trace, _color(0.2, 0.4, 1.0)))
        return MarkerArray(markers=markers)

    # ------------------------------------------------------------------------------------- the action

    async def execute(self, handle):
        """Plan, execute through the arm's action, report (module docstring)."""
        goal = handle.request
        result = PushObject.Result()
        if self.q is None:
            await self.wall_clock_result(self.first_state, STATE_WAIT_S)
        try:
            motion = self._plan(goal)
        except DiscreteRobotError as error:
            handle.abort()
            return self._failed(result, str(error))
        if motion is None:
            self._report(result, goal, None)
            handle.succeed()
            return result
        if not self.arm_client.wait_for_server(timeout_sec=SERVER_WAIT_S):
            handle.abort()
            return self._failed(result, f"no FollowJointTrajectory server at {self.arm_action}")
        self.motion, self.executed, self.trace = motion, [], []
        feedback = PushObject.Feedback(push_count=len(motion.plan.pushes))

        progress, last_stamp = [0], [None]

        def on_arm_feedback(message) -> None:
            progress[0] += 1
            last_stamp[0] = message.feedback.header.stamp
            elapsed = duration_seconds(message.feedback.actual.time_from_start)
            sample = min(int(np.searchsorted(motion.trajectory.t, elapsed)), len(motion.trajectory.t) - 1)
            feedback.push_index = int(motion.push_index[sample])
            feedback.object_pose = _pose2d(self.state.pose)
            handle.publish_feedback(feedback)

        arm_goal = await self.arm_client.send_goal_async(self._arm_goal(motion), feedback_callback=on_arm_feedback)
        if not arm_goal.accepted:
            handle.abort()
            return self._failed(result, f"{self.arm_action} rejected the finger motion")
        arm_result, seen = None, -1
        while arm_result is None and progress[0] != seen and not handle.is_cancel_requested:
            seen = progress[0]
            arm_result = await self.wall_clock_result(arm_goal.get_result_async(), self.values["execution_timeout"])
        if handle.is_cancel_requested:
            await arm_goal.cancel_goal_async()
            handle.canceled()
            return self._failed(result, "canceled")
        if last_stamp[0] is not None:
            await self.states_through(last_stamp[0])
        self._report(result, goal, motion)
        if arm_result is None:
            await arm_goal.cancel_goal_async()
            result.success = False
            result.message = (f"no progress from {self.arm_action} in execution_timeout = "
                              f"{self.values['execution_timeout']:g} s; goal canceled")
        elif arm_result.result.error_code != FollowJointTrajectory.Result.SUCCESSFUL:
            result.success = False
            result.message = f"the arm failed ({arm_result.result.error_code}): {arm_result.result.error_string}"
        (handle.succeed if result.success else handle.abort)()
        return result

    def _plan(self, goal) -> PushMotion | None:
        """The finger motion for ``goal``, or None when its start already meets the goal's tolerances."""
        if self.q is None:
            raise DiscreteRobotError(f"no joint_states from the arm in {STATE_WAIT_S:g} s: is its simulator running?")
        start = [goal.start.x, goal.start.y, goal.start.theta] if goal.use_start else self.state.pose
        request = push_goal(self.scene, [goal.goal.x, goal.goal.y, goal.goal.theta], start,
                            [[p.x, p.y] for p in goal.footprint], goal.normal_force, goal.support_friction,
                            goal.contact_friction)
        if self._within_tolerance(request.start, request.goal):
            self.obj, self.contact_friction, self.goal_pose = request.obj, request.contact_friction, request.goal
            self.state = PushedObjectState(request.obj, request.start, self.arm.position(self.q), self.arm.radius,
                                           request.contact_friction)
            return None
        with limited(self.values["planning_timeout"], "planning_timeout"):
            motion = plan_push_motion(self.arm, self.scene, request, self.q, self.values["max_push_speed"],
                                      self.values["reposition_speed"],
                                      PLANNING_SHARE * self.values["position_tolerance"],
                                      PLANNING_SHARE * self.values["angle_tolerance"])
        # the object as the request describes it, from its start, follows the fingertip from now on
        self.obj, self.contact_friction, self.goal_pose = request.obj, request.contact_friction, request.goal
        self.state = PushedObjectState(request.obj, request.start, self.arm.position(self.q), self.arm.radius,
                                       request.contact_friction)
        return motion

    def _arm_goal(self, motion: PushMotion) -> FollowJointTrajectory.Goal:
        trajectory = JointTrajectory(joint_names=list(self.arm.model.joint_names))
        for t, q, qd in zip(motion.trajectory.t, motion.trajectory.q, motion.trajectory.qd, strict=True):
            sec, nanosec = seconds_to_duration_fields(float(t), "finger motion time")
            trajectory.points.append(JointTrajectoryPoint(positions=q.tolist(), velocities=qd.tolist(),
                                                          time_from_start=Duration(sec=sec, nanosec=nanosec)))
        return FollowJointTrajectory.Goal(trajectory=trajectory)

    def _within_tolerance(self, pose, goal) -> bool:
        position, angle = pose_error(pose, goal)
        return position <= self.values["position_tolerance"] and abs(angle) <= self.values["angle_tolerance"]

    def _report(self, result, goal, motion: PushMotion | None) -> None:
        """The result of ``goal`` from the object's pose now; ``motion`` None: nothing was to be done."""
        final = self.state.pose
        position, angle = pose_error(final, [goal.goal.x, goal.goal.y, goal.goal.theta])
        planned = motion.planned_poses if motion is not None else final[None]
        result.final_pose = _pose2d(final)
        result.planned_poses = [_pose2d(p) for p in planned]
        result.position_error, result.angle_error = position, angle
        executed = np.array(self.executed) if self.executed else final[None]
        result.planned_vs_executed_position, result.planned_vs_executed_angle = path_difference(planned, executed)
        result.success = self._within_tolerance(final, [goal.goal.x, goal.goal.y, goal.goal.theta])
        if motion is None:
            result.message = (f"already at the goal: {position:.4f} m, {np.degrees(angle):.2f} deg off (within "
                              "position_tolerance and angle_tolerance); the arm did not move")
            return
        result.message = (f"{'reached' if result.success else 'missed'} the goal: {position:.4f} m, "
                          f"{np.degrees(angle):.2f} deg off after {len(motion.plan.pushes)} push(es); executed path "
                          f"within {result.planned_vs_executed_position:.4f} m, "
                          f"{np.degrees(result.planned_vs_executed_angle):.2f} deg of the plan")

    def _failed(self, result, reason: str):
        self.get_logger().warning(f"push_object: {reason}")
        result.success, result.message = False, reason
        if self.state is not None:
            result.final_pose = _pose2d(self.state.pose)
        return result


main = node_main(ManipulationNode)
