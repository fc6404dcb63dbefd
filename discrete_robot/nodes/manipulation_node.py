"""manipulation_node: the simulated arm pushes a table-top object to a goal pose (docs/manipulation.md).

Action
- ``push_object`` (discrete_robot_interfaces/PushObject): plans the pushes (discrete_robot.manipulation.
  push_to_pose), sends the finger motion as a goal to the arm's ``<controller_name>/follow_joint_trajectory`` and
  reports the object's pose and the push under way as feedback; the result holds the final pose, its error to the
  goal and the largest difference between the executed and the planned object path. Success: the arm's goal
  succeeded and the object ended within ``position_tolerance`` and ``angle_tolerance`` of the goal. A goal its
  start already meets succeeds at once, and the arm does not move. A bad goal (NaN, off the table, unreachable,
  no push found) is aborted with the reason. The action's services and its client of the arm's action keep every
  request (KEEP_ALL). A goal that arrives before the arm's first ``joint_states`` waits up to ``STATE_WAIT_S``.

The object follows the real fingertip, from every ``joint_states`` message of the arm (discrete_robot.simulation.
pushed_object; none dropped: ``JOINT_STATE_QOS`` on both ends); a goal's result is taken once the object has
followed the states up to the arm's last feedback.

Publishes (at ``publish_rate``, stamped with the time of the last joint_states, i.e. simulated time)
- ``manipulation/object_pose`` (geometry_msgs/PoseStamped, frame ``world``) and the TF frame ``object``;
- ``manipulation/fingertip`` (geometry_msgs/PointStamped): the fingertip centre;
- ``manipulation/markers`` (visualization_msgs/MarkerArray): table, object outline, fingertip, goal pose,
  planned and executed object paths.

Parameters: discrete_robot.nodes.manipulation_parameters (config/manipulation.yaml).
"""

import numpy as np
from control_msgs.action import FollowJointTrajectory
from discrete_robot_interfaces.action import PushObject
from geometry_msgs.msg import Point, PointStamped, PoseStamped
from rclpy.action import ActionClient, ActionServer, CancelResponse
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.clock import Clock, ClockType
from sensor_msgs.msg import JointState
from tf2_msgs.msg import TFMessage
from visualization_msgs.msg import MarkerArray

from discrete_robot.budget import limited
from discrete_robot.config_files import regular_file
from discrete_robot.errors import DiscreteRobotError
from discrete_robot.manipulation.arm import ArmFinger
from discrete_robot.manipulation.push_to_pose import (
    PushMotion,
    plan_push_motion,
    pose_error,
    push_goal,
)
from discrete_robot.manipulation.scene import load_scene, scene_for
from discrete_robot.model.description import package_config_path
from discrete_robot.model.urdf import WORLD_FRAME
from discrete_robot.nodes.common import (
    ACTION_QOS,
    ACTION_SERVER,
    JOINT_STATE_QOS,
    STATE_QOS,
    GuardedNode,
    declare_parameters,
    duration_seconds,
    node_main,
    node_model,
)
from discrete_robot.nodes.manipulation_parameters import DEFAULT_MODEL, PARAMETERS
from discrete_robot.nodes.markers import scene_markers
from discrete_robot.nodes.push_messages import finger_motion_goal, object_messages, pose2d, report
from discrete_robot.nodes.stamps import StampLatch
from discrete_robot.nodes.trajectory_planner_node import arm_state
from discrete_robot.simulation.pushed_object import FollowedObject

