"""ros2_controllers' gripper action controllers as plain objects: one finger joint to a position, at most an effort.

Semantics of ``position_controllers/GripperActionController`` (ros2_controllers jazzy branch,
gripper_controllers/include/gripper_controllers/gripper_action_controller_impl.hpp; the type was removed from
kilted by ros2_controllers#1652, yet MoveIt configs still name it) and of
``parallel_gripper_action_controller/GripperActionController`` (kilted,
parallel_gripper_controller/include/parallel_gripper_controller/parallel_gripper_action_controller_impl.hpp):

- a new goal preempts the running one; the stall clock starts at the goal (impl.hpp 92-117);
- each update first checks the goal (``check_for_success``, impl.hpp 156-197): |e| < ``goal_tolerance`` succeeds
  with ``reached_goal``; otherwise a finger slower than ``stall_velocity_threshold`` for more than
  ``stall_timeout`` s is ``stalled``, and the goal succeeds when ``allow_stalling`` else aborts, both with
  ``reached_goal`` false. The result's ``effort`` is the command of the cycle before, as upstream's;
- a cancel holds the finger where it is at the ``max_effort`` parameter (impl.hpp 120-152);
- the parallel variant takes a sensor_msgs/JointState goal with exactly one position (else rejected,
  parallel_…_impl.hpp 111-124) and its effort[0] as the limit when given (upstream only with a
  ``max_effort_interface``; here the limit is the simulated actuator's, so it always has one), else ``max_effort``.

The finger is driven as by upstream's effort adapter (hardware_interface_adapter.hpp 156-171): a PD on the
position error, τ = p e − d v, clipped to ±max_effort. A limit ≤ 0 (gripper_controllers' ``max_effort`` default
0.0, or a goal without one) means the joint's own effort limit: with a position interface upstream moves the
finger whatever the goal's max_effort, and so does this. The effort applied is exactly this command, so a finger
against a stop pushes with at most max_effort and stalls.
"""

from dataclasses import dataclass

import numpy as np

GRIPPER = "position_controllers/GripperActionController"
PARALLEL_GRIPPER = "parallel_gripper_action_controller/GripperActionController"


@dataclass(frozen=True)
class GripperParameters:
    """Upstream's parameters and defaults (gripper_action_controller_parameters.yaml, jazzy); ``p`` (N/m or
    N m/rad) and ``d`` (N s/m or N m s/rad) are the PD's gains (upstream's ``gains.<joint>.p`` and ``.d``)."""

    goal_tolerance: float = 0.01
    max_effort: float = 0.0
    stall_velocity_threshold: float = 0.001
    stall_timeout: float = 1.0
    allow_stalling: bool = False
    p: float = 1000.0
    d: float = 10.0


@dataclass(frozen=True)
class GripperResult:
    """The goal's end: the finger's ``position`` (m or rad), the ``effort`` commanded (N or N m), ``stalled``,
    ``reached_goal``, and ``succeeded`` (False: aborted)."""

    position: float
    effort: float
    stalled: bool
    reached_goal: bool
    succeeded: bool


class GripperActionController:
    """The gripper controller on the finger joint of model index ``joint``; ``effort_limit`` is the joint's own
    (N or N m, inf when unlimited). Holds the finger where ``activate`` finds it until a goal."""

    def __init__(self, joint: int, parameters: GripperParameters, effort_limit: float = np.inf):
        self.joints = np.array([joint])
        self.parameters, self.effort_limit = parameters, effort_limit
        self.position, self.max_effort = 0.0, parameters.max_effort
        self.active_goal = False
        self.result: GripperResult | None = None
        self.last_command = 0.0
        self.last_movement_time = 0.0

    def activate(self, q: np.ndarray) -> None:
        """Hold the finger where it is, at the ``max_effort`` parameter (on_activate / set_hold_position)."""
        self.position, self.max_effort = float(q[self.joints[0]]), self.parameters.max_effort
        self.active_goal, self.result = False, None

    def set_goal(self, t: float, position: float, max_effort: float) -> None:
        """A GripperCommand goal at simulated time t (s): the running goal, if any, is replaced."""
        self.position, self.max_effort = float(position), float(max_effort)
        self.active_goal, self.result = True, None
        self.last_movement_time = t

    def set_parallel_goal(self, t: float, positions, efforts=()) -> str | None:
        """A ParallelGripperCommand goal (its command's position and effort lists): None when accepted, else
        the reason it is rejected."""
        if len(positions) != 1:
            return f"command.position must hold exactly one value (the finger's), got {len(positions)}"
        self.set_goal(t, positions[0], efforts[0] if len(efforts) else self.parameters.max_effort)
        return None

    def cancel(self, q: np.ndarray) -> None:
        """Cancel the running goal and hold where the finger is."""
        self.activate(q)

    def limit(self) -> float:
        """The effort bound in force: the goal's (or parameter's) max_effort, or the joint's when that is ≤ 0."""
        return self.max_effort if self.max_effort > 0.0 else self.effort_limit

    def update(self, t: float, q: np.ndarray, v: np.ndarray) -> np.ndarray:
        """The finger's effort at simulated time t (s): the goal is checked first, then the PD command."""
        i = self.joints[0]
        error, velocity = self.position - q[i], v[i]
        if self.active_goal:
            self._check_for_success(t, float(q[i]), error, float(velocity))
        bound = self.limit()
        self.last_command = float(np.clip(self.parameters.p * error - self.parameters.d * velocity, -bound, bound))
        return np.array([self.last_command])

    def _check_for_success(self, t: float, position: float, error: float, velocity: float) -> None:
        parameters = self.parameters
        if abs(error) < parameters.goal_tolerance:
            self._finish(GripperResult(position, self.last_command, False, True, True))
        elif abs(velocity) > parameters.stall_velocity_threshold:
            self.last_movement_time = t
        elif t - self.last_movement_time > parameters.stall_timeout:
            self._finish(GripperResult(position, self.last_command, True, False, parameters.allow_stalling))

    def _finish(self, result: GripperResult) -> None:
        self.result, self.active_goal = result, False
