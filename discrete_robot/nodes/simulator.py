"""What every simulator node shares: simulated time, TF, simulation control and diagnostics, over ROS.

A simulator node (``discrete_robot_node``, ``space_robot_node``) derives from :class:`SimulatorNode` and
provides its world through the hooks of discrete_robot.simulation.runtime (``world``, ``advance_world``,
``reset_world``, ...) and a few of its own (:meth:`~SimulatorNode.publish_state`, ``moving_transforms``, ...).
The runtime runs the world (ticks, steps, pause/resume/step/reset, failed steps, diagnostics); this class
gives it, the same way for every world:

- **Simulated time.** A steady wall-clock timer (never the node's own clock, so ``use_sim_time`` cannot stall
  it) ticks the runtime. With ``publish_clock`` the node publishes ``/clock`` (rosgraph_msgs/Clock) from its
  simulated time; without, it follows ``/clock`` (it advances its world up to the time received and publishes
  each ``1 / publish_rate`` of that clock's simulated seconds, or on every clock message when the leader ticks
  more slowly), so a system has one clock. Every message a simulator publishes is stamped with its simulated
  time.
- **TF** (``publish_tf``): the pose of every URDF link on ``/tf`` each tick and the fixed joints once on
  ``/tf_static``, frames named as in the URDF with ``frame_prefix`` (``world``, the inertial frame both
  robots share, is never prefixed). A floating base's ``world`` -> base is published either way
  (robot_state_publisher, which otherwise publishes the links from joint_states, cannot know it).
- **Control services** under ``<control_namespace>/``: ``pause``, ``resume``, ``reset`` (std_srvs/Trigger),
  ``step`` (discrete_robot_interfaces/StepSimulation, while paused) and ``set_state``
  (discrete_robot_interfaces/SetSimulationState). ``start_paused`` starts the world paused. A reset keeps
  simulated time going (tf buffers drop data older than what they hold, and controllers would take a jump back
  for a new run), and is announced on /diagnostics at once. ``control_services`` false leaves these services out
  (a shared network where anyone on the domain could otherwise pause or move the world; README, Security).
- **/diagnostics** (diagnostic_msgs/DiagnosticArray) at 1 Hz: achieved real-time factor, step cost,
  conserved-quantity drift and failed steps.
"""

from collections.abc import Sequence

from builtin_interfaces.msg import Time
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from rclpy.clock import Clock, ClockType
from rosgraph_msgs.msg import Clock as ClockMsg
from std_srvs.srv import Trigger
from tf2_msgs.msg import TFMessage

from discrete_robot.model.urdf import FrameTransform
from discrete_robot.nodes.common import (
    LATCHED_QOS,
    STATE_QOS,
    GuardedNode,
    ParameterSpec,
    StartupError,
    one_of,
    positive,
)
from discrete_robot.nodes.conversions import time_msg, transform_msg
from discrete_robot.simulation.runtime import Level, SimulationRuntime

#: /clock: best effort would lose ticks; volatile, as Gazebo's bridge publishes it
CLOCK_QOS = STATE_QOS
#: the slowest real-time factor accepted (0 aside, which means as fast as possible): 1 s of simulated time in
#: 100 s. Slower, a world at 1 kHz takes a step less than once per tick and looks stopped; pause it instead.
#: Whatever the factor, the state is published at least every runtime.STATE_SILENCE_S.
MIN_REAL_TIME_FACTOR = 0.01
DIAGNOSTICS_PERIOD_S = 1.0


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


class SimulatorNode(GuardedNode, SimulationRuntime):
    """A GuardedNode that runs a simulated world on a SimulationRuntime: time, TF, control services,
    diagnostics (module docstring).

    Subclasses call :meth:`start_simulation` at the end of their ``__init__`` (after declaring
    :func:`simulator_parameters` among their own) and implement the runtime's world hooks and those below.
    """

    #: where the control services live (``<control_namespace>/pause`` ...)
    CONTROL_NAMESPACE = "simulation"

    # ------------------------------------------------------------------------------------ hooks

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

    # ------------------------------------------------------------------------------------ machinery

    def start_simulation(self, values: dict, hardware_id: str) -> None:
        """Create the simulator's endpoints from its declared parameter ``values`` and start ticking."""
        if values["start_paused"] and not values["control_services"]:
            raise StartupError("start_paused: needs control_services (without them nothing could resume the world)")
        self.start_runtime(values["time_step"], values["publish_rate"], values["real_time_factor"],
                           not values["publish_clock"], values["on_step_failure"], values["start_paused"])
        self.frame_prefix = values.get("frame_prefix", "")
        self.hardware_id = hardware_id
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
        if self.follow_clock:
            # without /clock (no leader running) the world still shows its state at its own rate, as when paused
            self.create_timer(1.0 / self.publish_rate, self.tick_without_clock, clock=steady)
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
        self.follow(msg.clock.sec + msg.clock.nanosec * 1e-9)

    def publish_all(self, tf: bool = True) -> None:
        """/clock, the state topics and (``tf``) /tf, all stamped with the simulated time."""
        stamp = time_msg(self.world_time)
        self.published()
        if self.clock_pub is not None:
            self.clock_pub.publish(ClockMsg(clock=stamp))
        self.publish_state(stamp)
        transforms = [*self.base_transforms(), *(self.moving_transforms() if self.publish_tf else [])]
        if tf and transforms:
            self.tf_pub.publish(TFMessage(transforms=[transform_msg(stamp, t, self.frame_prefix) for t in transforms]))

    def log_step_failure(self, message: str) -> None:
        self.get_logger().error(message)

    def warn_behind(self, message: str) -> None:
        self.refusals.warning("keep up", message)

    def publish_diagnostics(self) -> None:
        self._publish_status(*self.diagnostics())

    def _publish_status(self, level: Level, message: str, values: dict[str, float]) -> None:
        """The simulation's status on /diagnostics, stamped with the simulated time."""
        status = DiagnosticStatus(level=bytes([level]), name=f"{self.get_name()}: simulation", message=message,
                                  hardware_id=self.hardware_id,
                                  values=[KeyValue(key=k, value=f"{v:.6g}") for k, v in values.items()])
        msg = DiagnosticArray(status=[status])
        msg.header.stamp = time_msg(self.world_time)
        self.diagnostics_pub.publish(msg)

    # ------------------------------------------------------------------------------------ services

    def _on_pause(self, request, response):
        response.success, response.message = True, self.pause()
        return response

    def _on_resume(self, request, response):
        response.success, response.message = True, self.resume()
        return response

    def _on_reset(self, request, response):
        response.success, response.message = True, self.reset()
        self._publish_status(Level.OK, f"reset: {response.message}",
                             {"sim_time_s": self.world_time, "resets": float(self.resets)})
        return response

    def _on_step(self, request, response):
        """``steps`` steps, or (``steps`` 0) those that reach ``duration``. Accepted at once: the steps are owed
        and taken on the next ticks (a tick's share each, so services, parameters and signals are served
        meanwhile); ``sim_time`` is the time they reach. A pause, a resume or a reset drops the steps still owed."""
        steps = request.steps or self.steps_for(request.duration.sec + request.duration.nanosec * 1e-9)
        refused, target = self.request_steps(steps)
        if refused:
            response.success, response.message = False, refused
            return response
        response.success = True
        response.message = (f"accepted: {steps} x {self.time_step:g} s; {self.pending_steps} steps to come on the "
                            f"next ticks, to t = {target:.6f} s")
        response.sim_time = time_msg(target)
        return response

    def _on_set_state(self, request, response):
        self.set_world_state(request)
        response.success, response.message = True, self.state_set()
        return response
