"""manipulation_node's view of the world, as a perception stack would give it (docs/manipulation.md).

:class:`WorldView` holds the arm's joint positions (``joint_states``) and the object's pose
(``objects/<name>/pose``, published by the simulator, which owns the object), each with its stamp (simulated
time). It keeps the object's last :data:`HISTORY` poses (:class:`StampedPoses`), so that the pose at a given
simulated time can be read after it arrived. :func:`wait_for` is the blocking wait of the executive's
synchronous callbacks.
"""

import threading

import numpy as np
from geometry_msgs.msg import PoseStamped
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup
from rclpy.task import Future
from sensor_msgs.msg import JointState

from discrete_robot.geometry2d import yaw_of_quaternion
from discrete_robot.nodes.conversions import stamp_ns
from discrete_robot.nodes.qos import JOINT_STATE_QOS
from discrete_robot.nodes.trajectory_planner_node import arm_state

#: object poses kept: 100 s of a simulator publishing at 100 Hz, more than one push takes
HISTORY = 10_000
#: m: the drawn executed path gets a point where the object has moved this far from the last one
TRACE_SPACING = 1e-3


class StampedPoses:
    """The last ``capacity`` planar poses (x, y, θ) with their stamps (ns), in arrays allocated once: a node that
    runs for days holds the same memory after its first minutes as after them (a deque of tuples grew its resident
    memory by 1.5 MB in a 10-minute soak)."""

    def __init__(self, capacity: int = HISTORY):
        self.stamps = np.zeros(capacity, dtype=np.int64)
        self.poses = np.zeros((capacity, 3))
        self.count = 0       # poses ever appended

    def append(self, stamp: int, pose: np.ndarray) -> None:
        slot = self.count % len(self.stamps)
        self.stamps[slot], self.poses[slot] = stamp, pose
        self.count += 1

    def last(self) -> tuple[int, np.ndarray] | None:
        """The newest (stamp, pose), or None."""
        if not self.count:
            return None
        slot = (self.count - 1) % len(self.stamps)
        return int(self.stamps[slot]), self.poses[slot].copy()

    def _ordered(self) -> np.ndarray:
        """The slots kept, oldest first."""
        kept = min(self.count, len(self.stamps))
        return (self.count - kept + np.arange(kept)) % len(self.stamps)

    def at_or_after(self, stamp: int) -> tuple[int, np.ndarray] | None:
        """The first kept (stamp, pose) stamped at or after ``stamp`` (the stamps never decrease), or None."""
        slots = self._ordered()
        k = int(np.searchsorted(self.stamps[slots], stamp))
        return None if k == len(slots) else (int(self.stamps[slots[k]]), self.poses[slots[k]].copy())

    def between(self, first: int, last: int) -> np.ndarray:
        """The kept poses (k, 3) stamped in [first, last]."""
        slots = self._ordered()
        stamps = self.stamps[slots]
        return self.poses[slots[(stamps >= first) & (stamps <= last)]].copy()


