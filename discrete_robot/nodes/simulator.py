"""What every simulator node shares: simulated time, TF, simulation control and diagnostics.

A simulator node (``discrete_robot_node``, ``space_robot_node``) derives from :class:`SimulatorNode` and
provides its world through a few hooks (:meth:`~SimulatorNode.advance_world`, ``world``,
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
  initial state; simulated time goes on (tf buffers drop data older than what they hold, and controllers
  would take a jump back for a new run), and the reset is announced on /diagnostics at once and counted
  (``resets``) in every report after it. ``control_services`` false leaves these services out (a shared
  network where anyone on the domain could otherwise pause or move the world; README, Security).
- **A failed step** (no convergence even in sub-steps) leaves the state as it was; the node says why, then
  pauses or resets (``on_step_failure``) and keeps serving.
- **/diagnostics** (diagnostic_msgs/DiagnosticArray) at 1 Hz: achieved real-time factor, step cost,
  conserved-quantity drift and failed steps.
"""

import copy
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
    StartupError,
    one_of,
    positive,
    quaternion_msg,
    seconds_to_duration_fields,
)
from discrete_robot.validation import (
    MAX_STEP_BYTES,
    bounded_count,
    discrete_step_bytes,
    energy_in_proportion,
    finite_vector,
)

#: /clock: best effort would lose ticks; volatile, as Gazebo's bridge publishes it
CLOCK_QOS = STATE_QOS
#: the most steps a paused simulator may owe to ``step`` requests (one request or several): they run on its ticks
MAX_STEP_REQUEST = 100_000
#: the slowest real-time factor accepted (0 aside, which means as fast as possible): 1 s of simulated time in
#: 100 s. Slower, a world at 1 kHz takes a step less than once per tick and looks stopped; pause it instead.
#: Whatever the factor, the state is published at least every :data:`STATE_SILENCE_S`.
MIN_REAL_TIME_FACTOR = 0.01
#: s of wall time: the longest a simulator goes without publishing its state (paused, failed, waiting for the
#: followed clock, or too slow a real-time factor to reach a publish line), so it is never silent (>= 1 Hz)
STATE_SILENCE_S = 0.5
#: s: the longest one step may take (a tick cannot split a step; services wait that long at worst)
MAX_STEP_COST_S = 0.5
#: steps tried at start on a copy of the world, to time one
TRIAL_STEPS = 5
#: the shortest reach assumed for the energy bound, m (a model of point masses at its joints has none)
MIN_REACH = 0.01
#: a follower more than this many publish periods behind the followed /clock reports WARN (cannot keep up)
FOLLOWER_LAG_PERIODS = 5
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


def real_time_factor_check(value) -> str | None:
    """0 (as fast as possible) or at least :data:`MIN_REAL_TIME_FACTOR`."""
    if value == 0.0 or value >= MIN_REAL_TIME_FACTOR:
        return None
    return (f"must be 0 (as fast as possible) or at least {MIN_REAL_TIME_FACTOR:g} (slower, the world looks "
            f"stopped: pause it instead), got {value:g}")


