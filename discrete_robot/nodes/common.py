"""What every discrete_robot node shares: parameters, QoS, message conversions, main().

Nodes declare their parameters as a list of :class:`ParameterSpec`; each spec
carries its description (shown by ``ros2 param describe``), an optional range
and a check. Invalid values are rejected at startup (the node logs the reason
and exits non-zero) and at set time (the set fails with the reason), so a node
never runs with a value it cannot use.

Every node derives from :class:`GuardedNode`: its service, subscription and timer
callbacks are wrapped so that no exception reaches the executor (a node is never
stopped by what it receives), and no success response leaves with a NaN or an
infinity in it. The guard is a safety net; the core still refuses bad input with
specific messages, which the guard passes on unchanged.

Conventions every node module follows (tests and bringup rely on them):
- the specs are a module-level list ``PARAMETERS`` of :class:`ParameterSpec`, so the
  config/launch consistency tests can read them without starting ROS;
- the node class has ``NODE_NAME`` (also its key in ``config/<node>.yaml``) and takes
  ``**kwargs`` for ``Node.__init__``;
- the module ends with ``main = node_main(TheNodeClass)`` (the console_scripts entry).
"""

import inspect
import math
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, NoReturn

import numpy as np
import rclpy
from builtin_interfaces.msg import Time
from geometry_msgs.msg import Point, Pose, Quaternion
from rcl_interfaces.msg import FloatingPointRange, IntegerRange, ParameterDescriptor, SetParametersResult
from rclpy.clock import Clock, ClockType
from rclpy.exceptions import ParameterException, ParameterUninitializedException
from rclpy.executors import Executor, MultiThreadedExecutor, SingleThreadedExecutor
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from rclpy.signals import SignalHandlerOptions
from rclpy.task import Future
from sensor_msgs.msg import JointState

from discrete_robot.budget import STOP
from discrete_robot.errors import DiscreteRobotError
from discrete_robot.validation import finite_scalar, ros_name_problem

#: robot_description and static markers: late joiners (RViz, robot_state_publisher) still get the last message.
LATCHED_QOS = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)
#: joint states, poses, commands: the ROS default (reliable, volatile, depth 10).
STATE_QOS = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.VOLATILE)
#: a simulator's joint_states, on both ends: a simulator whose tick came late catches up and publishes the states
#: of the time it missed at once (180 after a tick 1.8 s late on a loaded machine), and a reader that integrates
#: every state (manipulation_node's object follows every fingertip move) needs them all. With depth 10 the
#: writer's history no longer held what a busy reader had not yet acknowledged, nor the reader's queue what its
#: callback had not yet taken: states were lost, the fingertip jumped along the chord of its path, and a
#: push-to-pose beside the test suite missed its goal by 46 degrees. 1000 states are 10 s at 100 Hz.
JOINT_STATE_QOS = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE,
                             durability=DurabilityPolicy.VOLATILE)
#: service requests: KEEP_LAST would silently drop a request once a busy service has ``depth`` outstanding (the
#: default 10: the 11th); KEEP_ALL keeps every request until it is taken, and each is bounded work (see
#: discrete_robot.budget), so every request is answered, the last after the ones before it.
SERVICE_QOS = QoSProfile(depth=1000, history=HistoryPolicy.KEEP_ALL, reliability=ReliabilityPolicy.RELIABLE,
                         durability=DurabilityPolicy.VOLATILE)
#: every action server and client: the goal, cancel and result services keep every request, as
#: :data:`SERVICE_QOS` does for services (rclpy's default is KEEP_LAST 10: an 11th goal sent at once is lost).
#: Keyword arguments of rclpy.action.ActionServer and ActionClient.
ACTION_QOS = {"goal_service_qos_profile": SERVICE_QOS, "cancel_service_qos_profile": SERVICE_QOS,
              "result_service_qos_profile": SERVICE_QOS}
#: how often one endpoint may log the same kind of refusal, s (the rest are counted and reported with the next)
LOG_PERIOD_S = 5.0


class StartupError(DiscreteRobotError):
    """The node cannot start with its parameters; the message says which and why."""


