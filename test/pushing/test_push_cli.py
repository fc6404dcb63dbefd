"""`python -m discrete_robot push predict|simulate`: the service fields in, the response fields out."""

import json

import numpy as np
import pytest

from discrete_robot.cli import main
from discrete_robot.pushing.object_model import make_pushed_object
from discrete_robot.pushing.prediction import predict_push

SQUARE = [[-0.05, -0.05], [0.05, -0.05], [0.05, 0.05], [-0.05, 0.05]]
PREDICT = {"footprint": SQUARE, "normal_force": 2.0, "support_friction": 0.4, "contact_friction": 0.3,
           "contact_point": [-0.05, 0.02], "pusher_velocity": {"x": 0.1, "y": 0.0, "z": 0.0}}


def run(capsys, *argv):
    status = main(list(argv))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_push_cli_predict_prints_the_response_fields(capsys):
    status, out, _ = run(capsys, "push", "predict", "--json", "--request", json.dumps(PREDICT))
    assert status == 0
    answer = json.loads(out)
    expected = predict_push(make_pushed_object(SQUARE, 0.4, 2.0), [-0.05, 0.02], [0.1, 0.0], 0.3)
    assert answer["success"] is True and answer["contact_mode"] == expected.mode.value
    twist = answer["object_twist"]
    np.testing.assert_allclose([twist["linear"]["x"], twist["linear"]["y"], twist["angular"]["z"]], expected.twist)
    force = answer["contact_force"]
    assert answer["power"] == pytest.approx(force["x"] * 0.1)


def test_push_cli_simulate_reads_a_file_and_writes_a_plot(capsys, tmp_path):
    request = {**{k: v for k, v in PREDICT.items() if k not in ("contact_point", "pusher_velocity")},
               "pusher_radius": 0.01, "object_pose": {"x": 0.0, "y": 0.0, "theta": 0.0},
               "pusher_path": [[-0.1, 0.0], [0.1, 0.0]], "pusher_speed": 0.1, "time_step": 0.0}
    path = tmp_path / "request.json"
    path.write_text(json.dumps(request))
    status, out, _ = run(capsys, "push", "simulate", "--json", "--request", f"@{path}", "--output-dir",
                         str(tmp_path), "--default-time-step", "0.05")
    assert status == 0
    answer = json.loads(out)
    assert len(answer["times"]) == len(answer["object_poses"]) == len(answer["contact_modes"]) == 41
    assert answer["object_poses"][-1]["x"] == pytest.approx(0.1 + 0.06)  # pushed through its centre
    assert (tmp_path / "push_simulation.png").stat().st_size > 0


@pytest.mark.parametrize("request_text, match", [
    ("{not json", "not valid JSON"),
    ("@/nonexistent/request.json", "not found"),
    (json.dumps({**PREDICT, "footprint": [[0, 0], [1, 1], [1, 0], [0, 1]]}), "self-intersecting"),
    (json.dumps({**PREDICT, "contact_point": [0.0, 0.0]}), "off the footprint outline"),
    (json.dumps({**PREDICT, "support_friction": -1.0}), "support_friction"),
    (json.dumps({**PREDICT, "pusher_velocity": [0.0, 0.0]}), "zero"),
    (json.dumps({**PREDICT, "frition": 0.3}), "unknown request fields"),
    (json.dumps({k: v for k, v in PREDICT.items() if k != "normal_force"}), "missing request fields: normal_force"),
])
def test_push_cli_bad_requests_exit_2_with_the_reason(capsys, request_text, match):
    status, _, err = run(capsys, "push", "predict", "--request", request_text)
    assert status == 2
    assert err.startswith("error:") and match in err
