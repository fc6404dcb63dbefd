"""The live 3D view: ``bringup --foxglove PORT`` serves the ROS topics over the Foxglove WebSocket protocol.

The client is the independent ``websockets`` library speaking the protocol as Foxglove's spec defines it
(foxglove/ws-protocol docs/spec.md; foxglove-sdk 0.30's server accepts it under the subprotocol
``foxglove.sdk.v1``): JSON ``advertise`` and ``subscribe`` (a client-chosen subscription id per channel); a
binary message data frame is opcode 0x01, the subscription id as uint32 LE, the log time as uint64 LE, then the
payload. The payload is decoded with rclpy's own deserializer, so what arrives is what a ROS subscriber would
have received.
"""

import json
import re
import socket
import struct
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

pytestmark = pytest.mark.ros

REPO = Path(__file__).resolve().parents[2]
SUBPROTOCOL = "foxglove.sdk.v1"   # the one foxglove-sdk's server accepts (foxglove/tests/test_server.py)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _channels(ws, wanted: set[str], timeout: float) -> dict:
    """The advertised channels, by topic, once every ``wanted`` topic is among them."""
    channels, end = {}, time.monotonic() + timeout
    while not wanted <= channels.keys():
        assert time.monotonic() < end, f"never advertised: {sorted(wanted - channels.keys())}; got {sorted(channels)}"
        try:
            frame = ws.recv(timeout=1.0)
        except TimeoutError:
            continue
        if isinstance(frame, str) and json.loads(frame)["op"] == "advertise":
            channels.update({c["topic"]: c for c in json.loads(frame)["channels"]})
    return channels


def _subscribe(ws, subscriptions: dict[int, dict]) -> None:
    """Subscribe to channels (``subscriptions``: subscription id -> advertised channel)."""
    ws.send(json.dumps({"op": "subscribe", "subscriptions": [
        {"id": k, "channelId": channel["id"]} for k, channel in subscriptions.items()]}))


def _first_messages(ws, subscriptions: dict[int, dict], timeout: float) -> dict[str, bytes]:
    """The first payload of each subscription (``subscriptions``: subscription id -> advertised channel), by topic.

    A subscription the server refuses with "Unknown channel ID" is sent again. foxglove-sdk sends a new channel's
    advertisement before it adds the channel to the client's own (rust/foxglove/src/websocket/connected_client.rs,
    ``advertise_channels``, lines 820-838 at tag sdk/v0.26.0; the 0.30.3 wheel here logs the same refusal): a
    client answering at once can be refused. This test was, for /tf_static (its channel opens while the client
    is connected), in 1 run in 10 with three runs at a time on 2 cores."""
    topics = {k: channel["topic"] for k, channel in subscriptions.items()}
    by_channel = {channel["id"]: k for k, channel in subscriptions.items()}
    received, end = {}, time.monotonic() + timeout
    while len(received) < len(subscriptions):
        assert time.monotonic() < end, f"no message on {sorted(set(topics.values()) - received.keys())}"
        try:
            frame = ws.recv(timeout=1.0)
        except TimeoutError:
            continue
        if isinstance(frame, bytes) and frame[0] == 0x01:
            subscription, _log_time = struct.unpack_from("<IQ", frame, 1)
            received.setdefault(topics[subscription], frame[13:])
        elif isinstance(frame, str) and (message := json.loads(frame))["op"] == "status":
            refused = re.fullmatch(r"Unknown channel ID: (\d+)", message["message"])
            if refused and int(refused[1]) in by_channel:
                k = by_channel[int(refused[1])]
                _subscribe(ws, {k: subscriptions[k]})
    return received


