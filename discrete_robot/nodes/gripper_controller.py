"""A gripper action controller's ROS interface on discrete_robot_node: ``<name>/gripper_cmd``.

``position_controllers/GripperActionController`` serves control_msgs/GripperCommand, and
``parallel_gripper_action_controller/GripperActionController`` control_msgs/ParallelGripperCommand, on the finger
joint ``joint`` of its section; the life cycle and the finger's effort are discrete_robot.control.gripper's
(ros2_controllers' semantics and parameters). The finger's mimic follower moves with it through the model.
"""

from collections.abc import Callable

import numpy as np
from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.task import Future

from discrete_robot.control.configuration import ControllerSpec
from discrete_robot.control.gripper import PARALLEL_GRIPPER, GripperActionController, GripperParameters, GripperResult
from discrete_robot.nodes.common import SERVICE_QOS

PARAMETERS = ("goal_tolerance", "max_effort", "stall_velocity_threshold", "stall_timeout", "allow_stalling")


class GripperEndpoints:
    """The gripper controller of ``spec`` on ``node``; ``state()`` gives (simulated time s, every joint's
    positions, velocities); ``effort_limit``: the finger's own, N or N m."""

    def __init__(self, node, spec: ControllerSpec, dofs: list[str], effort_limit: float,
                 state: Callable[[], tuple[float, np.ndarray, np.ndarray]]):
        self.node, self.name, self.state = node, spec.name, state
        self.parallel = spec.type == PARALLEL_GRIPPER
        values = {key: spec.parameters[key] for key in PARAMETERS if key in spec.parameters}
        self.core = GripperActionController(dofs.index(spec.joints[0]), GripperParameters(**{
            key: value if isinstance(value, bool) else float(value) for key, value in values.items()}),
            effort_limit)
        self.indices = self.core.joints
        self.done: Future | None = None
        self.enabled = True
        from control_msgs.action import GripperCommand, ParallelGripperCommand

        self.action_type = ParallelGripperCommand if self.parallel else GripperCommand
        self.action = f"{spec.name}/gripper_cmd"
        ActionServer(node, self.action_type, self.action, self.execute, goal_callback=self.on_goal,
                     cancel_callback=self.on_cancel, goal_service_qos_profile=SERVICE_QOS,
                     result_service_qos_profile=SERVICE_QOS, cancel_service_qos_profile=SERVICE_QOS)
        self.core.activate(state()[1])

    def on_goal(self, _goal) -> GoalResponse:
        """Accept a goal while active; an inactive controller rejects it (ros2_controllers' would accept it and
        not move, leaving the client waiting), with the reason logged."""
        if self.enabled:
            return GoalResponse.ACCEPT
        self.node.refusals.warning(self.action, f"{self.action}: goal rejected: controller {self.name} is inactive")
        return GoalResponse.REJECT

    def set_active(self, active: bool) -> None:
        """Activate (hold the finger where it is) or deactivate (the running goal aborts) the controller."""
        self.enabled = active
        self.core.activate(self.state()[1])
        self._end(None)

    async def execute(self, handle):
        t, q, _ = self.state()
        command = handle.request.command
        self._end(None)                          # a new goal preempts the running one
        if self.parallel:
            refused = self.core.set_parallel_goal(t, list(command.position), list(command.effort))
            if refused:
                handle.abort()
                self.node.get_logger().warning(f"{self.action}: goal aborted: {refused}")
                return self.action_type.Result()
        else:
            self.core.set_goal(t, command.position, command.max_effort)
        done = self.done = Future()
        result: GripperResult | None = await done
        if result is None or handle.is_cancel_requested:
            handle.canceled() if handle.is_cancel_requested else handle.abort()
            return self.action_type.Result()
        handle.succeed() if result.succeeded else handle.abort()
        if self.parallel:
            from sensor_msgs.msg import JointState

            return self.action_type.Result(state=JointState(position=[result.position], effort=[result.effort]),
                                           stalled=result.stalled, reached_goal=result.reached_goal)
        return self.action_type.Result(position=result.position, effort=result.effort, stalled=result.stalled,
                                       reached_goal=result.reached_goal)

    def on_cancel(self, _handle) -> CancelResponse:
        self.core.cancel(self.state()[1])
        self._end(None)
        return CancelResponse.ACCEPT

    def _end(self, result: GripperResult | None) -> None:
        done, self.done = self.done, None
        if done is not None and not done.done():
            done.set_result(result)

    def effort(self, t: float, q: np.ndarray, v: np.ndarray) -> np.ndarray:
        """The finger's effort over the step at t (the core's PD, clipped to the goal's max_effort)."""
        return self.core.update(t, q, v)

    def tick(self) -> None:
        """The goal's end, once the core has one."""
        if self.core.result is not None and self.done is not None:
            self._end(self.core.result)