def simulator_parameters(time_step: float, publish_rate: float) -> list[ParameterSpec]:
    """The parameters every simulator declares, with the node's own default step (s) and rate (Hz)."""
    return [
        ParameterSpec("time_step", time_step, "fixed integration step, s", check=positive,
                      value_range=(1e-5, 1.0), read_only=True),
        ParameterSpec("publish_rate", publish_rate, "rate of the simulation ticks and of the published topics, Hz",
                      check=positive, value_range=(0.1, 1000.0), read_only=True),
        ParameterSpec("real_time_factor", 1.0, "simulated seconds per wall-clock second (1 = real time, 0 = as "
                                               f"fast as possible; otherwise at least {MIN_REAL_TIME_FACTOR:g})",
                      check=real_time_factor_check, value_range=(0.0, 100.0)),
        ParameterSpec("publish_clock", True, "publish /clock from this world's simulated time; false = follow "
                                             "/clock (one clock per system; the world then ticks and publishes "
                                             "every 1/publish_rate s of that clock)", read_only=True),
        ParameterSpec("publish_tf", True, "publish every link on /tf and /tf_static (off when "
                                          "robot_state_publisher does it)", read_only=True),
        ParameterSpec("start_paused", False, "start paused (resume or step through the control services)",
                      read_only=True),
        ParameterSpec("on_step_failure", "pause", "after a step that fails even in sub-steps: pause or reset",
                      check=one_of("pause", "reset"), read_only=True),
        ParameterSpec("control_services", True, "serve pause, resume, reset, step and set_state (false on a shared "
                                                "network: nobody on the domain can then stop or move the world)",
                      read_only=True),
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


def check_fixed_base_world(simulation, model, integrator: str) -> None:
    """StartupError, with the reason, for a fixed-base world the node could not serve: a discrete step needing
    more than :data:`MAX_STEP_BYTES` (:func:`discrete_step_bytes`); an initial state whose energy is not finite
    or out of proportion to the model (validation.energy_in_proportion, with the model's total mass and its
    reach: the sum of its joints' offsets plus its longest link); an initial state whose step fails; or one
    step (the fastest of :data:`TRIAL_STEPS` on a copy of the simulation: the first ones load compiled code)
    longer than :data:`MAX_STEP_COST_S`: a tick cannot split a step, so the executor would be held that long
    from every service and signal (a slow but servable step only runs the world below real time, which the
    diagnostics report; a tick's period is no bound: one busy moment of a loaded machine exceeds it)."""
    if integrator == "discrete" and discrete_step_bytes(model.dof) > MAX_STEP_BYTES:
        raise StartupError(f"model '{model.name}': {model.dof} joints need {discrete_step_bytes(model.dof):.3g} "
                           f"bytes per discrete step, more than the {MAX_STEP_BYTES:.3g} this node serves "
                           "(16 n^4 bytes: at most 64 joints)")
    mass = sum(link.mass for link in model.links)
    reach = max(MIN_REACH, sum(float(np.linalg.norm(link.joint.origin)) for link in model.links)
                + max(float(np.linalg.norm(link.tip)) for link in model.links))
    try:
        energy_in_proportion(simulation.energy(), mass, reach, simulation.time_step,
                             "initial_positions/initial_velocities")
        # the trial steps rebind the copies' state (q, q̇, time; the stepper's last step), not the simulation's
        trial = copy.copy(simulation)
        trial.stepper = copy.copy(simulation.stepper)
        held = np.zeros(model.dof)
        cost = np.inf
        # the first two load the compiled code of a first step and of one continuing from its result (0.06-0.15 s
        # in a fresh process); the fastest of the rest is the step's cost
        for _ in range(TRIAL_STEPS):
            start = time.perf_counter()
            trial.step(1, held)
            cost = min(cost, time.perf_counter() - start)
    except DiscreteRobotError as error:
        raise StartupError(f"model '{model.name}': the initial state cannot be simulated: {error}") from None
    if cost > MAX_STEP_COST_S:
        raise StartupError(f"model '{model.name}': one step takes {cost:.3g} s, more than the {MAX_STEP_COST_S:g} "
                           "s the node may spend on one step and still answer services and signals; use a smaller "
                           "model")


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
    def world(self):
        """The simulated world: any object whose ``time`` attribute is its simulated time, s."""
        raise NotImplementedError

    @property
    def world_time(self) -> float:
        """Simulated time, s (settable: a follower starts at the time of the clock it joins)."""
        return self.world.time

    @world_time.setter
    def world_time(self, seconds: float) -> None:
        self.world.time = seconds

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

    def on_reset(self) -> None:
        """Clear the commands before a ``reset`` request restores the initial state (as after a failed step)."""
        self.on_step_failed()

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
        if self.paused and not values["control_services"]:
            raise StartupError("start_paused: needs control_services (without them nothing could resume the world)")
        self.hardware_id = hardware_id
        self._resets = 0                  # reset requests served, reported on /diagnostics
        self._pacer = RealTimePacer(self.time_step, 1.0 / self.publish_rate, time.monotonic())
        self._followed_ticks = TickGrid(1.0 / self.publish_rate)
        self._grid = TickGrid(1.0 / self.publish_rate, self.world_time)
        self._followed_time: float | None = None
        self._steps = self._step_wall_s = self._failed_steps = 0
        self._pending_steps = 0           # steps owed to step requests, taken on the paused world's ticks
        self._failure: str | None = None  # why the last step failed, until the next resume, reset or set_state
        self._reported_failures = 0       # failed steps already reported on /diagnostics
        self._last_publish, self._published_time = time.monotonic(), None   # wall time and simulated time, s
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
        if values["control_services"]:
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
        self.add_post_set_parameters_callback(self._on_simulator_parameters)
        self.publish_all()

    def _on_simulator_parameters(self, parameters) -> None:
        """Validated before (declare_parameters' guard); real_time_factor applies from the next tick."""
        for parameter in parameters:
            if parameter.name == "real_time_factor":
                self.real_time_factor = parameter.value

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
        now = time.monotonic()
        if self.paused and self._pending_steps and now - self._last_clock_wall > LEADER_SILENCE_S:
            self._take_requested_steps()     # no leader ticks this world: its own timer takes the steps owed
        elif now - self._last_clock_wall > LEADER_SILENCE_S or now - self._last_publish > STATE_SILENCE_S:
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
        warn about repeated stamps; steps owed to ``step`` requests are taken here, a tick's share at a time. A
        tick that reaches no publish line (no step due, or too few) publishes the state when nothing was
        published for :data:`STATE_SILENCE_S`."""
        if self.paused:
            self._pacer.hold(time.monotonic())
            if self._pending_steps:
                self._take_requested_steps()
            else:
                self.publish_all(tf=False)
            return
        start = time.perf_counter()
        steps = self.steps_due()
        if steps == 0:
            self._keep_alive()
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
            self._keep_alive()
            return
        self.publish_all()

    def _keep_alive(self) -> None:
        """The state, when nothing was published for :data:`STATE_SILENCE_S` (/tf only if the time moved on since
        the last publication: tf buffers warn about a repeated stamp)."""
        if time.monotonic() - self._last_publish > STATE_SILENCE_S:
            self.publish_all(tf=self.world_time != self._published_time)

    @property
    def step_cost(self) -> float:
        """Mean wall time of one step since start, s (0 before the first)."""
        return self._step_wall_s / self._steps if self._steps else 0.0

    def _take_requested_steps(self) -> None:
        """A paused tick's share of the steps owed to ``step`` requests (as a real_time_factor 0 tick takes), then
        the state at the time reached; a failed step drops the rest."""
        deadline = time.perf_counter() + AS_FAST_AS_POSSIBLE_SHARE / self.publish_rate
        failures = self._failed_steps
        taken = self._advance_within(self._pending_steps, deadline)
        self._pending_steps = 0 if self._failed_steps > failures else self._pending_steps - taken
        self.publish_all(tf=taken > 0)

    def _advance_on_grid(self, steps: int, deadline: float) -> None:
        """Advance by up to ``steps`` before ``deadline`` (as :meth:`_advance_within`), publishing at each line of
        the publish grid the world reaches. The deadline is for stepping: the time spent publishing moves it."""
        while steps > 0:
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
        while taken < steps:
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
            self._failure = f"a step failed at t = {self.world_time:.3f} s: {' '.join(str(error).split())}"
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
        self._last_publish, self._published_time = time.monotonic(), self.world_time
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
                  "resets": float(self._resets), **self.diagnostic_values()}
        self._publish_status(*self._diagnostic_level(achieved, was_running), values)

    def _publish_status(self, level: bytes, message: str, values: dict[str, float]) -> None:
        """The simulation's status on /diagnostics, stamped with the simulated time."""
        status = DiagnosticStatus(level=level, name=f"{self.get_name()}: simulation", message=message,
                                  hardware_id=self.hardware_id,
                                  values=[KeyValue(key=k, value=f"{v:.6g}") for k, v in values.items()])
        msg = DiagnosticArray(status=[status])
        msg.header.stamp = time_msg(self.world_time)
        self.diagnostics_pub.publish(msg)

    def _diagnostic_level(self, achieved: float, was_running: bool) -> tuple[bytes, str]:
        """/diagnostics level and message, worst first: ERROR for a step that failed since the last report, and
        while paused after a failure (with its reason); WARN while behind the requested real-time factor over
        the last window (a late tick is made up by the next: RealTimePacer) or, following /clock, behind the
        followed time; OK paused or running (WARN after failures since start)."""
        failures, self._reported_failures = self._failed_steps - self._reported_failures, self._failed_steps
        lag = (self._followed_time - self.world_time if self.follow_clock and self._followed_time is not None
               else 0.0)
        if failures:
            return DiagnosticStatus.ERROR, f"{failures} failed step(s) in the last second; {self._failure}"
        if self.paused and self._failure is not None:
            return DiagnosticStatus.ERROR, f"paused after a failed step ({self.on_step_failure}): {self._failure}"
        if self.paused:
            return DiagnosticStatus.OK, "paused"
        if was_running and self.real_time_factor > 0.0 and achieved < 0.9 * self.real_time_factor \
                and not self.follow_clock:
            self.refusals.warning("keep up", f"the simulation runs at {achieved:.2f}x real time, below the "
                                             f"requested real_time_factor {self.real_time_factor:g}; lower "
                                             "real_time_factor, raise time_step or lower publish_rate")
            return DiagnosticStatus.WARN, (f"behind real time: {achieved:.2f}x, below the requested "
                                           f"real_time_factor {self.real_time_factor:g}")
        if lag > FOLLOWER_LAG_PERIODS / self.publish_rate:
            return DiagnosticStatus.WARN, f"behind the followed /clock by {lag:.3f} s: the steps do not keep up"
        if self._failed_steps:
            return DiagnosticStatus.WARN, f"running; {self._failed_steps} failed step(s) since start"
        return DiagnosticStatus.OK, "running"

    # ------------------------------------------------------------------------------------ services

    def _on_pause(self, request, response):
        self.paused = True
        self._pending_steps = 0
        response.success, response.message = True, f"paused at t = {self.world_time:.6f} s"
        return response

    def _on_resume(self, request, response):
        self.paused = False
        self._pending_steps = 0
        self._failure = None
        self._pacer.hold(time.monotonic())
        self._grid.restart(self.world_time)
        self._window = (time.monotonic(), self.world_time, True)
        response.success, response.message = True, f"resumed at t = {self.world_time:.6f} s"
        return response

    def _on_reset(self, request, response):
        self._pending_steps = 0
        self._failure = None
        self.on_reset()
        self.reset_world()
        self._resets += 1
        self.publish_all()
        response.success = True
        response.message = (f"initial state restored at t = {self.world_time:.6f} s; simulated time goes on "
                            f"(reset {self._resets})")
        self._publish_status(DiagnosticStatus.OK, f"reset: {response.message}",
                             {"sim_time_s": self.world_time, "resets": float(self._resets)})
        return response

    def _on_step(self, request, response):
        """Accepted at once: the steps are owed and taken on the next ticks (a tick's share each, so services,
        parameters and signals are served meanwhile); ``sim_time`` is the time they reach. A pause, a resume or
        a reset drops the steps still owed."""
        if not self.paused:
            response.success, response.message = False, "steps: the simulation is running; pause it first"
            return response
        owed = bounded_count(self._pending_steps + request.steps, MAX_STEP_REQUEST, "steps",
                             "MAX_STEP_REQUEST", f"{self._pending_steps} steps are still to come")
        self._pending_steps = owed
        response.success = True
        target = self.world_time + owed * self.time_step
        response.message = (f"accepted: {request.steps} x {self.time_step:g} s; {owed} steps to come on the next "
                            f"ticks, to t = {target:.6f} s")
        response.sim_time = time_msg(target)
        return response

    def _on_set_state(self, request, response):
        self.set_world_state(request)
        self._failure = None
        self.publish_all()
        response.success, response.message = True, f"state set at t = {self.world_time:.6f} s"
        return response
