"""The ``discrete experiment <name>`` command on short runs, and the equal-CPU-time RK45 matching."""

import argparse
import json

import numpy as np
import pytest

from discrete_robot import cli
from discrete_robot.discrete.cli import add_experiment_command
from discrete_robot.errors import InputError
from discrete_robot.variational import Experiment, comparison

SHORT = {Experiment.MASS_SPRING: 20.0, Experiment.PLANAR_PENDULUM: 30.0, Experiment.SPHERICAL_PENDULUM: 20.0,
         Experiment.DUMBBELL: 30.0, Experiment.CART_PENDULUM: 2.0, Experiment.CONVERGENCE: 10.0}


def parse(argv):
    parser = argparse.ArgumentParser()
    add_experiment_command(parser.add_subparsers(dest="command", required=True), cli.common_options())
    return parser.parse_args(argv)


@pytest.mark.parametrize("name", list(Experiment), ids=[e.value for e in Experiment])
def test_each_experiment_reports_its_figures_and_writes_a_plot(name, tmp_path):
    args = parse(["experiment", name.value, "--duration", str(SHORT[name]), "--output-dir", str(tmp_path)])
    result = json.loads(cli.render(args.run(args), as_json=True))
    assert result["experiment"] == name.value
    assert (tmp_path / f"variational_{name.value.replace('-', '_')}.png").stat().st_size > 10_000
    if name is Experiment.CART_PENDULUM:
        assert result["kinetic_shaping"]["phi_max_abs"] <= 0.101
        assert result["uncontrolled_falls_after"] < 1.0
        return
    if name is Experiment.CONVERGENCE:
        # each integrator at its own order, and composed to 4 and 6 (the pendula against the exact angle and
        # DOP853, the arms against DOP853)
        assert len(result["observed_orders"]) == 4
        for label, orders in result["observed_orders"].items():
            for order, observed in orders.items():
                assert abs(observed - int(order)) < 0.5, (label, order, observed)
        return
    vi = result["vi"]
    assert vi["steps"] > 0 and vi["cpu_seconds"] > 0.0
    rk_keys = [key for key in result if key.startswith("rk45") and not key.endswith("default_tolerance")]
    for key in rk_keys:
        assert 1e-13 <= result[key]["rtol"] <= 1e-3 and result[key]["calibration_trials"]
    if name is Experiment.MASS_SPRING:
        assert vi["energy_mean_variation"] < 1e-13
    if name is Experiment.SPHERICAL_PENDULUM:
        assert vi["unit_length_error_mean"] < 1e-14 < result["rk45"]["unit_length_error_mean"]
    if name is Experiment.DUMBBELL:
        assert vi["orthogonality_error_max"] < 1e-13
        assert all(result[key]["orthogonality_error_max"] > 1e-12 for key in rk_keys)


def test_experiment_through_the_unified_cli(tmp_path, capsys):
    pytest.importorskip("discrete_robot.discrete.cli", reason="the discrete capability's CLI module is not there yet")
    code = cli.main(["discrete", "experiment", "spherical-pendulum", "--duration", "5", "--json",
                     "--output-dir", str(tmp_path)])
    assert code == 0
    result = json.loads(capsys.readouterr().out)
    assert result["initial_energy_per_ml2"] == pytest.approx(-0.44)
    assert (tmp_path / "variational_spherical_pendulum.png").exists()


def test_a_non_positive_duration_is_an_input_error(tmp_path):
    args = parse(["experiment", "mass-spring", "--duration", "-1", "--output-dir", str(tmp_path)])
    with pytest.raises(InputError, match="duration"):
        args.run(args)


def test_rk45_matching_stops_at_the_tolerance_bounds():
    """A run cheaper than any target drives the tolerance to the tight bound and stops; an impossible target
    drives it to the loose bound (never beyond the solve_ivp default 1e-3)."""
    tight = comparison.run_rk45_for_cpu_time(lambda rtol: rtol, target_seconds=1e3)
    assert tight.trials[-1][0] == pytest.approx(comparison.TIGHTEST_RTOL) and len(tight.trials) < 6
    loose = comparison.run_rk45_for_cpu_time(lambda rtol: rtol, target_seconds=1e-12)
    assert loose.trials[-1][0] == pytest.approx(comparison.LOOSEST_RTOL) and len(loose.trials) < 6
    assert all(comparison.TIGHTEST_RTOL <= r <= comparison.LOOSEST_RTOL for r, _ in tight.trials + loose.trials)


def test_mean_variation_and_orthogonality_error():
    assert comparison.mean_variation([1.0, 1.5, 0.0]) == pytest.approx((0.0 + 0.5 + 1.0) / 3)
    rotations = np.stack([np.eye(3), 1.1 * np.eye(3)])
    np.testing.assert_allclose(comparison.orthogonality_errors(rotations), [0.0, np.sqrt(3) * 0.21])
