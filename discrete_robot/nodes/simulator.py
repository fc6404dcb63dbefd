"""What every simulator node shares: simulated time, TF, simulation control and diagnostics.

A simulator node (``discrete_robot_node``, ``space_robot_node``) derives from :class:`SimulatorNode` and
provides its world through a few hooks (:meth:`~SimulatorNode.advance_world`, ``world_time``,
:meth:`~SimulatorNode.publish_state`, ...). The base class then gives it, the same way for every world:

- **Simulated time.** A steady wall-clock timer (never the node's own clock, so ``use_sim_time`` cannot stall
  it) advances the world by ``real_time_factor`` simulated seconds per wall second, in whole steps of
  ``time_step`` (``real_time_factor`` 0: as many steps as fit in the tick). With ``publish_clock`` the node
  publishes ``/clock`` (rosgraph_msgs/Clock) from its simulated time; without, it follows ``/clock``
  (it advances its world up to the time received and publishes each ``1 / publish_rate`` of that clock's
  simulated seconds, or on every clock message when the leader ticks more slowly; a world joining a running
  system starts at its time), so a system has one clock and every world in it runs on that clock. A tick
  advances the world by the wall time since the previous tick (times ``real_time_factor``), so a late tick
  does not lose simulated time; a world that keeps its own clock publishes each ``1 / publish_rate`` of its
  simulated time (:class:`TickGrid`), so a late tick does not lose a message either. Every message a
  simulator publishes is stamped with its simulated time.
- **TF** (``publish_tf``): the pose of every URDF link on ``/tf`` each tick and the fixed joints once on
  ``/tf_static``, frames named as in the URDF with ``frame_prefix`` (``world``, the inertial frame both
  robots share, is never prefixed). A floating base's ``world`` -> base is published either way
  (robot_state_publisher, which otherwise publishes the links from joint_states, cannot know it).
- **Control services** under ``<control_namespace>/``: ``pause``, ``resume``, ``reset`` (std_srvs/Trigger),
  ``step`` (discrete_robot_interfaces/StepSimulation, while paused) and ``set_state``
  (discrete_robot_interfaces/SetSimulationState). ``start_paused`` starts the world paused. Reset restores the
  initial state; simulated time goes on (tf buffers and controllers would take a jump back for a new run).
- **A failed step** (no convergence even in sub-steps) leaves the state as it was; the node says why, then
  pauses or resets (``on_step_failure``) and keeps serving.
- **/diagnostics** (diagnostic_msgs/DiagnosticArray) at 1 Hz: achieved real-time factor, step cost,
  conserved-quantity drift and failed steps.
"""

import sys
import time
from collections.abc import Sequence

import numpy as np
from builtin_interfaces.msg import Time
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from geometry_msgs.msg import TransformStamped
from rclpy.clock import Clock, ClockType
from rosgraph_msgs.msg import Clock as ClockMsg
from std_srvs.srv import Trigger
from tf2_msgs.msg import TFMessage

from discrete_robot.errors import DiscreteRobotError, InputError
from discrete_robot.geometry3d import matrix_to_quaternion
from discrete_robot.model.urdf import WORLD_FRAME, FrameTransform
from discrete_robot.nodes.common import (
    LATCHED_QOS,
    STATE_QOS,
    GuardedNode,
    ParameterSpec,
    non_negative,
    one_of,
    positive,
    quaternion_msg,
    seconds_to_duration_fields,
)
from discrete_robot.validation import bounded_count, finite_vector

#: /clock: best effort would lose ticks; volatile, as Gazebo's bridge publishes it
CLOCK_QOS = STATE_QOS
#: the most steps one ``step`` request may ask for (a paused simulator answers it in bounded time)
MAX_STEP_REQUEST = 100_000
#: with real_time_factor 0, the share of each tick spent stepping (the rest publishes and serves)
AS_FAST_AS_POSSIBLE_SHARE = 0.8
#: the most wall-clock time one tick makes up for, in ticks: a late tick (a busy executor, a suspended
#: process) advances the world by the wall time that passed, but a long stall is dropped, not replayed in a burst
MAX_CATCH_UP_TICKS = 5
DIAGNOSTICS_PERIOD_S = 1.0
#: s: a simulated time this close to a line of a tick grid is on it (clock messages carry nanoseconds, and a
#: world's own time is a sum of steps)
FOLLOW_TOLERANCE_S = 1e-6
#: s of wall time without /clock after which a follower publishes its state at its own rate (no leader running;
#: a shorter silence is a busy leader, and publishing then would repeat stamps)
LEADER_SILENCE_S = 1.0


