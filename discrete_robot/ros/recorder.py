"""Record live ROS 2 topics to an MCAP file that ``ros2 bag`` and Foxglove read, and the relay of raw topics
that the recorder and the live Foxglove view (:mod:`.foxglove_bridge`) share.

rosbag2 is not installable without a ROS install, so this writes the same
layout itself with the ``mcap`` library: profile ``ros2``, one schema per
message type (encoding ``ros2msg``: the .msg text followed by every nested
definition, as rosbag2 stores it), one channel per topic with the publishers'
QoS profiles in its metadata (``offered_qos_profiles``, so ``ros2 bag play``
offers /tf_static and robot_description transient-local again), and each
message as the CDR bytes received from DDS (subscriptions with ``raw=True``),
so nothing is re-serialised.
"""

import importlib
import os
import re
import threading
import time
from pathlib import Path

import yaml
from ament_index_python.packages import get_package_share_directory
from mcap.writer import Writer
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

from discrete_robot.errors import DiscreteRobotError

_PRIMITIVES = {"bool", "byte", "char", "float32", "float64", "int8", "uint8", "int16", "uint16", "int32", "uint32",
               "int64", "uint64", "string", "wstring"}
_SEPARATOR = "=" * 80


class EmptyRecordingError(DiscreteRobotError):
    """A recording ended without a single message."""


def message_class(type_name: str):
    """The Python class of a ROS type given as ``pkg/msg/Type``."""
    package, kind, name = type_name.split("/")
    return getattr(importlib.import_module(f"{package}.{kind}"), name)


def _definition_file(package: str, name: str) -> Path:
    return Path(get_package_share_directory(package)) / "msg" / f"{name}.msg"


def _nested_types(text: str, package: str) -> list[str]:
    """``pkg/Type`` of every non-primitive field in a .msg text (constants and comments skipped)."""
    nested = []
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if not line or "=" in line.split()[-1] or len(line.split()) < 2:
            continue
        field_type = re.sub(r"\[.*\]$", "", line.split()[0])
        field_type = re.sub(r"<=\d+$", "", field_type)
        if field_type in _PRIMITIVES:
            continue
        nested.append(field_type if "/" in field_type else f"{package}/{field_type}")
    return nested


def message_definition(type_name: str) -> str:
    """The full ros2msg definition of ``pkg/msg/Type``: its text, then each nested type once."""
    package, _, name = type_name.split("/")
    root = _definition_file(package, name).read_text()
    parts, seen = [], set()
    pending = _nested_types(root, package)
    while pending:
        nested = pending.pop(0)
        if nested in seen:
            continue
        seen.add(nested)
        nested_package, nested_name = nested.split("/")[0], nested.split("/")[-1]
        text = _definition_file(nested_package, nested_name).read_text()
        parts.append(f"{_SEPARATOR}\nMSG: {nested_package}/{nested_name}\n{text}")
        pending.extend(_nested_types(text, nested_package))
    return "\n".join([root, *parts])


def _matching_qos(publishers) -> QoSProfile:
    """A subscription QoS every one of ``publishers`` (their TopicEndpointInfo) is compatible with.

    Transient-local only when all publishers are (so latched messages such as
    robot_description are recorded); best effort when any publisher is.
    """
    latched = bool(publishers) and all(p.qos_profile.durability == DurabilityPolicy.TRANSIENT_LOCAL
                                       for p in publishers)
    reliable = all(p.qos_profile.reliability == ReliabilityPolicy.RELIABLE for p in publishers)
    return QoSProfile(depth=100,
                      durability=DurabilityPolicy.TRANSIENT_LOCAL if latched else DurabilityPolicy.VOLATILE,
                      reliability=ReliabilityPolicy.RELIABLE if reliable else ReliabilityPolicy.BEST_EFFORT)


