"""``python -m discrete_robot space simulate``: output layout, --force, plots, clear errors."""

import json

import numpy as np
import pytest
import yaml

from discrete_robot.cli import main
from discrete_robot.model.description import package_config_path

BODIES = ["base", "arm1_link1", "arm1_link2", "arm2_link1", "arm2_link2"]


def run(capsys, *args) -> tuple[int, dict | None, str]:
    status = main(["space", "simulate", *args])
    captured = capsys.readouterr()
    return status, (json.loads(captured.out) if status == 0 else None), captured.err


def test_default_scenario_output_has_every_field_at_every_requested_time(capsys):
    status, result, _ = run(capsys, "--duration", "1", "--dt", "0.02", "--times", "0,0.5,1", "--json")
    assert status == 0
    assert [load["body"] for load in result["loads"]] == ["arm1_link2", "arm2_link2"]
    assert result["loads"][0]["force"] == [1.0, -1.0, 1.0] and result["loads"][1]["force"] == [2.0, -2.0, -2.0]
    assert all(load["frame"] == "body" and load["point"] == [0.0, 0.0, 1.0] for load in result["loads"])
    assert [s["t"] for s in result["samples"]] == [0.0, 0.5, 1.0]
    for sample in result["samples"]:
        assert list(sample["bodies"]) == BODIES
        for body in sample["bodies"].values():
            assert len(body["position"]) == 3
            assert np.linalg.norm(body["orientation"]) == pytest.approx(1.0, abs=1e-12)
        assert len(sample["joints"]) == 12 and "arm2_joint2_2" in sample["joints"]
        assert set(sample["momentum"]) == {"linear", "angular"}
        assert sample["kinetic_energy"] >= 0.0
    first, last = result["samples"][0], result["samples"][-1]
    assert first["kinetic_energy"] == 0.0 and last["kinetic_energy"] > 0.0  # from rest, then pushed


def test_force_options_replace_the_default_loads(capsys):
    status, result, _ = run(capsys, "--duration", "0.5", "--dt", "0.05", "--times", "0.5", "--json",
                            "--force", "base:0,0,0:10,0,0:world", "--force", "arm1_link1:0,0,1:0,0,-4:world")
    assert status == 0
    assert [load["body"] for load in result["loads"]] == ["base", "arm1_link1"]
    np.testing.assert_allclose(result["samples"][0]["momentum"]["linear"], [5.0, 0.0, -2.0], atol=1e-12)


def test_plot_writes_displacement_and_attitude_figures(capsys, tmp_path):
    status, result, _ = run(capsys, "--duration", "0.4", "--dt", "0.05", "--times", "0.4", "--plot", "--json",
                            "--output-dir", str(tmp_path))
    assert status == 0
    assert sorted(p.rsplit("/", 1)[-1] for p in result["plots"]) == ["space_attitude.png",
                                                                    "space_com_displacement.png"]
    assert all((tmp_path / name).stat().st_size > 10_000 for name in ("space_attitude.png",
                                                                        "space_com_displacement.png"))
    assert len(result["samples"]) == 1  # the figures' extra samples are not printed


@pytest.mark.parametrize(("arguments", "message"), [
    (["--force", "arm3_link2:0,0,1:1,0,0:body"], "unknown body 'arm3_link2'"),
    (["--force", "base:0,0,0:1,nan,0:world"], "force must be three finite numbers"),
    (["--force", "base:0,0,0:1,0,0:inertial"], "FRAME must be 'body' or 'world'"),
    (["--force", "base:0,0:1,0,0:world"], "point must be three"),
    (["--force", "base:1,0,0"], "expected BODY:X,Y,Z:FX,FY,FZ:FRAME"),
    (["--duration", "nan"], "duration"),
    (["--dt", "-0.1"], "dt"),
    (["--times", "0,20"], "within"),
])
def test_bad_arguments_give_a_clear_error(capsys, arguments, message):
    status, _, error = run(capsys, "--duration", "1", "--times", "1", *arguments)
    assert status == 2
    assert message in error


def _write_model(tmp_path, change) -> str:
    data = yaml.safe_load(package_config_path("space_robot_dual_arm.yaml").read_text())
    change(data)
    path = tmp_path / "model.yaml"
    path.write_text(yaml.safe_dump(data))
    return str(path)


@pytest.mark.parametrize(("change", "message"), [
    (lambda d: d["links"][2].update(inertia=[0.0, 0.0, 0.0], com=[0.0, 0.0, 0.0]), "arm2_link1"),
    (lambda d: d["base"].update(inertia=[900.0, 0.0, 900.0]), "positive definite"),
    (lambda d: d.update(links=[]), "links"),
    (lambda d: d["base"].update(mass=float("nan")), "mass"),
])
def test_bad_model_files_give_a_clear_error(capsys, tmp_path, change, message):
    status, _, error = run(capsys, "--config", _write_model(tmp_path, change), "--duration", "0.1", "--times", "0.1")
    assert status == 2
    assert error.startswith("error: ") and message in error