def simulator_parameters(time_step: float, publish_rate: float) -> list[ParameterSpec]:
    """The parameters every simulator declares, with the node's own default step (s) and rate (Hz)."""
    return [
        ParameterSpec("time_step", time_step, "fixed integration step, s", check=positive,
                      value_range=(1e-5, 1.0), read_only=True),
        ParameterSpec("publish_rate", publish_rate, "rate of the simulation ticks and of the published topics, Hz",
                      check=positive, value_range=(0.1, 1000.0), read_only=True),
        ParameterSpec("real_time_factor", 1.0, "simulated seconds per wall-clock second (1 = real time, 0 = as "
                                               "fast as possible)", check=non_negative, value_range=(0.0, 100.0)),
        ParameterSpec("publish_clock", True, "publish /clock from this world's simulated time; false = follow "
                                             "/clock (one clock per system; the world then ticks and publishes "
                                             "every 1/publish_rate s of that clock)", read_only=True),
        ParameterSpec("publish_tf", True, "publish every link on /tf and /tf_static (off when "
                                          "robot_state_publisher does it)", read_only=True),
        ParameterSpec("start_paused", False, "start paused (resume or step through the control services)",
                      read_only=True),
        ParameterSpec("on_step_failure", "pause", "after a step that fails even in sub-steps: pause or reset",
                      check=one_of("pause", "reset"), read_only=True),
    ]


class RealTimePacer:
    """Whole steps of ``time_step`` owed to a world run at ``real_time_factor`` simulated seconds per wall second.

    Each tick owes the wall time since the previous tick (times the factor), not the timer's period: a tick that
    comes late, or a period the timer skipped while the process was busy, would otherwise lose its time and the
    world fall behind real time. A stall longer than :data:`MAX_CATCH_UP_TICKS` periods is dropped rather than
    replayed in one burst. Simulated time below one step is carried to the next tick.
    """

    def __init__(self, time_step: float, period: float, now: float):
        self.time_step, self.period = time_step, period
        self.carried = 0.0     # simulated seconds owed (less than one step)
        self.last = now        # wall time of the last tick, s

    def steps(self, now: float, real_time_factor: float) -> int:
        """The steps owed at wall time ``now`` (s, monotonic)."""
        elapsed = min(now - self.last, MAX_CATCH_UP_TICKS * self.period)
        self.last = now
        self.carried += real_time_factor * elapsed
        steps = int(np.floor(self.carried / self.time_step + 1e-9))
        self.carried -= steps * self.time_step
        return steps

    def hold(self, now: float) -> None:
        """A tick while paused, or the resume: the pause is not time the world owes."""
        self.carried, self.last = 0.0, now


class TickGrid:
    """A grid of ``period`` simulated seconds on which a world ticks and publishes, so that it publishes at its own
    rate however the wall-clock or the followed clock's ticks fall.

    - A world that follows another's /clock ticks on the clock messages that reach a line (not at a faster leader's
      rate; with a slower leader, on every message): the grid starts at the first message (``start`` −inf).
    - A world that keeps its own clock advances in chunks ending on the lines (:meth:`steps_to_line`) and
      publishes at each line it reaches: a tick that comes late, after the timer skipped periods a busy process
      missed, publishes at each line it passes, and an early tick that reaches none publishes nothing.
    """

    def __init__(self, period: float, start: float = -np.inf):
        self.period = period
        self.next = start + period      # simulated time of the next line, s

    def due(self, time: float) -> bool:
        """True when simulated time ``time`` (s) is on or past the next line; the grid then moves on from it (or,
        after a jump past several lines, from ``time``)."""
        if time < self.next - FOLLOW_TOLERANCE_S:
            return False
        self.next += self.period
        if self.next <= time:
            self.next = time + self.period
        return True

    def steps_to_line(self, time: float, time_step: float) -> int:
        """Steps of ``time_step`` from simulated time ``time`` to the next line (at least one)."""
        return max(1, int(np.ceil((self.next - time) / time_step - 1e-9)))

    def restart(self, time: float) -> None:
        """Lines from simulated time ``time`` on (a resume: a paused world published on every tick)."""
        self.next = time + self.period


