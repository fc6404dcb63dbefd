"""manipulation_node: plans the pushes that bring a table-top object to a goal pose, has the simulated arm make
them and judges the result; planner and executive only: the object lives in the arm's simulator (discrete_robot_node
with ``scene_file``), which moves it in its physics steps (docs/manipulation.md: the world, lockstep, determinism).

Action ``push_object`` (discrete_robot_interfaces/PushObject): up to ``max_attempts`` plans from the object's pose
(discrete_robot.manipulation.push_to_pose), each sent as a finger motion to the arm's
``<controller_name>/follow_joint_trajectory``; feedback: the object's pose and the push under way; the result: the
object's pose at the motion's end, its error to the goal, the executed path against the plan. Success: the arm's
goal succeeded and the object ended within ``position_tolerance`` and ``angle_tolerance``. A goal its start
already meets succeeds at once; a bad goal (NaN, off the table, unreachable, no push found) is aborted with the
reason. ``use_start`` places the object in the simulator first (``set_state``); ``footprint`` and the frictions,
when given, are the planner's model of the object. Every request is kept (KEEP_ALL).

Lockstep (``simulation_namespace``, nodes.push_executive): the goal pauses the arm's simulator, plans from the
state the paused world publishes, stamps the motion with its time and steps the world through it, so the same
goal from the same paused state gives the same bits at any load and real-time factor.

Subscribes ``joint_states``, ``objects/<object_name>/pose`` (JOINT_STATE_QOS); publishes ``manipulation/markers``
(at ``publish_rate``, stamped with the last joint_states' time: table, fingertip, goal, planned and executed paths)
and ``manipulation/arm_goals``, each finger motion it sends (for ``experiment replay``).
Parameters: discrete_robot.nodes.manipulation_parameters (config/manipulation.yaml).
"""

import numpy as np
from control_msgs.action import FollowJointTrajectory
from discrete_robot_interfaces.action import PushObject
from geometry_msgs.msg import Point
from rclpy.action import ActionClient, ActionServer, CancelResponse
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.clock import Clock, ClockType
from rclpy.task import Future
from trajectory_msgs.msg import JointTrajectory
from visualization_msgs.msg import MarkerArray

from discrete_robot.budget import limited
from discrete_robot.config_files import regular_file
from discrete_robot.errors import DiscreteRobotError
from discrete_robot.manipulation.arm import ArmFinger
from discrete_robot.manipulation.push_to_pose import PushMotion, plan_push_motion, pose_error, push_goal
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
    node_main,
    node_model,
)
from discrete_robot.nodes.conversions import duration_seconds, stamp_ns
from discrete_robot.nodes.manipulation_parameters import DEFAULT_MODEL, PARAMETERS
from discrete_robot.nodes.markers import scene_markers
from discrete_robot.nodes.push_executive import Lockstep, start_state, step_through
from discrete_robot.nodes.push_messages import arm_failure, finger_motion_goal, pose2d, report, within
from discrete_robot.nodes.push_perception import WorldView, wait_for

#: the share of the goal's tolerances a plan may use; the rest is the execution's margin (a plan just inside 5°: 5.01°)
PLANNING_SHARE = 0.5
#: wall-clock seconds to wait for the arm's FollowJointTrajectory server, its simulator's services and their answers:
#: on a loaded machine these take seconds, and lockstep services not found would run the push unpaused
SERVER_WAIT_S = 10.0
#: simulated seconds a stepped motion runs past its last point, for the controller to end its goal (JTC: at once)
SETTLE_S = 0.5


