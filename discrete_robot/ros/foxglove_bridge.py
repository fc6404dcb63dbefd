"""A live 3D view without a system ROS 2: every ROS topic served over the Foxglove WebSocket protocol.

    python -m discrete_robot.ros.foxglove_bridge [--port 8765] [--host 127.0.0.1] [--ros-args ...]

(``bringup --foxglove [PORT]`` starts it beside the nodes.) Each topic becomes a Foxglove channel with the
message's full ``ros2msg`` definition as its schema and ``cdr`` as its encoding, and carries the bytes rclpy
receives (subscriptions with ``raw=True``) unchanged, so Foxglove's 3D panel decodes /tf, /tf_static,
robot_description, joint states, markers and diagnostics itself. Topic discovery, schemas and QoS are the MCAP
recorder's (:class:`.recorder.TopicRelay`), so what is live is what is recorded.

The server listens on 127.0.0.1 only unless ``--host`` says otherwise: nothing authenticates a WebSocket client,
which sees every topic (it cannot publish: the server offers no client-publish capability). The Foxglove SDK has
no latching, so the last message of every transient-local topic (/tf_static, robot_description) is kept and
logged again when a client subscribes to it.

Meshes: the server offers Foxglove's ``assets`` capability (foxglove-sdk adds it with an ``asset_handler``) and
answers a ``fetchAsset`` for exactly the ``<mesh filename>`` URIs the latest ``robot_description`` names, read
where the URDF reader resolves them (``package://`` through the ament index, ``file://``); any other URI is
refused, so a client cannot read the machine's files.
"""

import argparse
import sys
import threading
import time
import xml.etree.ElementTree as ET

from discrete_robot.ros.recorder import TopicRelay

DEFAULT_PORT = 8765
DEFAULT_HOST = "127.0.0.1"
DISCOVERY_PERIOD_S = 0.5
#: the largest mesh served, bytes (a detailed visual mesh is tens of MB)
MAX_MESH_BYTES = 256 * 2 ** 20


class FoxgloveRelay(TopicRelay):
    """The ROS topics of ``node``'s graph as channels of a Foxglove ``context``."""

    def __init__(self, node, context):
        super().__init__(node)
        self.context = context
        self._channels = {}
        self._latched: dict[str, bytes | None] = {}
        self._resend: set[str] = set()
        self._lock = threading.Lock()

    def open_channel(self, topic: str, type_name: str, definition: str, offered_qos: str, latched: bool) -> None:
        import foxglove

        self._channels[topic] = foxglove.Channel(
            topic, schema=foxglove.Schema(name=type_name, encoding="ros2msg", data=definition.encode()),
            message_encoding="cdr", context=self.context, metadata={"offered_qos_profiles": offered_qos})
        if latched:
            self._latched[topic] = None

    def forward(self, topic: str, data: bytes) -> None:
        if topic in self._latched:
            with self._lock:
                self._latched[topic] = data
        self._channels[topic].log(data, log_time=time.time_ns())
        self.counts[topic] += 1

    def subscribed(self, topic: str) -> None:
        """A client subscribed to ``topic`` (called on the server's thread): its latched message goes out again
        on the next :meth:`resend_latched`."""
        with self._lock:
            self._resend.add(topic)

    def resend_latched(self) -> None:
        """Log again the latched message of each topic a client subscribed to since the last call. A latched topic
        whose message has not arrived yet stays pending until it has. (A client that missed /tf_static in make
        test had been refused its subscription by foxglove-sdk's advertise/subscribe race, which no relay can
        mend: test_live_view's client subscribes again, as its docstring explains.)"""
        with self._lock:
            pending = [(t, self._latched[t]) for t in self._resend if self._latched.get(t) is not None]
            self._resend = {t for t in self._resend if t in self._latched and self._latched[t] is None}
        for topic, data in pending:
            self._channels[topic].log(data, log_time=time.time_ns())


class MeshAssets:
    """The asset handler: ``assets(uri)`` is the bytes of a mesh the robot description names, else None (the
    server then answers the fetch with an error). ``describe(urdf)`` replaces the named URIs (any thread)."""

    def __init__(self):
        self._uris: frozenset[str] = frozenset()

    def describe(self, urdf: str) -> None:
        try:
            root = ET.fromstring(urdf)
        except ET.ParseError:
            root = None                 # a description the URDF reader refuses names no mesh to serve
        self._uris = frozenset(mesh.get("filename") for mesh in root.iter("mesh")
                               if mesh.get("filename")) if root is not None else frozenset()

    def __call__(self, uri: str) -> bytes | None:
        from discrete_robot.config_files import read_bytes
        from discrete_robot.errors import ModelError
        from discrete_robot.model.urdf_reader import resolve_mesh

        # a relative path would resolve against this process's working directory: only the two URI forms
        if uri not in self._uris or not (uri.startswith("package://") or uri.startswith("file:///")):
            return None
        path = resolve_mesh(uri, None)
        try:
            return None if path is None else read_bytes(path, "mesh", MAX_MESH_BYTES)
        except ModelError:
            return None


def start(node, port: int = DEFAULT_PORT, host: str = DEFAULT_HOST):
    """Serve ``node``'s ROS graph on ``host:port``; returns (relay, server). Call ``relay.discover()`` and
    ``relay.resend_latched()`` periodically (a timer on ``node``) and ``server.stop()`` at the end."""
    import foxglove
    from foxglove.websocket import ServerListener
    from std_msgs.msg import String

    from discrete_robot.nodes.qos import LATCHED_QOS

    context = foxglove.Context()
    relay = FoxgloveRelay(node, context)
    assets = MeshAssets()
    node.create_subscription(String, "robot_description", lambda msg: assets.describe(msg.data), LATCHED_QOS)

    class Listener(ServerListener):
        def on_subscribe(self, client, channel) -> None:
            relay.subscribed(channel.topic)

    server = foxglove.start_server(name="discrete_robot", host=host, port=port, context=context,
                                   server_listener=Listener(), asset_handler=assets)
    return relay, server


def main(args: list[str] | None = None) -> int:
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.utilities import remove_ros_args

    from discrete_robot.nodes.common import SPINNING, init_with_stop_signal, shut_down, spin_until_stopped

    argv = sys.argv if args is None else ["foxglove_bridge", *args]
    parser = argparse.ArgumentParser(prog="foxglove_bridge", description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"WebSocket port (default {DEFAULT_PORT})")
    parser.add_argument("--host", default=DEFAULT_HOST, help=f"address to listen on (default {DEFAULT_HOST})")
    options = parser.parse_args(remove_ros_args(argv)[1:])
    # Ctrl-C ends the spin loop before the context is shut down, as for every node (rclpy's own handler shut it
    # down under a spin building its next wait set: a traceback on exit, 1 bringup in 60 on 2 loaded cores)
    stop = init_with_stop_signal(argv)
    node = rclpy.create_node("foxglove_bridge")
    try:
        relay, server = start(node, options.port, options.host)
    except RuntimeError as error:
        print(f"[FATAL] [foxglove_bridge]: cannot serve on {options.host}:{options.port}: {error}", flush=True)
        shut_down([], [node])
        return 1
    relay.discover()
    node.create_timer(DISCOVERY_PERIOD_S, relay.discover)
    node.create_timer(0.1, relay.resend_latched)
    print(f"[INFO] [foxglove_bridge]: serving ws://{options.host}:{server.port} "
          f"(Foxglove: Open connection > Foxglove WebSocket)", flush=True)
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    SPINNING.set()
    try:
        spin_until_stopped(executor, stop)
    finally:
        server.stop()
        shut_down([executor], [node])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
