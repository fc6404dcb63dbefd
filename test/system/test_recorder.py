"""The MCAP recorder writes files that an independent reader (mcap_ros2) decodes back to the sent messages."""

import pytest


@pytest.mark.ros
def test_recorded_joint_states_and_latched_string_read_back(ros, tmp_path):
    from mcap.reader import make_reader
    from mcap_ros2.decoder import DecoderFactory
    from sensor_msgs.msg import JointState
    from std_msgs.msg import String

    from discrete_robot.nodes.common import LATCHED_QOS
    from discrete_robot.ros.recorder import McapRecorder

    latched = ros.node.create_publisher(String, "recorder_test/description", LATCHED_QOS)
    latched.publish(String(data="<robot name='r'/>"))
    states = ros.node.create_publisher(JointState, "recorder_test/joint_states", 10)
    recorder = McapRecorder(ros.node, tmp_path / "run.mcap")
    ros.spin_until(lambda: recorder.discover() or "/recorder_test/joint_states" in recorder.counts, 5.0)
    sent = [[0.1 * k, -0.2 * k] for k in range(20)]
    for position in sent:
        states.publish(JointState(name=["a", "b"], position=position))
        ros.spin_until(lambda: False, 0.01)
    ros.spin_until(lambda: recorder.counts.get("/recorder_test/joint_states", 0) >= len(sent), 5.0)
    counts = recorder.close()
    assert counts["/recorder_test/joint_states"] == len(sent)

    by_topic = {}
    with open(tmp_path / "run.mcap", "rb") as stream:
        reader = make_reader(stream, decoder_factories=[DecoderFactory()])
        for _, channel, _, decoded in reader.iter_decoded_messages():
            by_topic.setdefault(channel.topic, []).append(decoded)
    assert [list(m.position) for m in by_topic["/recorder_test/joint_states"]] == sent
    assert by_topic["/recorder_test/description"][0].data == "<robot name='r'/>"


@pytest.mark.ros
def test_a_recording_without_messages_fails_loudly(ros, tmp_path):
    from discrete_robot.ros.recorder import EmptyRecordingError, McapRecorder

    recorder = McapRecorder(ros.node, tmp_path / "empty.mcap")
    recorder.discover()
    with pytest.raises(EmptyRecordingError, match="holds no messages"):
        recorder.close()


def test_the_cli_puts_its_own_prefix_on_the_ament_path(monkeypatch):
    import os
    import sys
    from pathlib import Path

    from discrete_robot.ros.processes import ament_environment

    if not (Path(sys.prefix) / "share" / "ament_index").is_dir():
        pytest.skip("this interpreter's prefix holds no ament index (a system ROS 2 install)")
    monkeypatch.delenv("AMENT_PREFIX_PATH", raising=False)
    ament_environment()
    assert os.environ["AMENT_PREFIX_PATH"].split(os.pathsep) == [sys.prefix]