def _duration(nanoseconds: int) -> dict:
    return {"sec": nanoseconds // 1_000_000_000, "nsec": nanoseconds % 1_000_000_000}


def offered_qos_profiles(publishers) -> str:
    """The publishers' QoS profiles as the YAML list rosbag2 stores in a channel's ``offered_qos_profiles``.

    Its format since version 9 of rosbag2's metadata (rosbag2_storage/src/rosbag2_storage/qos.cpp,
    ``convert<Rosbag2QoS>::encode``): policies as rmw's lower-case names (``keep_last``, ``reliable``,
    ``transient_local``, ``automatic``), durations as ``{sec, nsec}``.
    """
    profiles = []
    for publisher in publishers:
        qos = publisher.qos_profile
        profiles.append({
            "history": qos.history.name.lower(), "depth": int(qos.depth),
            "reliability": qos.reliability.name.lower(), "durability": qos.durability.name.lower(),
            "deadline": _duration(qos.deadline.nanoseconds), "lifespan": _duration(qos.lifespan.nanoseconds),
            "liveliness": qos.liveliness.name.lower(),
            "liveliness_lease_duration": _duration(qos.liveliness_lease_duration.nanoseconds),
            "avoid_ros_namespace_conventions": bool(qos.avoid_ros_namespace_conventions)})
    return yaml.safe_dump(profiles, sort_keys=False)


class TopicRelay:
    """Subscribes to every topic it discovers (call :meth:`discover` now and then) and hands each message's
    CDR bytes to :meth:`forward`; a subclass opens its channel per topic in :meth:`open_channel`."""

    IGNORED = ("/rosout", "/parameter_events")

    def __init__(self, node: Node):
        self.node = node
        self.counts: dict[str, int] = {}
        self.skipped: set[str] = set()
        self._subscriptions = []

    def discover(self) -> None:
        """Start relaying the topics that appeared since the last call."""
        for topic, types in self.node.get_topic_names_and_types():
            if topic in self.counts or topic in self.IGNORED or not types:
                continue
            type_name = types[0]
            try:
                msg_type = message_class(type_name)
                definition = message_definition(type_name)
            except (ImportError, AttributeError, OSError, LookupError):
                self.skipped.add(type_name)  # a type this environment does not have: it cannot be decoded either
                continue
            publishers = self.node.get_publishers_info_by_topic(topic)
            if not publishers:
                continue    # only subscribers so far: the publishers' QoS (latched or not) is not known yet
            qos = _matching_qos(publishers)
            self.open_channel(topic, type_name, definition, offered_qos_profiles(publishers),
                              qos.durability == DurabilityPolicy.TRANSIENT_LOCAL)
            self.counts[topic] = 0
            self._subscriptions.append(self.node.create_subscription(
                msg_type, topic, lambda data, t=topic: self.forward(t, data), qos, raw=True))

    def open_channel(self, topic: str, type_name: str, definition: str, offered_qos: str, latched: bool) -> None:
        raise NotImplementedError

    def forward(self, topic: str, data: bytes) -> None:
        raise NotImplementedError

    def unsubscribe(self) -> None:
        for subscription in self._subscriptions:
            self.node.destroy_subscription(subscription)
        self._subscriptions = []


class McapRecorder(TopicRelay):
    """Writes every topic it discovers to ``path``."""

    def __init__(self, node: Node, path: Path):
        super().__init__(node)
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._stream = open(self.path, "wb")  # noqa: SIM115 - closed in close()
        self._writer = Writer(self._stream)
        self._writer.start(profile="ros2", library="discrete_robot")
        self._schemas: dict[str, int] = {}
        self._channels: dict[str, int] = {}
        self._lock = threading.Lock()

    def open_channel(self, topic: str, type_name: str, definition: str, offered_qos: str, latched: bool) -> None:
        if type_name not in self._schemas:
            self._schemas[type_name] = self._writer.register_schema(
                name=type_name, encoding="ros2msg", data=definition.encode())
        self._channels[topic] = self._writer.register_channel(
            topic=topic, message_encoding="cdr", schema_id=self._schemas[type_name],
            metadata={"offered_qos_profiles": offered_qos})

    def forward(self, topic: str, data: bytes) -> None:
        now = time.time_ns()
        with self._lock:
            if self._stream.closed:
                return
            self._writer.add_message(self._channels[topic], log_time=now, data=data, publish_time=now,
                                     sequence=self.counts[topic])
            self.counts[topic] += 1

    def receiving_states(self) -> bool:
        """Whether a robot's state stream (a ``joint_states`` topic) has reached the recording: its subscription
        is matched. False until a ``joint_states`` topic is discovered and delivers."""
        return any(count > 0 for topic, count in self.counts.items() if topic.endswith("joint_states"))

    def add_metadata(self, name: str, values: dict[str, str]) -> None:
        """A metadata record ``name`` of text ``values`` (an experiment's inputs)."""
        with self._lock:
            self._writer.add_metadata(name, values)

    def close(self) -> dict[str, int]:
        """Stop recording and finish the file; returns the message count per topic.

        An empty recording is an error (EmptyRecordingError, the file is still finished): it means nothing was
        published, or no topic's type could be recorded (its definition not found through AMENT_PREFIX_PATH).
        """
        self.unsubscribe()
        with self._lock:
            self._writer.finish()
            self._stream.close()
        if sum(self.counts.values()) == 0:
            raise EmptyRecordingError(
                f"{self.path}: the recording holds no messages (topics recorded: {sorted(self.counts) or 'none'}; "
                f"types without a definition: {sorted(self.skipped) or 'none'}; AMENT_PREFIX_PATH="
                f"{os.environ.get('AMENT_PREFIX_PATH', '(unset)')})")
        return dict(self.counts)
