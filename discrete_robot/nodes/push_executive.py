"""manipulation_node's view of the world and its lockstep with the arm's simulator (docs/manipulation.md).

- :class:`WorldView` is what the node perceives, as a perception stack would give it: the arm's joint positions
  (``joint_states``) and the object's pose (``objects/<name>/pose``, published by the simulator, which owns the
  object), each with its stamp (simulated time). It keeps the object's last :data:`HISTORY` poses, so that the
  pose at a given simulated time can be read after it arrived.
- :class:`Lockstep` pauses, resumes and places objects in the arm's simulator through its control services, so
  that a push starts from the state at a defined simulated time and the world stands still while the node plans.
"""

import threading
from collections import deque

import numpy as np
from discrete_robot_interfaces.srv import SetSimulationState, StepSimulation
from geometry_msgs.msg import PoseStamped
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup
from rclpy.task import Future
from sensor_msgs.msg import JointState
from std_srvs.srv import Trigger

from discrete_robot.errors import DiscreteRobotError
from discrete_robot.geometry2d import yaw_of_quaternion, yaw_quaternion
from discrete_robot.nodes.conversions import pose_msg
from discrete_robot.nodes.qos import JOINT_STATE_QOS, SERVICE_QOS
from discrete_robot.nodes.trajectory_planner_node import arm_state

#: object poses kept: 100 s of a simulator publishing at 100 Hz, more than one push takes
HISTORY = 10_000
#: calls of a repeatable control service before it counts as unanswered
REPEATS = 3
#: m: the drawn executed path gets a point where the object has moved this far from the last one
TRACE_SPACING = 1e-3


def stamp_ns(stamp) -> int:
    """A builtin_interfaces/Time as integer nanoseconds (exact, and ordered as the times are)."""
    return stamp.sec * 1_000_000_000 + stamp.nanosec


class WorldView:
    """The arm's last joint positions and the object's recent poses, with their stamps (ns of simulated time);
    callbacks of several threads feed it, and :meth:`when` gives a Future done once a condition holds."""

    def __init__(self, joint_names):
        self.joint_names = list(joint_names)
        self._lock = threading.RLock()
        self.q: np.ndarray | None = None
        self.stamp = None            # the last joint_states' stamp (builtin_interfaces/Time)
        self.repeats = 0             # joint_states in a row with that same stamp, less one
        self.poses: deque[tuple[int, np.ndarray]] = deque(maxlen=HISTORY)
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
            self.poses.append((t, pose))
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
            return self.poses[-1][1] if self.poses else None

    def still(self) -> tuple[int, np.ndarray, np.ndarray] | None:
        """(stamp ns, q, pose) of a world that stands still: the same joint_states stamp twice in a row since
        :meth:`watch_still`, and the object's pose of that stamp; None otherwise."""
        with self._lock:
            if self.repeats < 1 or not self.poses or self.poses[-1][0] != stamp_ns(self.stamp):
                return None
            return self.poses[-1][0], self.q.copy(), self.poses[-1][1].copy()

    def watch_still(self) -> None:
        """Count repeated stamps from now on: states already on their way may predate a pause just answered."""
        with self._lock:
            self.repeats = -1

    def describe(self) -> str:
        """The last stamps received, for a message saying what is missing."""
        with self._lock:
            q = "none" if self.stamp is None else f"{stamp_ns(self.stamp) * 1e-9:.3f} s"
            pose = f"{self.poses[-1][0] * 1e-9:.3f} s" if self.poses else "none"
            return f"last joint_states {q} ({self.repeats + 1} alike), last object pose {pose}"

    def pose_at(self, t_ns: int) -> tuple[int, np.ndarray] | None:
        """The first (stamp ns, pose) at or after ``t_ns`` kept, or None."""
        with self._lock:
            return next(((t, pose) for t, pose in self.poses if t >= t_ns), None)

    def poses_between(self, t0_ns: int, t1_ns: int) -> np.ndarray:
        """The object's poses (k, 3) stamped in [t0_ns, t1_ns]."""
        with self._lock:
            return np.array([pose for t, pose in self.poses if t0_ns <= t <= t1_ns]).reshape(-1, 3)

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