Check = Callable[[Any], str | None]


@dataclass(frozen=True)
class ParameterSpec:
    """One declared parameter.

    ``default`` fixes the type; an array parameter that defaults to empty needs
    ``type`` (an empty YAML/Python list carries no element type). ``check``
    returns the reason a value is invalid, or None.
    """

    name: str
    default: Any
    description: str
    check: Check | None = None
    value_range: tuple[float, float] | None = None
    type: Parameter.Type | None = None
    read_only: bool = False


def positive(value) -> str | None:
    return None if value > 0 else "must be > 0"


def non_negative(value) -> str | None:
    return None if value >= 0 else "must be >= 0"


def finite_values(value) -> str | None:
    values = np.atleast_1d(np.asarray(value, dtype=float))
    return None if np.all(np.isfinite(values)) else "must be finite (no NaN or inf)"


def ros_name(relative_only: bool = False, trailing_slash: bool = False, empty: bool = False) -> Check:
    """A check of a name parameter against the ROS naming rules (validation.ros_name_problem); ``empty``: ""
    is allowed (no prefix)."""

    def check(value) -> str | None:
        if empty and value == "":
            return None
        return ros_name_problem(value, relative_only, trailing_slash)

    return check


def one_of(*choices: str) -> Check:
    def check(value) -> str | None:
        return None if value in choices else f"must be one of {', '.join(choices)} (got {value!r})"

    return check


#: the robot as robot_state_publisher and gz_ros2_control take it: every node with a ``model_file`` takes this too
ROBOT_DESCRIPTION = ParameterSpec("robot_description", "", "the robot's URDF text; non-empty: used instead of "
                                  "model_file (model/sources.py)", read_only=True)
#: a URDF arm's tool link or frame as its fingertip (planning and pushing), with ``finger_radius``
TIP_LINK = ParameterSpec("tip_link", "", "link or fixed frame whose origin is the fingertip (e.g. tool0); empty = "
                         "the model file's fingertip", read_only=True)


def node_model(values: dict, default_file, floating_base: bool = False):
    """The node's robot (:func:`discrete_robot.model.sources.robot_model`) from its ``robot_description``,
    ``model_file`` (else ``default_file``), ``tip_link`` and ``finger_radius`` parameters, where declared."""
    from discrete_robot.model.sources import robot_model

    return robot_model(values.get("model_file", ""), values.get("robot_description", ""), default_file,
                       values.get("tip_link", ""), values.get("finger_radius", 0.0), floating_base)


def _descriptor(spec: ParameterSpec) -> ParameterDescriptor:
    descriptor = ParameterDescriptor(description=spec.description, read_only=spec.read_only)
    if spec.value_range is not None:
        low, high = spec.value_range
        if isinstance(spec.default, bool):
            pass
        elif isinstance(spec.default, int):
            descriptor.integer_range = [IntegerRange(from_value=int(low), to_value=int(high), step=0)]
        elif isinstance(spec.default, float):
            descriptor.floating_point_range = [FloatingPointRange(from_value=low, to_value=high, step=0.0)]
    return descriptor


def parameter_value(node: Node, name: str):
    """The parameter's value; an empty array parameter that was never set reads as []."""
    try:
        return node.get_parameter(name).value
    except ParameterUninitializedException:
        return []