def time_msg(seconds: float) -> Time:
    """Simulated seconds -> builtin_interfaces/Time (nanosecond resolution)."""
    sec, nanosec = seconds_to_duration_fields(seconds, "simulated time")
    return Time(sec=sec, nanosec=nanosec)


def merged_joint_state(joints: Sequence[str], state, positions: np.ndarray, velocities: np.ndarray):
    """``positions`` and ``velocities`` (the joints' current values, ``joints`` order) with the entries a
    sensor_msgs/JointState names replaced by its finite values (an empty field keeps them); InputError naming
    the field for unknown or repeated names, wrong lengths or non-finite values."""
    joints, names = list(joints), list(state.name)
    unknown = [name for name in names if name not in joints]
    if unknown or len(set(names)) != len(names):
        raise InputError(f"joint_state.name: unknown or repeated joint name(s) in {names}; the joints are {joints}")
    index = [joints.index(name) for name in names]
    positions, velocities = positions.copy(), velocities.copy()
    for field, target in (("position", positions), ("velocity", velocities)):
        values = getattr(state, field)
        if len(values):
            target[index] = finite_vector(values, len(names), f"joint_state.{field}")
    return positions, velocities


def transform_msg(stamp: Time, transform: FrameTransform, prefix: str) -> TransformStamped:
    """A TransformStamped of ``transform`` with its frames prefixed (except ``world``)."""
    msg = TransformStamped()
    msg.header.stamp = stamp
    msg.header.frame_id = transform.parent if transform.parent == WORLD_FRAME else prefix + transform.parent
    msg.child_frame_id = prefix + transform.child
    x, y, z = (float(v) for v in transform.translation)
    msg.transform.translation.x, msg.transform.translation.y, msg.transform.translation.z = x, y, z
    msg.transform.rotation = quaternion_msg(matrix_to_quaternion(np.ascontiguousarray(transform.rotation,
                                                                                   dtype=float)))
    return msg


