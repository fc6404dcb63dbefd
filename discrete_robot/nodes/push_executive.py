"""manipulation_node's lockstep with the arm's simulator (docs/manipulation.md, determinism).

:class:`Lockstep` pauses, resumes, steps and places objects in the arm's simulator through its control services,
so that a push starts from the state at a defined simulated time, the world stands still while the node plans,
and a motion runs to a defined time (:func:`start_state`, :func:`step_through`).
"""

import numpy as np
from discrete_robot_interfaces.srv import SetSimulationState, StepSimulation
from std_srvs.srv import Trigger

from discrete_robot.errors import DiscreteRobotError
from discrete_robot.geometry2d import yaw_quaternion
from discrete_robot.nodes.conversions import pose_msg, stamp_ns
from discrete_robot.nodes.push_perception import WorldView, wait_for
from discrete_robot.nodes.qos import SERVICE_QOS

#: calls of a repeatable control service before it counts as unanswered
REPEATS = 3


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