def declare_parameters(node: Node, specs: Sequence[ParameterSpec],
                       cross_check: Callable[[dict], str | None] | None = None) -> dict[str, Any]:
    """Declare ``specs`` on ``node``, validate their values, and guard later sets.

    Returns the values by name. Raises :class:`StartupError` listing every
    invalid value. ``cross_check(values)`` validates rules that span several
    parameters (e.g. one initial position per joint); it also runs at set time.
    """
    by_name = {spec.name: spec for spec in specs}
    for spec in specs:
        default = spec.type if spec.type is not None and spec.default in (None, []) else spec.default
        try:
            node.declare_parameter(spec.name, default, _descriptor(spec))
        except (ParameterException, TypeError, ValueError) as error:
            raise StartupError(f"{node.get_name()}: invalid parameter {spec.name}: {_allowed(spec)} "
                               f"({type(error).__name__})") from None
    values = {spec.name: parameter_value(node, spec.name) for spec in specs}
    errors = _problems(by_name, values, cross_check)
    if errors:
        raise StartupError(f"{node.get_name()}: invalid parameters: " + "; ".join(errors))

    def on_set(parameters: list[Parameter]) -> SetParametersResult:
        proposed = {name: parameter_value(node, name) for name in by_name}
        proposed.update({p.name: p.value for p in parameters if p.name in by_name})
        problems = _problems(by_name, proposed, cross_check, only={p.name for p in parameters})
        return SetParametersResult(successful=not problems, reason="; ".join(problems))

    node.add_on_set_parameters_callback(on_set)
    return values


def _allowed(spec: ParameterSpec) -> str:
    """What ``spec`` accepts, for a one-line start-up error: its type and range."""
    kind = type(spec.default).__name__ if spec.type is None else spec.type.name.lower()
    allowed = f"expected a {kind}"
    if spec.value_range is not None:
        allowed += f" in [{spec.value_range[0]}, {spec.value_range[1]}]"
    return allowed


def _problems(by_name, values, cross_check, only=None) -> list[str]:
    problems = []
    for name, spec in by_name.items():
        if only is not None and name not in only:
            continue
        reason = spec.check(values[name]) if spec.check else None
        if reason:
            problems.append(f"{name} {reason}")
    if not problems and cross_check is not None:
        reason = cross_check(values)
        if reason:
            problems.append(reason)
    return problems



class RateLimitedLog:
    """Warnings of one kind (a key) at most once per ``period_s``; the ones in between are counted, not lost."""

    def __init__(self, logger, period_s: float = LOG_PERIOD_S):
        self._logger = logger
        self._period_s = period_s
        self._last: dict[str, float] = {}
        self._suppressed: dict[str, int] = {}
        self._lock = threading.Lock()

    def warning(self, key: str, message: str) -> None:
        now = time.monotonic()
        with self._lock:
            if now - self._last.get(key, -math.inf) < self._period_s:
                self._suppressed[key] = self._suppressed.get(key, 0) + 1
                return
            self._last[key] = now
            suppressed = self._suppressed.pop(key, 0)
        if suppressed:
            message += f" (and {suppressed} more like it in the last {self._period_s:g} s)"
        self._logger.warning(message)


def describe_failure(endpoint: str, error: BaseException) -> str:
    """The reason given for a failed callback: the core's own message for its errors, else the exception named."""
    if isinstance(error, DiscreteRobotError):
        return str(error)
    return f"internal error in {endpoint}: {type(error).__name__}: {error}"


def first_non_finite(msg, prefix: str = "") -> str | None:
    """The dotted name of the first float field of a ROS message (nested, arrays included) holding NaN or ±inf."""
    for name in msg.get_fields_and_field_types():
        value = getattr(msg, name)
        path = f"{prefix}{name}"
        if isinstance(value, float):
            if not math.isfinite(value):
                return path
        elif hasattr(value, "get_fields_and_field_types"):
            found = first_non_finite(value, f"{path}.")
            if found:
                return found
        elif isinstance(value, (list, tuple)) and value and hasattr(value[0], "get_fields_and_field_types"):
            for index, item in enumerate(value):
                found = first_non_finite(item, f"{path}[{index}].")
                if found:
                    return found
        elif not isinstance(value, (str, bytes, list, tuple)) and hasattr(value, "__len__") and len(value):
            array = np.asarray(value)
            if array.dtype.kind == "f" and not np.all(np.isfinite(array)):
                return path
    return None


def refuse(response, reason: str):
    """``response`` with ``success = False`` and ``message = reason`` (the fields every service here has)."""
    if hasattr(response, "success"):
        response.success = False
    if hasattr(response, "message"):
        response.message = reason
    return response


