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