class ManipulationNode(GuardedNode):
    """Serves push_object with the simulated arm: planner and executive (module docstring)."""

    NODE_NAME = "manipulation_node"
    MULTI_THREADED = True
    #: a goal's execute blocks one thread (push_perception.wait_for); the others serve the streams and services
    THREADS = 4

    def __init__(self, **kwargs):
        super().__init__(self.NODE_NAME, **kwargs)
        self.values = declare_parameters(self, PARAMETERS)
        self.add_post_set_parameters_callback(
            lambda parameters: self.values.update({p.name: p.value for p in parameters}))
        model = node_model(self.values, package_config_path(DEFAULT_MODEL))
        self.scene = (load_scene(regular_file(self.values["scene_file"], "scene_file")) if self.values["scene_file"]
                      else scene_for(model))      # the shipped scene of this arm, or one derived from its reach
        self.arm = ArmFinger.in_scene(model, self.scene, self.values["finger_radius"])
        self.view = WorldView(model.joint_names)
        self.motion: PushMotion | None = None
        self.goal_pose: np.ndarray | None = None

        group = ReentrantCallbackGroup()
        self.marker_pub = self.create_publisher(MarkerArray, "manipulation/markers", STATE_QOS)
        self.goals_pub = self.create_publisher(JointTrajectory, "manipulation/arm_goals", JOINT_STATE_QOS)
        object_topic = self.view.subscribe(self, self.values["object_name"])
        namespace = self.values["simulation_namespace"]
        self.lockstep = Lockstep(self, namespace, group, SERVER_WAIT_S) if namespace else None
        self.arm_action = f"{self.values['controller_name']}/follow_joint_trajectory"
        self.arm_client = ActionClient(self, FollowJointTrajectory, self.arm_action, callback_group=group,
                                       **ACTION_QOS)
        self.action_server = ActionServer(
            self, PushObject, "push_object",
            self.guard("action push_object", self.execute, lambda reason: PushObject.Result(message=reason)),
            cancel_callback=lambda handle: CancelResponse.ACCEPT, callback_group=group, **ACTION_SERVER)
        self.create_timer(1.0 / self.values["publish_rate"], self.publish,
                          clock=Clock(clock_type=ClockType.STEADY_TIME))
        self.get_logger().info(f"pushing with '{model.name}' (fingertip on {model.fingertip.link}) the object on "
                               f"{object_topic} in the scene's table x {list(self.scene.table.x)}, y "
                               f"{list(self.scene.table.y)} m")

    def publish(self) -> None:
        q, stamp = self.view.q, self.view.stamp
        if q is None:
            return
        z = self.scene.table.height
        trace = [Point(x=x, y=y, z=z) for x, y in self.view.trace()]
        self.marker_pub.publish(scene_markers(
            self.scene, self.scene.obj.footprint, self.arm.position(q), self.arm.radius, self.arm.height,
            self.goal_pose, None if self.motion is None else self.motion.planned_poses, trace, stamp, WORLD_FRAME))

    # ------------------------------------------------------------------------------------- the action

    def execute(self, handle):
        """Up to ``max_attempts`` of: plan from the object's pose, execute through the arm's action, judge; with
        lockstep, in the paused world, stepped through each motion (module docstring). Synchronous, on a thread
        of its own (push_perception.wait_for says why)."""
        goal, result = handle.request, PushObject.Result()
        lockstep = self.lockstep if self.lockstep is not None and self.lockstep.available() else None
        paused = False
        try:
            if lockstep is not None:
                lockstep.pause()
                paused = True
            for attempt in range(self.values["max_attempts"]):
                if self._attempt(handle, goal, result, lockstep, goal.use_start and attempt == 0):
                    break
        except DiscreteRobotError as error:
            self._failed(result, str(error))
        finally:
            if paused:
                lockstep.resume()
        if handle.is_cancel_requested:
            handle.canceled()
            return self._failed(result, "canceled")
        (handle.succeed if result.success else handle.abort)()
        return result

    def _attempt(self, handle, goal, result, lockstep: Lockstep | None, place: bool) -> bool:
        """One plan and its execution, reported in ``result``; True when the goal is over (reached, nothing to do,
        the arm failed, canceled), False when the object missed and another attempt may correct it."""
        start = [goal.start.x, goal.start.y, goal.start.theta] if place else None
        t0, q, pose = start_state(self.view, lockstep, start, self.values["object_name"],
                                  self.values["execution_timeout"])
        motion = self._plan(goal, q, pose)
        if motion is None:
            self._report(result, goal, None, pose)
            return True
        arm_goal, progress = self._send(motion, t0 if lockstep is not None else None, handle)
        end = progress["start"] + round(float(motion.trajectory.t[-1]) * 1e9)
        if lockstep is not None:     # stepped past the motion's end; the next plan starts from that paused state
            end = step_through(self.view, lockstep, t0, end + round(SETTLE_S * 1e9), self.values["execution_timeout"])
        return self._finish(handle, goal, result, motion, arm_goal, progress, end)

    def _plan(self, goal, q: np.ndarray, pose: np.ndarray) -> PushMotion | None:
        """The finger motion for ``goal`` from joint positions q and the object's pose, or None when the pose
        already meets the goal's tolerances."""
        request = push_goal(self.scene, [goal.goal.x, goal.goal.y, goal.goal.theta], pose,
                            [[p.x, p.y] for p in goal.footprint], goal.normal_force, goal.support_friction,
                            goal.contact_friction)
        self.goal_pose = request.goal
        if self._within_tolerance(request.start, request.goal):
            return None
        with limited(self.values["planning_timeout"], "planning_timeout"):
            return plan_push_motion(self.arm, self.scene, request, q, self.values["max_push_speed"],
                                    self.values["reposition_speed"],
                                    PLANNING_SHARE * self.values["position_tolerance"],
                                    PLANNING_SHARE * self.values["angle_tolerance"])

    def _send(self, motion: PushMotion, t0: int | None, handle):
        """Send the finger motion, stamped ``t0`` (ns; None: it starts on arrival), and wait until the controller
        executes it (its first feedback). Returns the arm's goal handle, a counter of its feedback messages and
        the motion's start (ns of simulated time)."""
        if not self.arm_client.wait_for_server(timeout_sec=SERVER_WAIT_S):
            raise DiscreteRobotError(f"no FollowJointTrajectory server at {self.arm_action}")
        feedback = PushObject.Feedback(push_count=len(motion.plan.pushes))
        progress, first = {"count": 0, "start": t0}, Future()

        def on_arm_feedback(message) -> None:
            elapsed = duration_seconds(message.feedback.actual.time_from_start)
            if progress["start"] is None:
                progress["start"] = stamp_ns(message.feedback.header.stamp) - round(elapsed * 1e9)
            progress["count"] += 1
            first.done() or first.set_result(True)
            sample = min(int(np.searchsorted(motion.trajectory.t, elapsed)), len(motion.trajectory.t) - 1)
            feedback.push_index = int(motion.push_index[sample])
            if self.view.pose is not None:
                feedback.object_pose = pose2d(self.view.pose)
            handle.publish_feedback(feedback)

        self.motion = motion
        request = finger_motion_goal(self.arm.model.joint_names, motion, t0)
        self.goals_pub.publish(request.trajectory)     # the executive's commands, recorded for a replay
        arm_goal = wait_for(self.arm_client.send_goal_async(request, feedback_callback=on_arm_feedback), SERVER_WAIT_S)
        if arm_goal is None or not arm_goal.accepted:
            raise DiscreteRobotError(f"{self.arm_action} rejected the finger motion")
        if wait_for(first, self.values["execution_timeout"]) is None:
            arm_goal.cancel_goal_async()
            raise DiscreteRobotError(f"no feedback from {self.arm_action} in execution_timeout = "
                                     f"{self.values['execution_timeout']:g} s; goal canceled")
        self.view.record(progress["start"])
        return arm_goal, progress

    def _finish(self, handle, goal, result, motion: PushMotion, arm_goal, progress, end: int) -> bool:
        """Wait for the arm's result (as long as it makes progress), then report from the object's first pose
        stamped at or after ``end`` (ns); as :meth:`_attempt`."""
        arm_result, seen = None, -1
        while arm_result is None and progress["count"] != seen and not handle.is_cancel_requested:
            seen = progress["count"]
            arm_result = wait_for(arm_goal.get_result_async(), self.values["execution_timeout"])
        if handle.is_cancel_requested or arm_result is None:
            arm_goal.cancel_goal_async()
        if handle.is_cancel_requested:
            return True
        wait_for(self.view.when(lambda: self.view.pose_at(end) is not None), self.values["execution_timeout"])
        final = self.view.pose_at(end)
        if final is None:
            raise DiscreteRobotError(f"no objects/{self.values['object_name']}/pose stamped at or after the motion's "
                                     f"end ({end * 1e-9:.3f} s) in execution_timeout = "
                                     f"{self.values['execution_timeout']:g} s")
        self._report(result, goal, motion, final[1], self.view.poses_between(progress["start"], final[0]))
        failure = arm_failure(arm_result, self.arm_action, self.values["execution_timeout"])
        if failure is None:
            return result.success
        result.success, result.message = False, failure
        return True

    def _within_tolerance(self, pose, goal) -> bool:
        return within(pose_error(pose, goal), self.values["position_tolerance"], self.values["angle_tolerance"])

    def _report(self, result, goal, motion: PushMotion | None, final: np.ndarray, executed=()) -> None:
        """The result of ``goal`` from the object's ``final`` pose; ``motion`` None: nothing was to be done."""
        target = [goal.goal.x, goal.goal.y, goal.goal.theta]
        report(result, final, target, motion, list(executed), self._within_tolerance(final, target))

    def _failed(self, result, reason: str):
        self.get_logger().warning(f"push_object: {reason}")
        result.success, result.message = False, reason
        result.final_pose = result.final_pose if self.view.pose is None else pose2d(self.view.pose)
        return result


main = node_main(ManipulationNode)