class GuardedNode(Node):
    """A Node whose callbacks never raise into the executor.

    - services: an exception in the handler is answered with a fresh response, ``success = False`` and the
      reason; a success response holding NaN or ±inf is refused the same way, naming the field;
    - subscriptions and timers: an exception is logged (rate-limited per endpoint) and the message or tick
      is dropped; the next one runs as usual;
    - :meth:`guard` wraps any other callback (action servers) the same way.

    Services get :data:`SERVICE_QOS` unless a profile is given.
    """

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.refusals = RateLimitedLog(self.get_logger())

    def guard(self, endpoint: str, callback: Callable, on_error: Callable[[str], Any] | None = None) -> Callable:
        """``callback`` wrapped (a coroutine function stays one): an exception is logged (rate-limited) and
        ``on_error(reason)`` is returned."""

        def failed(error: Exception):
            reason = describe_failure(endpoint, error)
            self.refusals.warning(endpoint, f"{endpoint}: {reason}")
            return on_error(reason) if on_error is not None else None

        if inspect.iscoroutinefunction(callback):
            async def guarded_coroutine(*args, **kwargs):
                try:
                    return await callback(*args, **kwargs)
                except Exception as error:  # noqa: BLE001  (the safety net: nothing may reach the executor)
                    return failed(error)

            return guarded_coroutine

        def guarded(*args, **kwargs):
            try:
                return callback(*args, **kwargs)
            except Exception as error:  # noqa: BLE001  (the safety net: nothing may reach the executor)
                return failed(error)

        return guarded

    def create_service(self, srv_type, srv_name, callback, **kwargs):
        """A service whose callback (plain or coroutine) is guarded: an exception is answered with the reason,
        and a success response with a NaN or infinity is refused naming the field."""
        kwargs.setdefault("qos_profile", SERVICE_QOS)
        if srv_type.__name__ in ("SetParameters", "SetParametersAtomically"):
            callback = _known_parameter_types(callback)

        def failed(error: Exception):
            reason = describe_failure(srv_name, error)
            self.refusals.warning(srv_name, f"{srv_name} refused: {reason}")
            return refuse(srv_type.Response(), reason)

        def checked(response):
            if getattr(response, "success", False):
                field = first_non_finite(response)
                if field is not None:
                    reason = f"internal error in {srv_name}: the result has a non-finite value in {field}"
                    self.refusals.warning(srv_name, reason)
                    return refuse(srv_type.Response(), reason)
            return response

        if inspect.iscoroutinefunction(callback):
            async def handle_coroutine(request, response):
                try:
                    return checked(await callback(request, response))
                except Exception as error:  # noqa: BLE001  (answered with the reason instead of no answer)
                    return failed(error)

            return super().create_service(srv_type, srv_name, handle_coroutine, **kwargs)

        def handle(request, response):
            try:
                return checked(callback(request, response))
            except Exception as error:  # noqa: BLE001  (answered with the reason instead of no answer)
                return failed(error)

        return super().create_service(srv_type, srv_name, handle, **kwargs)

    def create_subscription(self, msg_type, topic, callback, qos_profile, **kwargs):
        return super().create_subscription(msg_type, topic, self.guard(f"topic {topic}", callback), qos_profile,
                                           **kwargs)

    def create_timer(self, timer_period_sec, callback, *args, **kwargs):
        return super().create_timer(timer_period_sec, self.guard("timer", callback), *args, **kwargs)

    async def wall_clock_result(self, future: Future, seconds: float):
        """``future``'s result, or None when ``seconds`` of wall-clock time pass first (a steady-clock timer: the
        node's own clock may be simulated time, which stops when the simulator does)."""
        first = Future()
        future.add_done_callback(lambda done: first.done() or first.set_result(done.result()))
        timer = self.create_timer(seconds, lambda: first.done() or first.set_result(None),
                                  clock=Clock(clock_type=ClockType.STEADY_TIME))
        try:
            return await first
        finally:
            self.destroy_timer(timer)


