"""What every discrete_robot node shares: parameters, QoS, message conversions, main().

Nodes declare their parameters as a list of :class:`ParameterSpec`; each spec
carries its description (shown by ``ros2 param describe``), an optional range
and a check. Invalid values are rejected at startup (the node logs the reason
and exits non-zero) and at set time (the set fails with the reason), so a node
never runs with a value it cannot use.

Conventions every node module follows (tests and the composed bringup rely on them):
- the specs are a module-level list ``PARAMETERS`` of :class:`ParameterSpec`, so the
  config/launch consistency tests can read them without starting ROS;
- the node class has ``NODE_NAME`` (also its key in ``config/<node>.yaml``) and takes
  ``**kwargs`` for ``Node.__init__``;
- the module ends with ``main = node_main(TheNodeClass)`` (the console_scripts entry).
"""

import signal
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import rclpy
from builtin_interfaces.msg import Time
from geometry_msgs.msg import Point, Pose, Quaternion
from rcl_interfaces.msg import FloatingPointRange, IntegerRange, ParameterDescriptor, SetParametersResult
from rclpy.exceptions import ParameterUninitializedException
from rclpy.executors import Executor, SingleThreadedExecutor
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from rclpy.signals import SignalHandlerOptions
from sensor_msgs.msg import JointState

from discrete_robot.errors import DiscreteRobotError

#: robot_description and static markers: late joiners (RViz, robot_state_publisher) still get the last message.
LATCHED_QOS = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)
#: joint states, poses, commands: the ROS default (reliable, volatile, depth 10).
STATE_QOS = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.VOLATILE)


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


def one_of(*choices: str) -> Check:
    def check(value) -> str | None:
        return None if value in choices else f"must be one of {', '.join(choices)} (got {value!r})"

    return check


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
        node.declare_parameter(spec.name, default, _descriptor(spec))
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


def seconds_to_duration_fields(seconds: float) -> tuple[int, int]:
    """Seconds -> (sec, nanosec) for builtin_interfaces Duration/Time."""
    nanoseconds = int(round(seconds * 1e9))
    return nanoseconds // 1_000_000_000, nanoseconds % 1_000_000_000


def init_with_stop_signal(args: Sequence[str] | None) -> threading.Event:
    """``rclpy.init`` with SIGINT/SIGTERM (Ctrl-C, ``ros2 launch`` stopping) only setting the returned event.

    rclpy's own handlers shut the context down from the signal, while the
    executor may be building its next wait set or a timer may be publishing on
    another thread; those then fail with "context is not valid" and the process
    exits non-zero after a Ctrl-C. Here :func:`spin_until_stopped` ends the spin
    loop first and the caller shuts the context down afterwards, so there is no
    such race. The handlers go in before the nodes are built, so a signal during
    start-up also ends the process cleanly.
    """
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO)
    return stop


def spin_until_stopped(executor: Executor, stop: threading.Event, poll_s: float = 0.1) -> None:
    """Spin ``executor`` until ``stop`` is set or the context is shut down; a set ``stop`` is seen within ``poll_s``.

    The caller then calls :func:`shut_down`.
    """
    while not stop.is_set() and executor.context.ok():
        executor.spin_once(timeout_sec=poll_s)


def shut_down(executor: Executor, nodes: Sequence[Node]) -> None:
    """After :func:`spin_until_stopped`: stop the executor (waiting up to 1 s for running callbacks), then the
    nodes, then the context, in that order so no callback runs on a destroyed node or context."""
    executor.shutdown(timeout_sec=1.0)
    for node in nodes:
        node.destroy_node()
    rclpy.try_shutdown()


def node_main(node_class: type[Node]) -> Callable[[Sequence[str] | None], int]:
    """A console-script ``main`` that spins one node and shuts down cleanly on Ctrl-C.

    A node that cannot start (invalid parameters or model file) logs why and
    the process exits with status 1. Node classes name themselves in a class
    attribute ``NODE_NAME`` and take ``**kwargs`` for ``Node.__init__`` so the
    composed bringup can build them too.
    """

    def main(args: Sequence[str] | None = None) -> int:
        stop = init_with_stop_signal(args)
        node = None
        executor = SingleThreadedExecutor()
        status = 0
        try:
            node = node_class()
            executor.add_node(node)
            spin_until_stopped(executor, stop)
        except DiscreteRobotError as error:
            rclpy.logging.get_logger(getattr(node_class, "NODE_NAME", node_class.__name__)).fatal(str(error))
            status = 1
        finally:
            shut_down(executor, [node] if node is not None else [])
        return status

    return main
