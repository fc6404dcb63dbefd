"""The pushed object following an arm's fingertip from the arm's sampled joint positions, without ROS.

Each sample places the fingertip by forward kinematics, and the object moves by the minimum-power model from the
fingertip's previous position (:class:`discrete_robot.manipulation.chain.PushedObjectState`).
"""

import numpy as np

from discrete_robot.manipulation.chain import PushedObjectState

#: m: the trace gets a point where the object has moved this far from the last one (a point per sample made a
#: drawn path grow with the motion)
TRACE_SPACING = 1e-3


class FollowedObject:
    """The object ``obj`` pushed by ``arm``'s fingertip (an ArmFinger) from ``pose`` (x, y, θ) on, with the
    finger-object friction ``contact_friction``; while a motion is recorded, its poses (``executed``) and its
    (x, y) points at least :data:`TRACE_SPACING` apart (``trace``)."""

    def __init__(self, arm, obj, pose: np.ndarray, contact_friction: float):
        self.arm, self.obj, self.start, self.contact_friction = arm, obj, pose, contact_friction
        self.state: PushedObjectState | None = None      # from the first sample on
        self.recording = False
        self.executed: list[np.ndarray] = []
        self.trace: list[tuple[float, float]] = []

    def follow(self, q: np.ndarray) -> None:
        """The arm's joint positions q: the object follows the fingertip there."""
        finger = self.arm.position(q)
        if self.state is None:
            self.state = PushedObjectState(self.obj, self.start, finger, self.arm.radius, self.contact_friction)
        else:
            self.state.follow(finger)
        if self.recording:
            pose = self.state.pose.copy()
            self.executed.append(pose)
            if not self.trace or np.hypot(pose[0] - self.trace[-1][0], pose[1] - self.trace[-1][1]) >= TRACE_SPACING:
                self.trace.append((float(pose[0]), float(pose[1])))

    def restart(self, obj, pose: np.ndarray, q: np.ndarray, contact_friction: float) -> None:
        """The object ``obj`` at ``pose``, followed from the fingertip at the joint positions q on."""
        self.obj, self.contact_friction = obj, contact_friction
        self.state = PushedObjectState(obj, pose, self.arm.position(q), self.arm.radius, contact_friction)

    def record(self) -> None:
        """Record the poses from now on (a motion starts), from empty."""
        self.recording, self.executed, self.trace = True, [], []
