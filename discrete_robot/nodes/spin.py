"""How a node runs: ``node_main`` spins one node and shuts down cleanly on Ctrl-C or SIGTERM.

The executor's thread pool is drained while the nodes are alive; long computations see ``budget.STOP``.
"""

import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Sequence
from typing import NoReturn

import rclpy
from rclpy.executors import (
    ConditionReachedException,
    Executor,
    ExternalShutdownException,
    MultiThreadedExecutor,
    ShutdownException,
    SingleThreadedExecutor,
    TimeoutException,
)
from rclpy.node import Node
from rclpy.signals import SignalHandlerOptions

from discrete_robot.budget import STOP
from discrete_robot.errors import DiscreteRobotError
from discrete_robot.validation import dds_domain_id

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
    dds_domain_id(os.environ)
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


#: s between two polls of a coroutine callback that waits on a future (a plan's execution, a lane's turn)
POLL_S = 0.002


class PatientExecutor(MultiThreadedExecutor):
    """rclpy's MultiThreadedExecutor, but a coroutine callback waiting on a future is polled at most every
    :data:`POLL_S` and queued to the threads once at a time.

    rclpy resumes a waiting coroutine by polling it: its task is yielded again on every turn of the executor,
    and the MultiThreadedExecutor submits it to its threads and appends it to its list of futures each time,
    which it then scans whole. While trajectory_planner_node waited for a 2 s execution, the list grew by
    thousands of copies a second, the node took 54-101 % of a core doing nothing, and it kept 0.7 MB more
    after each goal (264.6 to 270.4 MB over 8 goals). The override keeps one entry per task."""

    def __init__(self, num_threads: int | None = None):
        super().__init__(num_threads)
        self._queued: dict = {}          # task -> its last submission (concurrent.futures.Future)

    def _spin_once_impl(self, timeout_sec=None, wait_condition=lambda: False) -> None:
        try:
            handler, _, _ = self.wait_for_ready_callbacks(timeout_sec, None, wait_condition)
        except (ExternalShutdownException, ShutdownException, TimeoutException, ConditionReachedException):
            return
        submitted = self._queued.get(handler)
        if submitted is not None:
            # the task ran before and still waits (or is still queued): give the threads a pause first
            time.sleep(POLL_S)
            if not submitted.done():
                return
        self._queued[handler] = self._executor.submit(handler)
        for task in [task for task in self._queued if task.done()]:
            del self._queued[task]
            task.result()        # raise any exception, as rclpy does


def executor_for(node_class: type) -> Executor:
    """A :class:`PatientExecutor` (multi-threaded) for a class with ``MULTI_THREADED = True`` (long service calls
    beside other callbacks), else a SingleThreadedExecutor.

    Not rclpy's EventsExecutor, though it costs a quarter of a SingleThreadedExecutor per message: with it, the
    arm missed one plan message in about ten runs of test_plan_execution (under CPU load), and none in ten with
    this executor. ``THREADS``: the executor's threads (default: one per core)."""
    if not getattr(node_class, "MULTI_THREADED", False):
        return SingleThreadedExecutor()
    return PatientExecutor(getattr(node_class, "THREADS", None))


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