class SimulatorNode(GuardedNode):
    """A GuardedNode that runs a simulated world: time, TF, control services, diagnostics (module docstring).

    Subclasses call :meth:`start_simulation` at the end of their ``__init__`` (after declaring
    :func:`simulator_parameters` among their own) and implement the hooks below.
    """

    #: where the control services live (``<control_namespace>/pause`` ...)
    CONTROL_NAMESPACE = "simulation"

    # ------------------------------------------------------------------------------------ hooks

    @property
    def world_time(self) -> float:
        """Simulated time, s (settable: a follower starts at the time of the clock it joins)."""
        raise NotImplementedError

    @world_time.setter
    def world_time(self, seconds: float) -> None:
        raise NotImplementedError

    def advance_world(self, steps: int) -> None:
        """Advance by ``steps`` fixed steps; on DiscreteRobotError the state is the last one stepped to."""
        raise NotImplementedError

    def reset_world(self) -> None:
        """Restore the initial state (simulated time goes on)."""
        raise NotImplementedError

    def set_world_state(self, request) -> None:
        """Apply a SetSimulationState request; InputError naming the bad field leaves the state unchanged."""
        raise NotImplementedError

    def publish_state(self, stamp: Time) -> None:
        """Publish the world's state topics, stamped ``stamp``."""
        raise NotImplementedError

    def moving_transforms(self) -> Sequence[FrameTransform]:
        """The transforms of /tf at the current state."""
        raise NotImplementedError

    def base_transforms(self) -> Sequence[FrameTransform]:
        """Transforms published on /tf even without ``publish_tf``: a floating base's world pose, which
        robot_state_publisher cannot compute."""
        return []

    def static_transforms(self) -> Sequence[FrameTransform]:
        """The transforms of /tf_static."""
        return []

    def diagnostic_values(self) -> dict[str, float]:
        """World-specific figures for /diagnostics (e.g. energy drift)."""
        return {}

    def on_step_failed(self) -> None:
        """Clear the commands that led to a failed step (called before pausing or resetting)."""

    # ------------------------------------------------------------------------------------ machinery

    def start_simulation(self, values: dict, hardware_id: str) -> None:
        """Create the simulator's endpoints from its declared parameter ``values`` and start ticking."""
        self.time_step = values["time_step"]
        self.publish_rate = values["publish_rate"]
        self.real_time_factor = values["real_time_factor"]
        self.frame_prefix = values.get("frame_prefix", "")
        self.follow_clock = not values["publish_clock"]
        self.on_step_failure = values["on_step_failure"]
        self.paused = values["start_paused"]
        self.hardware_id = hardware_id
        self._pacer = RealTimePacer(self.time_step, 1.0 / self.publish_rate, time.monotonic())
        self._followed_ticks = TickGrid(1.0 / self.publish_rate)
        self._grid = TickGrid(1.0 / self.publish_rate, self.world_time)
        self._followed_time: float | None = None
        self._steps = self._step_wall_s = self._failed_steps = 0
        # the diagnostics' window: wall and simulated time at its start, and whether the world was running then
        # (start-up and pauses are no slowness)
        self._window = (time.monotonic(), self.world_time, False)
        self.clock_pub = None if self.follow_clock else self.create_publisher(ClockMsg, "/clock", CLOCK_QOS)
        if self.follow_clock:
            self.create_subscription(ClockMsg, "/clock", self._on_clock, CLOCK_QOS)
        self.publish_tf = values["publish_tf"]
        self.tf_pub = self.create_publisher(TFMessage, "/tf", STATE_QOS)
        if values["publish_tf"] and self.static_transforms():
            static = self.create_publisher(TFMessage, "/tf_static", LATCHED_QOS)
            stamp = time_msg(self.world_time)
            static.publish(TFMessage(transforms=[transform_msg(stamp, t, self.frame_prefix)
                                                 for t in self.static_transforms()]))
        self.diagnostics_pub = self.create_publisher(DiagnosticArray, "/diagnostics", STATE_QOS)
        namespace = self.CONTROL_NAMESPACE
        self.create_service(Trigger, f"{namespace}/pause", self._on_pause)
        self.create_service(Trigger, f"{namespace}/resume", self._on_resume)
        self.create_service(Trigger, f"{namespace}/reset", self._on_reset)
        from discrete_robot_interfaces.srv import SetSimulationState, StepSimulation

        self.create_service(StepSimulation, f"{namespace}/step", self._on_step)
        self.create_service(SetSimulationState, f"{namespace}/set_state", self._on_set_state)
        # A steady clock: with use_sim_time the node's clock is /clock, which this timer itself drives. A world that
        # follows /clock ticks from the clock messages instead (_on_clock): a timer of its own, out of phase with
        # the leader's, would find no new time on some ticks and publish less often than its rate.
        steady = Clock(clock_type=ClockType.STEADY_TIME)
        self._last_clock_wall = -np.inf
        if self.follow_clock:
            # without /clock (no leader running) the world still shows its state at its own rate, as when paused
            self.create_timer(1.0 / self.publish_rate, self._publish_without_clock, clock=steady)
        else:
            self.create_timer(1.0 / self.publish_rate, self.tick, clock=steady)
        self.create_timer(DIAGNOSTICS_PERIOD_S, self.publish_diagnostics, clock=steady)
        self.publish_all()

    def _on_clock(self, msg: ClockMsg) -> None:
        followed = msg.clock.sec + msg.clock.nanosec * 1e-9
        if self._followed_time is None:
            # joining a running system: the world starts (from its initial state) at the system's time, instead
            # of simulating the time before it joined
            self.world_time = followed
        self._followed_time = followed
        self._last_clock_wall = time.monotonic()
        if self._followed_ticks.due(self._followed_time):
            self.tick()

    def _publish_without_clock(self) -> None:
        if time.monotonic() - self._last_clock_wall > LEADER_SILENCE_S:
            self.publish_all(tf=False)

    def steps_due(self) -> int:
        """Whole steps this tick owes the world: by the real-time factor, or up to the followed /clock."""
        if self.follow_clock:
            if self._followed_time is None:
                return 0
            return max(0, int(np.floor((self._followed_time - self.world_time) / self.time_step + 1e-9)))
        if self.real_time_factor == 0.0:
            return -1   # as many as fit in the tick
        return self._pacer.steps(time.monotonic(), self.real_time_factor)

    def tick(self) -> None:
        """One wall-clock tick: advance the world by the steps due, then publish everything at its new time.

        Paused, the state and /clock are still published (late joiners see them) but not /tf, whose buffers
        warn about repeated stamps."""
        if self.paused:
            self._pacer.hold(time.monotonic())
            self.publish_all(tf=False)
            return
        start = time.perf_counter()
        steps = self.steps_due()
        if steps == 0:
            return
        if self.follow_clock:
            # a follower must reach the leader's time, so it drops nothing; it catches up over several ticks
            self._advance(min(steps, MAX_CATCH_UP_TICKS * int(np.ceil(1.0 / (self.publish_rate * self.time_step)))))
        elif steps < 0:
            self._advance_within(sys.maxsize, start + AS_FAST_AS_POSSIBLE_SHARE / self.publish_rate)
        else:
            # as much wall time as the simulated time the tick makes up (a late tick owes several periods), at least
            # a period: steps are dropped only when stepping is slower than the requested real-time factor
            budget = max(1.0 / self.publish_rate, steps * self.time_step / self.real_time_factor)
            self._advance_on_grid(steps, start + budget)
            return
        self.publish_all()

    @property
    def step_cost(self) -> float:
        """Mean wall time of one step since start, s (0 before the first)."""
        return self._step_wall_s / self._steps if self._steps else 0.0

    def _advance_on_grid(self, steps: int, deadline: float) -> None:
        """Advance by up to ``steps`` before ``deadline`` (as :meth:`_advance_within`), publishing at each line of
        the publish grid the world reaches. The deadline is for stepping: the time spent publishing moves it."""
        while steps > 0 and not self.paused:
            chunk = min(steps, self._grid.steps_to_line(self.world_time, self.time_step))
            done = self._advance_within(chunk, deadline)
            steps -= chunk
            if self._grid.due(self.world_time):
                published = time.perf_counter()
                self.publish_all()
                deadline += time.perf_counter() - published
            if done < chunk:
                return

    def _advance_within(self, steps: int, deadline: float) -> int:
        """Advance by up to ``steps``, in chunks sized from the measured step cost, until ``deadline``
        (perf_counter s). Steps that do not fit are dropped: the world then runs slower than requested (which
        the diagnostics report) and the node keeps serving instead of stepping for seconds. Returns the steps
        taken."""
        taken = 0
        while taken < steps and not self.paused:
            room = deadline - time.perf_counter()
            if room <= 0.0:
                break
            cost = self.step_cost
            chunk = 1 if cost == 0.0 else max(1, min(steps - taken, int(room / cost)))
            if not self._advance(chunk):
                break
            taken += chunk
        return taken

    def _advance(self, steps: int) -> bool:
        """Advance by ``steps``; a failure is reported and handled by ``on_step_failure``. True when it worked."""
        start = time.perf_counter()
        try:
            self.advance_world(steps)
        except DiscreteRobotError as error:
            self._failed_steps += 1
            self.on_step_failed()
            if self.on_step_failure == "reset":
                self.reset_world()
            else:
                self.paused = True
            then = "reset" if self.on_step_failure == "reset" else "paused"
            self.get_logger().error(f"simulation step failed at t = {self.world_time:.3f} s: {error}; commands "
                                    f"cleared and the simulation {then} (on_step_failure); the node keeps serving")
            return False
        finally:
            self._step_wall_s += time.perf_counter() - start
        self._steps += steps
        return True

    def publish_all(self, tf: bool = True) -> None:
        """/clock, the state topics and (``tf``) /tf, all stamped with the simulated time."""
        stamp = time_msg(self.world_time)
        if self.clock_pub is not None:
            self.clock_pub.publish(ClockMsg(clock=stamp))
        self.publish_state(stamp)
        transforms = [*self.base_transforms(), *(self.moving_transforms() if self.publish_tf else [])]
        if tf and transforms:
            self.tf_pub.publish(TFMessage(transforms=[transform_msg(stamp, t, self.frame_prefix) for t in transforms]))

    def publish_diagnostics(self) -> None:
        now, sim_now = time.monotonic(), self.world_time
        wall0, sim0, was_running = self._window
        self._window = (now, sim_now, self._steps > 0 and not self.paused)
        achieved = (sim_now - sim0) / max(now - wall0, 1e-9)
        values = {"real_time_factor_achieved": achieved, "real_time_factor_requested": self.real_time_factor,
                  "step_cost_s": self.step_cost, "time_step_s": self.time_step, "sim_time_s": sim_now,
                  "steps": float(self._steps), "failed_steps": float(self._failed_steps),
                  **self.diagnostic_values()}
        level, message = DiagnosticStatus.OK, "running"
        if self.paused:
            message = "paused"
        elif self._failed_steps:
            level, message = DiagnosticStatus.WARN, f"{self._failed_steps} failed steps since start"
        elif (was_running and self.real_time_factor > 0.0 and achieved < 0.9 * self.real_time_factor
              and not self.follow_clock):
            # over the window, not per tick: a late tick is made up by the next (RealTimePacer)
            level, message = DiagnosticStatus.WARN, "slower than the requested real-time factor"
            self.refusals.warning("keep up", f"the simulation runs at {achieved:.2f}x real time, below the "
                                             f"requested real_time_factor {self.real_time_factor:g}; lower "
                                             "real_time_factor, raise time_step or lower publish_rate")
        status = DiagnosticStatus(level=level, name=f"{self.get_name()}: simulation", message=message,
                                  hardware_id=self.hardware_id,
                                  values=[KeyValue(key=k, value=f"{v:.6g}") for k, v in values.items()])
        msg = DiagnosticArray(status=[status])
        msg.header.stamp = time_msg(sim_now)
        self.diagnostics_pub.publish(msg)

    # ------------------------------------------------------------------------------------ services

    def _on_pause(self, request, response):
        self.paused = True
        response.success, response.message = True, f"paused at t = {self.world_time:.6f} s"
        return response

    def _on_resume(self, request, response):
        self.paused = False
        self._pacer.hold(time.monotonic())
        self._grid.restart(self.world_time)
        self._window = (time.monotonic(), self.world_time, True)
        response.success, response.message = True, f"resumed at t = {self.world_time:.6f} s"
        return response

    def _on_reset(self, request, response):
        self.on_step_failed()
        self.reset_world()
        self.publish_all()
        response.success, response.message = True, f"initial state restored at t = {self.world_time:.6f} s"
        return response

    def _on_step(self, request, response):
        if not self.paused:
            response.success, response.message = False, "steps: the simulation is running; pause it first"
            return response
        steps = bounded_count(request.steps, MAX_STEP_REQUEST, "steps", "MAX_STEP_REQUEST")
        stepped = self._advance(steps) if steps else True
        if stepped:
            self.publish_all()
        response.success = stepped
        response.message = (f"stepped {steps} x {self.time_step:g} s to t = {self.world_time:.6f} s" if stepped else
                            f"steps: a step failed; state kept at t = {self.world_time:.6f} s")
        response.sim_time = time_msg(self.world_time)
        return response

    def _on_set_state(self, request, response):
        self.set_world_state(request)
        self.publish_all()
        response.success, response.message = True, f"state set at t = {self.world_time:.6f} s"
        return response
