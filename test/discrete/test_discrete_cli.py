"""``python -m discrete_robot discrete simulate``: runs, reports energy drift, writes the plot, rejects bad input."""

import json

import pytest

from discrete_robot.cli import main


def test_simulate_prints_state_and_energy_and_writes_a_plot(tmp_path, capsys):
    status = main(["discrete", "simulate", "--integrator", "discrete", "--dt", "0.02", "--duration", "1.0",
                   "--q0", "0.3", "0.5", "--qd0", "0.0", "1.0", "--json", "--output-dir", str(tmp_path)])
    assert status == 0
    result = json.loads(capsys.readouterr().out)
    assert result["steps"] == 50 and result["duration"] == pytest.approx(1.0)
    assert result["joint_names"] == ["joint1", "joint2"] and len(result["q"]) == 2
    assert result["max_relative_energy_drift"] < 1e-12
    assert (tmp_path / "simulate_planar_2link_discrete.png").stat().st_size > 1000


def test_simulate_rejects_wrong_initial_state_with_a_clear_error(tmp_path, capsys):
    status = main(["discrete", "simulate", "--q0", "1", "2", "3", "--output-dir", str(tmp_path)])
    assert status == 2
    assert "--q0 (one per joint: joint1, joint2): expected 2 values" in capsys.readouterr().err


def test_simulate_reports_an_invalid_model_file(tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: bad\nbase: {name: b}\nlinks:\n  - {name: l, parent: b, joint: {name: j, type: revolute},"
                   " mass: -1.0, inertia: [1.0, 1.0, 1.0]}\n")
    assert main(["discrete", "simulate", "--model", str(bad), "--output-dir", str(tmp_path)]) == 2
    assert "link 'l': mass" in capsys.readouterr().err


def test_experiment_command_is_registered(capsys):
    with pytest.raises(SystemExit):
        main(["discrete", "experiment", "--help"])
    assert "experiment" in capsys.readouterr().out