class WorldView:
    """The arm's last joint positions and the object's recent poses, with their stamps (ns of simulated time);
    callbacks of several threads feed it, and :meth:`when` gives a Future done once a condition holds."""

    def __init__(self, joint_names):
        self.joint_names = list(joint_names)
        self._lock = threading.RLock()
        self.q: np.ndarray | None = None
        self.stamp = None            # the last joint_states' stamp (builtin_interfaces/Time)
        self.repeats = 0             # joint_states in a row with that same stamp, less one
        self.poses = StampedPoses()
        self._since: int | None = None          # the recorded motion's start (ns)
        self._trace: list[tuple[float, float]] = []
        self._waiters: list[tuple[object, Future]] = []

    def subscribe(self, node, object_name: str) -> str:
        """Feed this view from ``node``'s ``joint_states`` and ``objects/<object_name>/pose`` (keeping every
        message), each in a callback group of its own: a message never waits for the other stream or a timer
        (the executor's wait returns at once while a ready entity's group is busy, and that spin starves the
        workers). Returns the object's topic."""
        topic = f"objects/{object_name}/pose"
        node.create_subscription(JointState, "joint_states", self.on_joint_states, JOINT_STATE_QOS,
                                 callback_group=MutuallyExclusiveCallbackGroup())
        node.create_subscription(PoseStamped, topic, self.on_pose, JOINT_STATE_QOS,
                                 callback_group=MutuallyExclusiveCallbackGroup())
        return topic

    def on_joint_states(self, msg) -> None:
        q = arm_state(msg, self.joint_names).positions
        with self._lock:
            same = self.stamp is not None and stamp_ns(msg.header.stamp) == stamp_ns(self.stamp)
            self.repeats = self.repeats + 1 if same else 0
            self.q, self.stamp = q, msg.header.stamp
        self._release()

    def on_pose(self, msg) -> None:
        orientation = msg.pose.orientation
        pose = np.array([msg.pose.position.x, msg.pose.position.y, yaw_of_quaternion(orientation.w, orientation.z)])
        t = stamp_ns(msg.header.stamp)
        with self._lock:
            self.poses.append(t, pose)
            last = self._trace[-1] if self._trace else None
            if self._since is not None and t >= self._since and (
                    last is None or np.hypot(pose[0] - last[0], pose[1] - last[1]) >= TRACE_SPACING):
                self._trace.append((float(pose[0]), float(pose[1])))
        self._release()

    def record(self, since_ns: int) -> None:
        """Trace the object's path from simulated time ``since_ns`` on (a motion starts), from empty."""
        with self._lock:
            self._since, self._trace = since_ns, []

    def trace(self) -> list[tuple[float, float]]:
        """The recorded path's (x, y) points (m), each at least :data:`TRACE_SPACING` from the one before."""
        with self._lock:
            return list(self._trace)

    @property
    def pose(self) -> np.ndarray | None:
        with self._lock:
            last = self.poses.last()
            return None if last is None else last[1]

    def still(self) -> tuple[int, np.ndarray, np.ndarray] | None:
        """(stamp ns, q, pose) of a world that stands still: the same joint_states stamp twice in a row since
        :meth:`watch_still`, and the object's pose of that stamp; None otherwise."""
        with self._lock:
            last = self.poses.last()
            if self.repeats < 1 or last is None or last[0] != stamp_ns(self.stamp):
                return None
            return last[0], self.q.copy(), last[1]

    def watch_still(self) -> None:
        """Count repeated stamps from now on: states already on their way may predate a pause just answered."""
        with self._lock:
            self.repeats = -1

    def describe(self) -> str:
        """The last stamps received, for a message saying what is missing."""
        with self._lock:
            q = "none" if self.stamp is None else f"{stamp_ns(self.stamp) * 1e-9:.3f} s"
            last = self.poses.last()
            pose = "none" if last is None else f"{last[0] * 1e-9:.3f} s"
            return f"last joint_states {q} ({self.repeats + 1} alike), last object pose {pose}"

    def pose_at(self, t_ns: int) -> tuple[int, np.ndarray] | None:
        """The first (stamp ns, pose) at or after ``t_ns`` kept, or None."""
        with self._lock:
            return self.poses.at_or_after(t_ns)

    def poses_between(self, t0_ns: int, t1_ns: int) -> np.ndarray:
        """The object's poses (k, 3) stamped in [t0_ns, t1_ns]."""
        with self._lock:
            return self.poses.between(t0_ns, t1_ns)

    def when(self, condition) -> Future:
        """A Future done (True) once ``condition()`` holds, checked at every message."""
        future = Future()
        with self._lock:
            self._waiters.append((condition, future))
        self._release()
        return future

    def _release(self) -> None:
        with self._lock:
            ready = [(c, f) for c, f in self._waiters if f.done() or c()]
            self._waiters = [w for w in self._waiters if w not in ready]
        for _, future in ready:
            future.done() or future.set_result(True)


def wait_for(future: Future, seconds: float):
    """``future``'s result, or None after ``seconds`` of wall-clock time. Blocking, for a synchronous callback
    of a MultiThreadedExecutor: rclpy's coroutines poll their awaited futures, and a MultiThreadedExecutor queues
    a pending coroutine's task again on every turn (its list of futures grew by thousands a second while a push
    ran, and the node's own subscriptions starved)."""
    done = threading.Event()
    future.add_done_callback(lambda _: done.set())
    if future.done() or done.wait(seconds):
        return future.result()
    return None