def _known_parameter_types(callback: Callable) -> Callable:
    """rclpy's set_parameters(_atomically) handler, refusing a request with a parameter value of an unknown type
    (rcl_interfaces ParameterType; rclpy would raise ValueError) by naming the parameter, or with an empty name,
    with one result per parameter as the service defines (a set_parameters request is then refused whole)."""
    known = {kind.value for kind in Parameter.Type}

    def handle(request, response):
        unknown = [f"{p.name} (value.type {p.value.type} is not a ParameterType)" for p in request.parameters
                   if p.value.type not in known]
        # rclpy sets a parameter named "" without a word (no node declares one), whatever its value, NaN included
        unnamed = ["a parameter with an empty name" for p in request.parameters if not p.name]
        if not unknown and not unnamed:
            return callback(request, response)
        reason = "not set: " + "; ".join(filter(None, [
            "unknown parameter type: " + ", ".join(unknown) if unknown else "", ", ".join(unnamed)]))
        if hasattr(response, "results"):
            response.results = [SetParametersResult(successful=False, reason=reason) for _ in request.parameters]
        else:
            response.result = SetParametersResult(successful=False, reason=reason)
        return response

    return handle


def joint_state_msg(stamp: Time, names: Sequence[str], position, velocity=(), effort=()) -> JointState:
    """A JointState with the given arrays (rad, rad/s, N m; or m, m/s, N for prismatic joints)."""
    msg = JointState()
    msg.header.stamp = stamp
    msg.name = list(names)
    msg.position = [float(v) for v in position]
    msg.velocity = [float(v) for v in velocity]
    msg.effort = [float(v) for v in effort]
    return msg


def quaternion_msg(wxyz) -> Quaternion:
    """A geometry_msgs Quaternion from [w, x, y, z] (transforms3d order), normalised."""
    w, x, y, z = np.asarray(wxyz, dtype=float) / np.linalg.norm(wxyz)
    return Quaternion(x=float(x), y=float(y), z=float(z), w=float(w))


def pose_msg(position, wxyz) -> Pose:
    """A Pose from a position (m) and a [w, x, y, z] quaternion."""
    x, y, z = (float(v) for v in position)
    return Pose(position=Point(x=x, y=y, z=z), orientation=quaternion_msg(wxyz))


def duration_seconds(duration) -> float:
    """builtin_interfaces Duration -> seconds."""
    return duration.sec + duration.nanosec * 1e-9


#: builtin_interfaces Duration/Time hold seconds in an int32
_MAX_MESSAGE_SECONDS = 2.0 ** 31 - 1.0


def seconds_to_duration_fields(seconds: float, what: str = "duration") -> tuple[int, int]:
    """Seconds -> (sec, nanosec) for builtin_interfaces Duration/Time; InputError naming ``what`` when the value
    is not finite or outside [0, 2³¹ − 1] s (the message's int32 seconds)."""
    seconds = finite_scalar(seconds, what, low=0.0, high=_MAX_MESSAGE_SECONDS)
    nanoseconds = int(round(seconds * 1e9))
    return nanoseconds // 1_000_000_000, nanoseconds % 1_000_000_000


#: set once the node is built and its executor spins: a signal before that ends the process at once
SPINNING = threading.Event()


def _on_stop_signal(*_) -> None:
    """SIGINT/SIGTERM: once spinning, set :data:`STOP` (the spin loop and long computations see it); while the
    node is still being built (loading a model, compiling, a trial step), end the process at once with status 0:
    nothing has been served that a stop could lose, and a build step need not poll the flag."""
    if not SPINNING.is_set():
        os._exit(0)
    STOP.set()


def init_with_stop_signal(args: Sequence[str] | None) -> threading.Event:
    """``rclpy.init`` with SIGINT/SIGTERM (Ctrl-C, ``ros2 launch`` stopping) only setting the returned event
    once the node spins (:func:`_on_stop_signal`; before, they end the process at once).

    rclpy's own handlers shut the context down from the signal, while the
    executor may be building its next wait set or a timer may be publishing on
    another thread; those then fail with "context is not valid" and the process
    exits non-zero after a Ctrl-C. Here :func:`spin_until_stopped` ends the spin
    loop first and the caller shuts the context down afterwards, so there is no
    such race. The handlers go in before the nodes are built, so a signal during
    start-up also ends the process cleanly. The event is :data:`discrete_robot.budget.STOP`,
    which long computations poll, so a stop never waits for one.
    """
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, _on_stop_signal)
    rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO)
    return STOP


