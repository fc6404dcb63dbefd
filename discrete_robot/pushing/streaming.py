"""An object pushed by a streamed finger: each new finger position pushes it from the last one.

A stream of finger positions (a teleoperated or tracked fingertip) is filtered before it pushes: a non-finite
position, or one farther than ``max_jump`` from the last accepted position, is refused (a jump is a teleport,
not a push, and pushing across it would be unbounded work, see :data:`.simulation.MAX_MOVES`). A refused
position, or a push step that fails, leaves the object and the last finger position as they were. The first
position only places the finger (a move of zero length).
"""

import math
from dataclasses import dataclass

import numpy as np

from discrete_robot.errors import InputError
from discrete_robot.pushing.object_model import PushedObject
from discrete_robot.pushing.simulation import PushStep, push_step


@dataclass
class FingerStream:
    """The streamed object's pose (x, y, θ) in the world (m, rad) and the last accepted finger centre (world, m;
    None before the first)."""

    pose: np.ndarray
    finger: np.ndarray | None = None

    def push(self, obj: PushedObject, finger, max_jump: float, contact_friction: float,
             pusher_radius: float) -> PushStep:
        """Push ``obj`` with the finger moving straight from the last position to ``finger`` (x, y) and keep the
        new pose and finger; InputError (the state kept) for a non-finite position or a jump longer than
        ``max_jump`` (m); a failing push step raises its error with the state kept."""
        finger = np.asarray(finger, dtype=float)
        if not np.all(np.isfinite(finger)):
            raise InputError(f"ignored a non-finite position {finger.tolist()}")
        previous = finger if self.finger is None else self.finger
        jump = math.hypot(*(finger - previous))      # no overflow for a finger at 1e300
        if jump > max_jump:
            raise InputError(f"ignored a jump of {jump:.3g} m from the last position (max_finger_jump = "
                             f"{max_jump} m)")
        step = push_step(obj, self.pose, previous, finger, contact_friction, pusher_radius)
        self.finger, self.pose = finger, step.pose
        return step