def test_a_websocket_client_receives_tf_and_the_latched_description_as_ros_messages(ros):
    from rclpy.serialization import deserialize_message
    from std_msgs.msg import String
    from tf2_msgs.msg import TFMessage
    from websockets.sync.client import connect

    from discrete_robot.nodes.common import LATCHED_QOS

    port = _free_port()
    bringup = ros.start("bringup", args=["--only", "discrete_robot_node", "--foxglove", str(port)])
    # start-up waits are generous: a loaded machine may take long, nothing here is timed
    description = ros.wait_for_message("robot_description", String, timeout=180.0, qos=LATCHED_QOS)
    ros.spin_until(lambda: "serving ws://" in bringup.log(), 60.0)
    topics = {"/tf", "/tf_static", "/robot_description"}
    with connect(f"ws://127.0.0.1:{port}", subprotocols=[SUBPROTOCOL], open_timeout=60.0) as ws:
        channels = _channels(ws, topics, timeout=120.0)
        for topic in topics:
            assert (channels[topic]["encoding"], channels[topic]["schemaEncoding"]) == ("cdr", "ros2msg")
        assert channels["/tf"]["schemaName"] == "tf2_msgs/msg/TFMessage"
        assert "MSG: geometry_msgs/TransformStamped" in channels["/tf"]["schema"]
        subscriptions = {k: channels[topic] for k, topic in enumerate(sorted(topics), start=1)}
        _subscribe(ws, subscriptions)
        # /tf_static and the description were published once, long before this client: the bridge sends them
        # again (latching)
        received = _first_messages(ws, subscriptions, timeout=120.0)
    links = {link.get("name") for link in ET.fromstring(description.data).iter("link")}
    moving = deserialize_message(received["/tf"], TFMessage).transforms
    fixed = deserialize_message(received["/tf_static"], TFMessage).transforms
    assert moving and {t.child_frame_id for t in moving} <= links
    assert {t.header.frame_id for t in fixed} >= {"world"}
    assert deserialize_message(received["/robot_description"], String).data == description.data
    assert bringup.stop(timeout=10.0) == 0, bringup.log()
    assert "Traceback" not in bringup.log(), bringup.log()


class _Channel:
    def __init__(self):
        self.logged = []

    def log(self, data, log_time):
        self.logged.append(data)


@pytest.mark.parametrize("message_first", [True, False])
def test_a_subscriber_gets_the_latched_message_whether_it_came_before_or_after_the_subscription(message_first):
    """The relay alone (no ROS graph, no server): a client's subscription to a latched topic is answered with
    the topic's message once it has one, even when the subscription came first and the message's own log may
    have reached no one (the server still adding the subscription)."""
    from discrete_robot.ros.foxglove_bridge import FoxgloveRelay

    relay = FoxgloveRelay(node=None, context=None)
    relay._channels["/tf_static"], relay._latched["/tf_static"] = _Channel(), None
    relay.counts["/tf_static"] = 0
    if message_first:
        relay.forward("/tf_static", b"static")
    relay.subscribed("/tf_static")
    relay.resend_latched()
    if not message_first:
        relay.forward("/tf_static", b"static")
    relay.resend_latched()
    relay.resend_latched()
    assert relay._channels["/tf_static"].logged == [b"static", b"static"]


def test_a_recording_carries_the_publishers_qos_as_rosbag2_does(ros, tmp_path):
    import yaml
    from mcap.reader import make_reader
    from std_msgs.msg import String

    from discrete_robot.nodes.common import LATCHED_QOS, STATE_QOS
    from discrete_robot.ros.recorder import McapRecorder

    ros.node.create_publisher(String, "qos_test/latched", LATCHED_QOS).publish(String(data="once"))
    ros.node.create_publisher(String, "qos_test/volatile", STATE_QOS)
    recorder = McapRecorder(ros.node, tmp_path / "qos.mcap")
    ros.spin_until(lambda: recorder.discover() or recorder.counts.get("/qos_test/latched", 0) > 0, 10.0)
    recorder.close()
    with open(tmp_path / "qos.mcap", "rb") as stream:
        channels = {c.topic: c for c in make_reader(stream).get_summary().channels.values()}
    latched = yaml.safe_load(channels["/qos_test/latched"].metadata["offered_qos_profiles"])
    volatile = yaml.safe_load(channels["/qos_test/volatile"].metadata["offered_qos_profiles"])
    # rosbag2's keys and names (rosbag2_storage qos.cpp, metadata version >= 9); ros2 bag play offers the
    # recorded durability again, so a replayed robot_description or /tf_static latches. History and depth are
    # not discoverable over DDS: rosbag2 records them as discovery reports them too ("unknown", 0) and plays
    # back with its default history (Rosbag2QoS::adapt_offer_to_recorded_offers)
    assert latched == [{"history": "unknown", "depth": 0, "reliability": "reliable",
                        "durability": "transient_local", "deadline": latched[0]["deadline"],
                        "lifespan": latched[0]["lifespan"], "liveliness": latched[0]["liveliness"],
                        "liveliness_lease_duration": latched[0]["liveliness_lease_duration"],
                        "avoid_ros_namespace_conventions": False}]
    assert set(latched[0]["deadline"]) == {"sec", "nsec"}
    assert [p["durability"] for p in volatile] == ["volatile"]


