"""``discrete simulate`` simulates what discrete_robot_node simulates: the model's position limits as stops and
its joint damping and friction; ``--no-limits`` drops them, and the summary names every limit reached."""

import json

import numpy as np
import yaml

from discrete_robot.cli import main
from discrete_robot.model.description import package_config_path


def _simulate(tmp_path, capsys, *extra):
    status = main(["discrete", "simulate", "--model", str(package_config_path("arm_6dof.yaml")), "--dt", "0.01",
                   "--duration", "4.0", "--json", "--output-dir", str(tmp_path), *extra])
    assert status == 0
    return json.loads(capsys.readouterr().out)


def _file_limits() -> dict[str, tuple[float, float]]:
    """Each joint's position limits read straight from the model file (docs/model_format.md)."""
    document = yaml.safe_load(package_config_path("arm_6dof.yaml").read_text())
    limits = {}
    for link in document["links"]:
        joint = link["joint"].get("limits", {})
        limits[link["joint"]["name"]] = (joint.get("lower", [-np.inf])[0], joint.get("upper", [np.inf])[0])
    return limits


def test_the_arm_stays_within_its_limits_and_the_summary_names_those_it_reached(tmp_path, capsys):
    limited = _simulate(tmp_path, capsys)
    free = _simulate(tmp_path, capsys, "--no-limits")
    limits = _file_limits()
    for name, q in zip(limited["joint_names"], limited["q"], strict=True):
        lower, upper = limits[name]
        assert lower - 1e-9 <= q <= upper + 1e-9, name
    escaped = [n for n, q in zip(free["joint_names"], free["q"], strict=True)
               if not limits[n][0] <= q <= limits[n][1]]
    assert escaped, "without limits the falling arm should leave some joint's range (else this test shows nothing)"
    assert limited["position_limits_reached"], "the falling arm reaches a limit"
    assert set(limited["position_limits_reached"]) <= set(limited["joint_names"])
    assert free["position_limits_reached"] == {} or free["limits"].startswith("none")
    # T + V changes only at the stops (this arm has no damping or friction): the discrete model conserves it
    # between them to round-off, as it does over the whole run without limits
    assert limited["energy_removed_by_joint_stops_J"] > 0.0
    assert limited["max_relative_energy_drift"] < 1e-10
    assert free["energy_dissipated_J"] == 0.0 and free["energy_removed_by_joint_stops_J"] == 0.0
    assert free["max_relative_energy_drift"] < 1e-10



def test_an_arm_released_where_its_energy_is_zero_reports_a_round_off_drift(tmp_path, capsys):
    """The planar arm starts at rest where V = 0, so E₀ = 0: the drift is stated against the energy the motion
    exchanges (the peak kinetic energy), and the discrete model keeps the balance to round-off."""
    status = main(["discrete", "simulate", "--model", str(package_config_path("planar_2link.yaml")), "--dt", "0.01",
                   "--steps", "500", "--json", "--output-dir", str(tmp_path)])
    assert status == 0
    result = json.loads(capsys.readouterr().out)
    assert result["energy_initial"] == 0.0
    assert result["max_relative_energy_drift"] < 1e-12
