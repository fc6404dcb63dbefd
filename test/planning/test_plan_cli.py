"""``python -m discrete_robot plan ...``: JSON output, plots, and errors as exit status 2."""

import json

import numpy as np

from discrete_robot.cli import main


def test_min_time_prints_the_plan_and_writes_the_torque_and_velocity_plot(tmp_path, capsys):
    status = main(["plan", "min-time", "--waypoints", "0,0", "1.5707963267948966,0.7853981633974483",
                   "--max-effort", "20,10", "--grid-points", "40", "--json", "--output-dir", str(tmp_path)])
    assert status == 0
    result = json.loads(capsys.readouterr().out)
    assert 3.2 < result["duration"] < 3.4
    torques = np.array(result["torques"])
    assert torques.shape == (result["steps"], 2)
    assert np.all(np.abs(torques) <= np.array([20.0, 10.0]) * (1 + 1e-9))
    assert result["replay_position_error"] <= 1e-9
    assert result["min_torque_utilisation"] >= 1 - 1e-6
    assert (tmp_path / "min_time.png").stat().st_size > 0


def test_min_effort_spherical_pendulum_reports_dmoc_and_heun(tmp_path, capsys):
    status = main(["plan", "min-effort", "--system", "spherical-pendulum", "--duration", "1", "--h", "0.033",
                   "--json", "--output-dir", str(tmp_path)])
    assert status == 0
    solutions = {s["method"]: s for s in json.loads(capsys.readouterr().out)["solutions"]}
    assert solutions["dmoc-lgvi"]["terminal_error"] <= 1e-6
    assert solutions["rk2-shooting"]["unit_length_error"] > 1e-4
    assert (tmp_path / "min_effort_spherical_pendulum.png").exists()


def test_bad_input_is_an_error_message_and_status_2(tmp_path, capsys):
    assert main(["plan", "min-time", "--waypoints", "0,0", "0,4", "--output-dir", str(tmp_path)]) == 2
    assert "outside its limits" in capsys.readouterr().err
    assert main(["plan", "min-time", "--max-effort", "20,x", "--output-dir", str(tmp_path)]) == 2
    assert "--max-effort" in capsys.readouterr().err
    assert main(["plan", "min-time", "--model", str(tmp_path / "missing.yaml"), "--output-dir", str(tmp_path)]) == 2
    assert "cannot be read" in capsys.readouterr().err
