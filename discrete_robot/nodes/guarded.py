"""The node every discrete_robot node derives from: callbacks that never raise into the executor.

Its service, subscription and timer callbacks are wrapped so that no exception reaches the executor (a node is
never stopped by what it receives), and no success response leaves with a NaN or an infinity in it. The guard is a
safety net; the core still refuses bad input with specific messages, which the guard passes on unchanged.
"""

import inspect
import math
import threading
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from rcl_interfaces.msg import SetParametersResult
from rclpy.clock import Clock, ClockType
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.task import Future

from discrete_robot.errors import DiscreteRobotError
from discrete_robot.nodes.qos import SERVICE_QOS
from discrete_robot.validation import printable

#: how often one endpoint may log the same kind of refusal, s (the rest are counted and reported with the next)
LOG_PERIOD_S = 5.0


class RateLimitedLog:
    """Warnings of one kind (a key) at most once per ``period_s``; the ones in between are counted, not lost.
    Names from messages reach them: bidirectional and control characters are escaped (validation.printable)."""

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
        self._logger.warning(printable(message))


def describe_failure(endpoint: str, error: BaseException) -> str:
    """The reason given for a failed callback: the core's own message for its errors, else the exception named;
    printable (a name from a request may hold a right-to-left override)."""
    if isinstance(error, DiscreteRobotError):
        return printable(error)
    return printable(f"internal error in {endpoint}: {type(error).__name__}: {error}")


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