#: the share of the goal's tolerances a plan may use: the rest is the executed push's margin over its plan (a plan
#: that ends just inside 5 degrees ended the push at 5.01)
PLANNING_SHARE = 0.5
#: wall-clock seconds to wait for the arm's FollowJointTrajectory server to be discovered
SERVER_WAIT_S = 2.0
#: wall-clock seconds a goal waits for the arm's first joint_states: a goal can arrive as soon as the action
#: server is discovered, before the joint_states subscription is matched
STATE_WAIT_S = 2.0



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
        self.object = FollowedObject(self.arm, self.scene.obj, self.scene.start_pose.copy(),
                                     self.scene.contact_friction)
        self.q: np.ndarray | None = None
        self.stamp = None
        self.motion: PushMotion | None = None
        self.goal_pose: np.ndarray | None = None
        self.trace: list[Point] = []     # the executed path's marker points: object.trace's, at the table's height
        self.states = StampLatch()     # the object has followed the states up to a stamp: see execute

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
            cancel_callback=lambda handle: CancelResponse.ACCEPT, callback_group=group, **ACTION_SERVER)
        self.create_timer(1.0 / self.values["publish_rate"], self.publish,
                          clock=Clock(clock_type=ClockType.STEADY_TIME))
        self.get_logger().info(f"pushing with '{model.name}' (fingertip on {model.fingertip.link}) in the scene's "
                               f"table x {list(self.scene.table.x)}, y {list(self.scene.table.y)} m")

    # ------------------------------------------------------------------------------------- the object

    def on_joint_states(self, msg: JointState) -> None:
        q = arm_state(msg, self.arm.model.joint_names).positions
        self.object.follow(q)
        # q last: a goal, on another thread, takes a known q to mean the object's state exists
        self.stamp, self.q = msg.header.stamp, q
        self.states.saw(self.stamp)

    def publish(self) -> None:
        state = self.object.state
        if state is None:
            return
        z = self.scene.table.height
        self.trace.extend(Point(x=x, y=y, z=z) for x, y in self.object.trace[len(self.trace):])
        pose, finger, tf = object_messages(state.pose, state.finger, self.arm.height,
                                           self.scene.table.height, self.stamp)
        self.pose_pub.publish(pose)
        self.finger_pub.publish(finger)
        self.tf_pub.publish(tf)
        self.marker_pub.publish(scene_markers(
            self.scene, self.object.obj.footprint, state.pose, state.finger, self.arm.radius, self.arm.height,
            self.goal_pose, None if self.motion is None else self.motion.planned_poses, self.trace, self.stamp,
            WORLD_FRAME))

    # ------------------------------------------------------------------------------------- the action

    async def execute(self, handle):
        """Plan, execute through the arm's action, report (module docstring)."""
        goal = handle.request
        result = PushObject.Result()
        if self.q is None:
            await self.wall_clock_result(self.states.first, STATE_WAIT_S)
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
        self.object.record()
        self.motion, self.trace = motion, []
        feedback = PushObject.Feedback(push_count=len(motion.plan.pushes))

        progress, last_stamp = [0], [None]

        def on_arm_feedback(message) -> None:
            progress[0] += 1
            last_stamp[0] = message.feedback.header.stamp
            elapsed = duration_seconds(message.feedback.actual.time_from_start)
            sample = min(int(np.searchsorted(motion.trajectory.t, elapsed)), len(motion.trajectory.t) - 1)
            feedback.push_index = int(motion.push_index[sample])
            feedback.object_pose = pose2d(self.object.state.pose)
            handle.publish_feedback(feedback)

        arm_goal = await self.arm_client.send_goal_async(finger_motion_goal(self.arm.model.joint_names, motion),
                                                   feedback_callback=on_arm_feedback)
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
            # the object as it has followed the arm's joint_states up to its last feedback: a node behind the arm's
            # states would report the object before the last moves of the push
            await self.states.through(self, last_stamp[0], self.values["execution_timeout"])
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
        start = [goal.start.x, goal.start.y, goal.start.theta] if goal.use_start else self.object.state.pose
        request = push_goal(self.scene, [goal.goal.x, goal.goal.y, goal.goal.theta], start,
                            [[p.x, p.y] for p in goal.footprint], goal.normal_force, goal.support_friction,
                            goal.contact_friction)
        if self._within_tolerance(request.start, request.goal):
            motion = None
        else:
            with limited(self.values["planning_timeout"], "planning_timeout"):
                motion = plan_push_motion(self.arm, self.scene, request, self.q, self.values["max_push_speed"],
                                          self.values["reposition_speed"],
                                          PLANNING_SHARE * self.values["position_tolerance"],
                                          PLANNING_SHARE * self.values["angle_tolerance"])
        # the object as the request describes it, from its start, follows the fingertip from now on
        self.goal_pose = request.goal
        self.object.restart(request.obj, request.start, self.q, request.contact_friction)
        return motion

    def _within_tolerance(self, pose, goal) -> bool:
        position, angle = pose_error(pose, goal)
        return position <= self.values["position_tolerance"] and abs(angle) <= self.values["angle_tolerance"]

    def _report(self, result, goal, motion: PushMotion | None) -> None:
        """The result of ``goal`` from the object's pose now; ``motion`` None: nothing was to be done."""
        goal_pose = [goal.goal.x, goal.goal.y, goal.goal.theta]
        report(result, self.object.state.pose, goal_pose, motion, self.object.executed,
               self._within_tolerance(self.object.state.pose, goal_pose))

    def _failed(self, result, reason: str):
        self.get_logger().warning(f"push_object: {reason}")
        result.success, result.message = False, reason
        if self.object.state is not None:
            result.final_pose = pose2d(self.object.state.pose)
        return result


main = node_main(ManipulationNode)
