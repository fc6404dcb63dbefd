"""A client-side rclpy session: one node in its own context, and blocking helpers around it.

Used by the live experiments and by the test harness alike: wait for a
message, collect a topic for a while, call a service, publish. Waiting
spins this session's executor, so nothing here may be called from inside a
callback of the same session.
"""

import os
import time

import rclpy
from rclpy.action import ActionClient, ActionServer
from rclpy.executors import SingleThreadedExecutor

from discrete_robot.validation import dds_domain_id

#: time a new client waits after finding its service, for the server to discover the client in turn, s
DISCOVERY_SETTLE_S = 0.25


def stamp_seconds(msg) -> float:
    """A stamped message's header time, s (the simulated time under use_sim_time)."""
    return msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9


class RosTimeoutError(TimeoutError):
    """Something expected over ROS did not happen in time."""


class RosSession:
    """An rclpy context with one node named ``name``; close() (or ``with``) releases it."""

    def __init__(self, name: str = "discrete_robot_client"):
        dds_domain_id(os.environ)
        self.context = rclpy.Context()
        rclpy.init(context=self.context)
        self.node = rclpy.create_node(f"{name}_{os.getpid()}", context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self._publishers = {}
        self._clients = {}

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def spin_until(self, condition, timeout: float, step: float = 0.02) -> bool:
        """Spin until ``condition()`` is true or ``timeout`` seconds pass; returns the condition."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if condition():
                return True
            self.executor.spin_once(timeout_sec=step)
        return bool(condition())

    def collect(self, topic: str, msg_type, duration: float, qos=10) -> list[tuple[float, object]]:
        """Every message on ``topic`` during ``duration`` seconds, with its receive time (monotonic s)."""
        received = []
        sub = self.node.create_subscription(msg_type, topic, lambda m: received.append((time.monotonic(), m)), qos)
        try:
            self.spin_until(lambda: False, duration)
        finally:
            self.node.destroy_subscription(sub)
        return received

    def wait_for_message(self, topic: str, msg_type, timeout: float = 15.0, qos=10, predicate=None):
        """The first message on ``topic`` that satisfies ``predicate``; RosTimeoutError if none comes."""
        received = []
        sub = self.node.create_subscription(
            msg_type, topic, lambda m: received.append(m) if predicate is None or predicate(m) else None, qos)
        try:
            if not self.spin_until(lambda: received, timeout):
                raise RosTimeoutError(f"no message on {topic} within {timeout} s")
        finally:
            self.node.destroy_subscription(sub)
        return received[0]

    def publish(self, topic: str, msg, qos=10, wait_for_subscriber: float = 5.0) -> None:
        """Publish ``msg`` on ``topic``; the first time, wait until a subscriber is matched."""
        key = (topic, type(msg))
        if key not in self._publishers:
            publisher = self.node.create_publisher(type(msg), topic, qos)
            self._publishers[key] = publisher
            self.spin_until(lambda: publisher.get_subscription_count() > 0, wait_for_subscriber)
        self._publishers[key].publish(msg)

    def wait_for_service(self, srv_type, name: str, timeout: float) -> None:
        """Wait until service ``name`` is up and can answer this session; RosTimeoutError if it is not."""
        self._client(srv_type, name, timeout)

    def _client(self, srv_type, name: str, timeout: float):
        """This session's client of ``name`` (one per service: each new client must be discovered anew)."""
        key = (name, srv_type)
        if key not in self._clients:
            self._clients[key] = self.node.create_client(srv_type, name)
        client = self._clients[key]
        if not client.service_is_ready():
            if not client.wait_for_service(timeout_sec=timeout):
                raise RosTimeoutError(f"service {name} not available within {timeout} s")
            # The client has now discovered the server, but the server may not yet have discovered this
            # client's reply reader: Fast DDS drops a response it cannot deliver within 100 ms ("failed to send
            # response (timeout)", ros2/rmw_fastrtps#704), and the call would hang. Let discovery finish.
            self.spin_until(lambda: False, DISCOVERY_SETTLE_S)
        return client

    def call(self, srv_type, name: str, request, timeout: float = 30.0):
        """Call service ``name`` and return its response; RosTimeoutError if it is not up or does not answer."""
        future = self._client(srv_type, name, timeout).call_async(request)
        if not self.spin_until(future.done, timeout):
            raise RosTimeoutError(f"service {name} did not answer within {timeout} s")
        return future.result()

    def send_goal(self, action_type, name: str, goal, timeout: float = 30.0, feedback=None):
        """Send ``goal`` to action ``name`` (``feedback(msg)`` gets its feedback); the accepted goal's handle.

        RosTimeoutError if the server is not up or does not answer within ``timeout``."""
        key = (name, action_type)
        if key not in self._clients:
            self._clients[key] = ActionClient(self.node, action_type, name)
        client = self._clients[key]
        if not client.server_is_ready():
            if not client.wait_for_server(timeout_sec=timeout):
                raise RosTimeoutError(f"action {name} not available within {timeout} s")
            self.spin_until(lambda: False, DISCOVERY_SETTLE_S)   # as for services (see _client)
        future = client.send_goal_async(goal, feedback_callback=None if feedback is None else
                                        (lambda message: feedback(message.feedback)))
        if not self.spin_until(future.done, timeout):
            raise RosTimeoutError(f"action {name} did not answer the goal within {timeout} s")
        return future.result()

    def goal_result(self, handle, timeout: float = 60.0):
        """The result response (``.status``, ``.result``) of an accepted goal; RosTimeoutError if none comes."""
        future = handle.get_result_async()
        if not self.spin_until(future.done, timeout):
            raise RosTimeoutError(f"no action result within {timeout} s")
        return future.result()

    def close(self) -> None:
        """Release the session: the action clients and servers made on its node (here or by a caller), the node
        and the context, so its DDS participant is gone on return.

        ``Node.destroy_node`` does not destroy actions, and one left alive keeps the node, and the participant
        under it, until the interpreter's own teardown: `experiment plan-execute` once printed its summary and
        then did not exit for 600 s. rclpy's destroy_node destroys its entities eagerly for the same kind of hang
        at teardown (rclpy/node.py, ros2/build_cop#248).
        """
        for waitable in list(self.node.waitables):
            if isinstance(waitable, ActionClient | ActionServer):
                waitable.destroy()
        self.executor.shutdown()
        self.node.destroy_node()
        rclpy.try_shutdown(context=self.context)
        self.context.destroy()
