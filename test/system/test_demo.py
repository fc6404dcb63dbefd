"""The main job (`make demo`'s command) runs end to end and leaves non-trivial results."""

import json
import subprocess
import sys

import numpy as np
import pytest

pytestmark = [pytest.mark.ros, pytest.mark.slow]


def test_demo_writes_plots_summary_and_an_mcap_with_moving_joint_states(tmp_path):
    pytest.importorskip("rclpy", reason="the demo needs ROS 2")
    from mcap.reader import make_reader
    from mcap_ros2.decoder import DecoderFactory

    result = subprocess.run([sys.executable, "-m", "discrete_robot", "experiment", "demo", "--json",
                             "--output-dir", str(tmp_path)], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-4000:]
    summary = json.loads(result.stdout)
    assert set(summary["experiments"]) == {"plan-execute", "space", "push-sweep", "push-to-pose"}
    assert (tmp_path / "summary.json").exists()
    for name in ("plan_execute", "space_robot", "push_sweep", "push_to_pose"):
        assert (tmp_path / f"{name}.png").stat().st_size > 10_000, f"{name}.png looks empty"

    positions = []
    with open(summary["mcap"]["path"], "rb") as stream:
        for _, channel, _, message in make_reader(stream, decoder_factories=[DecoderFactory()]).iter_decoded_messages():
            if channel.topic == "/joint_states":
                positions.append(list(message.position))
    assert len(positions) > 20
    positions = np.array(positions)
    assert np.ptp(positions, axis=0).max() > 0.5, "recorded joint states do not move"
    assert summary["experiments"]["plan-execute"]["final_position_error_rad"] == pytest.approx([0, 0], abs=0.05)
    push = summary["experiments"]["push-to-pose"]
    assert push["success"], push["message"]