def _fetch(ws, uri: str, request_id: int, timeout: float) -> tuple[int, str, bytes]:
    """A ``fetchAsset`` of ``uri``: (status 0 ok / 1 error, error message, data) of the server's binary reply
    (opcode 0x04, request id uint32 LE, status uint8, error length uint32 LE, error, data; spec.md)."""
    ws.send(json.dumps({"op": "fetchAsset", "uri": uri, "requestId": request_id}))
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            frame = ws.recv(timeout=1.0)
        except TimeoutError:
            continue
        if isinstance(frame, bytes) and frame[0] == 0x04 and struct.unpack_from("<I", frame, 1)[0] == request_id:
            status, length = struct.unpack_from("<BI", frame, 5)
            return status, frame[10:10 + length].decode(), frame[10 + length:]
    raise AssertionError(f"no fetchAsset reply for {uri}")


def test_a_client_fetches_the_meshes_robot_description_names_and_nothing_else(ros, tmp_path):
    """The server offers ``assets``; a ``package://`` mesh (through the ament index) and a ``file://`` mesh the
    published description names come back byte for byte; a file it does not name is refused, even one beside
    them."""
    from std_msgs.msg import String
    from websockets.sync.client import connect

    from discrete_robot.nodes.common import LATCHED_QOS

    mesh = tmp_path / "finger.stl"
    mesh.write_bytes(b"solid finger\nendsolid finger\n")
    secret = tmp_path / "secret.txt"
    secret.write_text("not a mesh")
    package_uri = "package://discrete_robot/urdf/planar_2link.urdf"   # any file of an installed package
    urdf = (f'<robot name="r"><link name="a"><visual><geometry><mesh filename="file://{mesh}"/></geometry>'
            f'</visual><collision><geometry><mesh filename="{package_uri}"/></geometry></collision></link></robot>')
    publisher = ros.node.create_publisher(String, "robot_description", LATCHED_QOS)
    publisher.publish(String(data=urdf))
    port = _free_port()
    bridge = ros.start("python", args=["-m", "discrete_robot.ros.foxglove_bridge", "--port", str(port)])
    ros.spin_until(lambda: "serving ws://" in bridge.log(), 120.0)
    with connect(f"ws://127.0.0.1:{port}", subprotocols=[SUBPROTOCOL], open_timeout=60.0) as ws:
        info = json.loads(ws.recv(timeout=60.0))
        assert info["op"] == "serverInfo" and "assets" in info["capabilities"]
        # the bridge reads the latched description on its own subscription: wait until it names the mesh
        end, status = time.monotonic() + 60.0, 1
        while status != 0 and time.monotonic() < end:
            status, error, data = _fetch(ws, f"file://{mesh}", 1, timeout=30.0)
            time.sleep(0.2)
        assert (status, data) == (0, mesh.read_bytes()), error
        status, error, data = _fetch(ws, package_uri, 2, timeout=30.0)
        share = REPO / "urdf" / "planar_2link.urdf"
        assert (status, data) == (0, share.read_bytes()), error
        for request_id, uri in enumerate([f"file://{secret}", "package://discrete_robot/package.xml",
                                          "file:///etc/hostname"], start=3):
            status, _, data = _fetch(ws, uri, request_id, timeout=30.0)
            assert (status, data) == (1, b""), uri
    assert bridge.stop(timeout=10.0) == 0, bridge.log()
    assert "Traceback" not in bridge.log(), bridge.log()