class Lockstep:
    """The arm's simulator's control services under ``namespace`` (pause, resume, set_state), each call bounded
    by ``timeout_s`` of wall-clock time."""

    def __init__(self, node, namespace: str, group, timeout_s: float):
        self.timeout_s, self.namespace, self.waited = timeout_s, namespace, False
        self.pause_client = node.create_client(Trigger, f"{namespace}/pause", callback_group=group,
                                               qos_profile=SERVICE_QOS)
        self.resume_client = node.create_client(Trigger, f"{namespace}/resume", callback_group=group,
                                                qos_profile=SERVICE_QOS)
        self.step_client = node.create_client(StepSimulation, f"{namespace}/step", callback_group=group,
                                              qos_profile=SERVICE_QOS)
        self.state_client = node.create_client(SetSimulationState, f"{namespace}/set_state", callback_group=group,
                                               qos_profile=SERVICE_QOS)

    def available(self) -> bool:
        """Whether the simulator serves its control services; the first time, waiting up to the bound for them
        to be found (later, a simulator without them costs a goal nothing)."""
        if self.pause_client.service_is_ready():
            return True
        waited, self.waited = self.waited, True
        return not waited and self.pause_client.wait_for_service(timeout_sec=self.timeout_s)

    def pause(self) -> None:
        self._call(self.pause_client, Trigger.Request(), "pause", REPEATS)

    def resume(self) -> None:
        self._call(self.resume_client, Trigger.Request(), "resume", REPEATS)

    def step(self, duration_ns: int) -> int:
        """Owe the paused world the steps that reach ``duration_ns`` more of simulated time; the time they reach,
        ns."""
        request = StepSimulation.Request()
        request.duration.sec, request.duration.nanosec = divmod(int(duration_ns), 1_000_000_000)
        return stamp_ns(self._call(self.step_client, request, "step").sim_time)

    def place(self, name: str, pose) -> None:
        """Put object ``name`` at ``pose`` (x, y, θ; m, rad)."""
        request = SetSimulationState.Request(object_names=[name], object_poses=[
            pose_msg((pose[0], pose[1], 0.0), yaw_quaternion(float(pose[2])))])
        self._call(self.state_client, request, "set_state", REPEATS)

    def _call(self, client, request, what: str, attempts: int = 1):
        """The service's response; ``attempts`` > 1 for a request that may be repeated (pause, resume, set_state):
        a response is lost while DDS still matches the service's reply to a client found moments ago."""
        response = None
        for _ in range(attempts):
            response = wait_for(client.call_async(request), self.timeout_s)
            if response is not None:
                break
        if response is None:
            raise DiscreteRobotError(f"{self.namespace}/{what}: no answer from the arm's simulator in "
                                     f"{self.timeout_s:g} s")
        if not response.success:
            raise DiscreteRobotError(f"{self.namespace}/{what}: {response.message}")
        return response


def start_state(view: WorldView, lockstep: Lockstep | None, start, object_name: str,
                wait_s: float) -> tuple[int, np.ndarray, np.ndarray]:
    """(stamp ns, q, object pose) a push plans from: with ``lockstep`` (the world paused by the caller), the state
    the paused world publishes, after placing the object at ``start`` (x, y, θ) unless None; without, the last
    received. DiscreteRobotError when it does not come within ``wait_s`` wall-clock seconds."""
    missing = DiscreteRobotError(f"no joint_states and objects/{object_name}/pose of one time in {wait_s:g} s: is the "
                                 f"arm's simulator running with the scene (scene_file)? ({view.describe()})")
    if lockstep is None:
        if start is not None:
            raise DiscreteRobotError("use_start: placing the object needs the arm's simulator's set_state "
                                     "(simulation_namespace empty or not served)")
        wait_for(view.when(lambda: view.q is not None and view.pose is not None), wait_s)
        if view.q is None or view.pose is None:
            raise missing
        return stamp_ns(view.stamp), view.q.copy(), view.pose.copy()
    if start is not None:
        lockstep.place(object_name, start)
    view.watch_still()
    wait_for(view.when(lambda: view.still() is not None), wait_s)
    still = view.still()
    if still is None:
        raise missing
    return still


def step_through(view: WorldView, lockstep: Lockstep, t0: int, until: int, timeout_s: float) -> int:
    """Step the paused world from ``t0`` (ns) to the first step at or after ``until`` (ns) and wait until it
    stands still there, as long as its time advances (``timeout_s`` wall-clock seconds without a new state);
    the time reached, ns."""
    view.watch_still()
    target = lockstep.step(until - t0)

    def reached() -> bool:
        still = view.still()
        return still is not None and still[0] >= target - 1000      # the stamps are whole ns of float sums

    seen = None
    while not reached() and view.stamp != seen:
        seen = view.stamp
        wait_for(view.when(reached), timeout_s)
    if not reached():
        raise DiscreteRobotError(f"the arm's simulator did not reach t = {target * 1e-9:.3f} s ({view.describe()})")
    return target
