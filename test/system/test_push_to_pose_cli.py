"""``experiment push-to-pose`` runs the whole manipulation chain: it starts the arm's simulator and
manipulation_node, pushes, writes its document, plots and MCAP, and stops the nodes; a bad goal fails clearly."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.ros


def _run(tmp_path, goal: str, *options: str):
    return subprocess.run([sys.executable, "-m", "discrete_robot", "experiment", "push-to-pose", "--model",
                           "planar_2link.yaml", "--goal", goal, "--time-step", "0.002", "--json", "--output-dir",
                           str(tmp_path), *options], capture_output=True, text=True, timeout=600)


def _left_running(tmp_path) -> list[str]:
    """Processes still started with this run's parameter files (the nodes the command started)."""
    listing = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout.splitlines()
    return [line for line in listing if str(tmp_path) in line]


def test_push_to_pose_reaches_the_goal_and_records_it(tmp_path):
    from mcap.reader import make_reader

    result = _run(tmp_path, "1.06,0.0,0.35")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]   # the document says why
    document = json.loads(result.stdout)
    assert document["success"], document["message"]
    assert document["goal"] == [1.06, 0.0, 0.35] and len(document["start"]) == 3
    assert document["final_error"]["position_m"] <= 0.01 and abs(document["final_error"]["angle_rad"]) <= 0.0873
    executed = document["executed"]
    assert len(executed["t"]) == len(executed["finger"]) == len(executed["object"]) > 10
    assert len(document["planned"]["object"]) > 1
    for plot in document["plots"]:
        assert Path(plot).stat().st_size > 10_000, plot
    with open(document["mcap"]["path"], "rb") as stream:
        topics = {channel.topic for channel in make_reader(stream).get_summary().channels.values()}
    assert {"/objects/object/pose", "/tf", "/joint_states"} <= topics
    assert not _left_running(tmp_path)


def test_the_same_goal_gives_the_same_bits_at_any_real_time_factor(tmp_path):
    """issue 38: the object lives in the arm's physics step and the push runs in lockstep from a paused world, so
    an experiment is a function of its inputs. In real time beside two busy loops (one per core), and as fast as
    possible (real_time_factor 0), the final pose and every joint and object sample from the goal's start are
    equal to the last bit (a run may collect more samples than the other after the result: its world runs on
    while the command stops)."""
    runs = []
    for factor in ("1", "0"):
        busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2 if factor == "1" else 0)]
        try:
            result = _run(tmp_path / factor, "1.06,0.0,0.35", "--real-time-factor", factor)
        finally:
            for loop in busy:
                loop.kill()
                loop.wait()
        assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
        runs.append(json.loads(result.stdout))
    (a, b) = runs
    assert a["final_error"] == b["final_error"] and a["message"] == b["message"]
    n = min(len(a["executed"]["t"]), len(b["executed"]["t"]))
    assert n > 1000
    for key in ("t", "joints", "object", "finger"):
        assert a["executed"][key][:n] == b["executed"][key][:n], key


def test_a_goal_off_the_table_fails_and_stops_everything(tmp_path):
    result = _run(tmp_path, "5.0,0.0,0.0")
    assert result.returncode == 1, result.stderr[-3000:]
    document = json.loads(result.stdout)
    assert not document["success"] and "outside the table" in document["message"]
    assert not _left_running(tmp_path)


def _altered(source: Path, target: Path) -> None:
    """A copy of the experiment recorded at ``source`` (its inputs and the topics a replay reads) whose first arm
    goal ends 1 mrad further on its first joint."""
    from mcap.reader import make_reader
    from mcap.writer import Writer
    from rclpy.serialization import deserialize_message, serialize_message
    from trajectory_msgs.msg import JointTrajectory

    from discrete_robot.ros.replay import GOALS_TOPIC

    with open(source, "rb") as stream, open(target, "wb") as out:
        reader, writer = make_reader(stream), Writer(out)
        writer.start(profile="ros2", library="test")
        for record in reader.iter_metadata():
            writer.add_metadata(record.name, dict(record.metadata))
        schemas, channels, altered = {}, {}, False
        for schema, channel, message in reader.iter_messages(
                topics=["/joint_states", "/objects/object/pose", GOALS_TOPIC]):
            if schema.name not in schemas:
                schemas[schema.name] = writer.register_schema(schema.name, schema.encoding, schema.data)
            if channel.topic not in channels:
                channels[channel.topic] = writer.register_channel(channel.topic, channel.message_encoding,
                                                                  schemas[schema.name])
            data = message.data
            if channel.topic == GOALS_TOPIC and not altered:
                goal = deserialize_message(data, JointTrajectory)
                goal.points[-1].positions[0] += 1e-3
                data, altered = serialize_message(goal), True
            writer.add_message(channels[channel.topic], message.log_time, data, message.publish_time)
        writer.finish()


def test_a_replay_of_the_recording_is_bit_identical_and_finds_an_altered_goal(tmp_path):
    """issue 38: the MCAP carries the experiment's inputs (model and scene text, the simulator's parameters, the
    executive's stamped goals); `experiment replay` reruns the simulator from them, without a ROS graph, and
    every joint and object sample up to the last goal's end is bit-identical. The same recording with one goal
    altered by 1 mrad reports the first sample that differs, after that goal's start."""
    result = _run(tmp_path, "1.06,0.0,0.35", "--real-time-factor", "0")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    recording = Path(json.loads(result.stdout)["mcap"]["path"])

    def replay(path: Path) -> tuple[int, dict]:
        done = subprocess.run([sys.executable, "-m", "discrete_robot", "experiment", "replay", str(path), "--json",
                               "--output-dir", str(tmp_path)], capture_output=True, text=True, timeout=600)
        return done.returncode, json.loads(done.stdout)

    status, same = replay(recording)
    assert status == 0 and same["identical"] and same["first_difference"] is None, same
    assert same["samples"] > 2000 and same["goals"] >= 1
    _altered(recording, tmp_path / "altered.mcap")
    status, changed = replay(tmp_path / "altered.mcap")
    assert status == 1 and not changed["identical"], changed
    assert changed["first_difference"]["stamp_s"] > 0.0 and 0 < changed["samples"] < same["samples"]