def spin_until_stopped(executor: Executor, stop: threading.Event, poll_s: float = 0.1) -> None:
    """Spin ``executor`` until ``stop`` is set or the context is shut down; a set ``stop`` is seen within ``poll_s``.

    The caller then calls :func:`shut_down`.
    """
    while not stop.is_set() and executor.context.ok():
        executor.spin_once(timeout_sec=poll_s)


def executor_for(node_class: type) -> Executor:
    """A MultiThreadedExecutor for a class with ``MULTI_THREADED = True`` (long service calls beside other
    callbacks), else a SingleThreadedExecutor.

    Not rclpy's EventsExecutor, though it costs a quarter of a SingleThreadedExecutor per message: with it, the
    arm missed one plan message in about ten runs of test_plan_execution (under CPU load), and none in ten with
    this executor."""
    return MultiThreadedExecutor() if getattr(node_class, "MULTI_THREADED", False) else SingleThreadedExecutor()


def shut_down(executors: Sequence[Executor], nodes: Sequence[Node], timeout_s: float = 1.0) -> None:
    """After :func:`spin_until_stopped`: let the callbacks already handed to the executors' threads run (up to
    ``timeout_s``; long computations see the stop flag and end), then stop the executors, the nodes and the
    context, in that order so no callback runs on a destroyed node or context.

    rclpy 9.1's ``Executor.shutdown`` does not wait for callbacks in flight (it tests ``_is_shutdown`` right after
    setting it), and a MultiThreadedExecutor's thread pool then runs queued callbacks against the destroyed guard
    condition ("The following exception was never retrieved: cannot use Destroyable ..."); cancelling them
    instead leaves their coroutines never awaited. So the pools are drained first, while everything is alive.
    """
    drains = [threading.Thread(target=pool.shutdown, kwargs={"wait": True}, daemon=True)
              for pool in (getattr(executor, "_executor", None) for executor in executors) if pool is not None]
    for drain in drains:
        drain.start()
    for drain in drains:
        drain.join(timeout_s)
    for executor in executors:
        executor.shutdown(timeout_sec=timeout_s)
    for node in nodes:
        node.destroy_node()
    rclpy.try_shutdown()


def node_main(node_class: type[Node]) -> Callable[[Sequence[str] | None], NoReturn]:
    """A console-script ``main`` that spins one node, shuts down cleanly on Ctrl-C or SIGTERM and ends the process.

    A node that cannot start (invalid parameters or model file, an invalid name rclpy refuses, anything its
    constructor raises) logs why in one line, never a traceback, and the process exits with status 1. Node
    classes name themselves in a class attribute ``NODE_NAME`` and take ``**kwargs`` for ``Node.__init__`` so
    they can also be composed in one process; a class with ``MULTI_THREADED = True``
    (long service calls beside a simulation timer) is spun by a MultiThreadedExecutor.
    """

    def main(args: Sequence[str] | None = None) -> NoReturn:
        node, executors, status = None, [], 0
        try:
            stop = init_with_stop_signal(args)
            executors.append(executor_for(node_class))
            node = node_class()
        except Exception as error:  # noqa: BLE001  (a start-up error is one line, never a traceback)
            reason = str(error) if isinstance(error, DiscreteRobotError) else f"{type(error).__name__}: {error}"
            rclpy.logging.get_logger(getattr(node_class, "NODE_NAME", node_class.__name__)).fatal(
                f"cannot start: {' '.join(reason.split())}")
            status = 1
        else:
            executors[0].add_node(node)
            SPINNING.set()
            spin_until_stopped(executors[0], stop)
        finally:
            shut_down(executors, [node] if node is not None else [])
        # Everything is shut down and logged: end now. The interpreter's own teardown (finalising the middleware
        # and the compiled-code runtime) takes another 0.5-1 s, which a launch system or bringup stopping many
        # nodes would wait for.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(status)

    return main
