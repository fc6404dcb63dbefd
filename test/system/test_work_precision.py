"""The work-precision benchmark (bench/bench_work_precision.py) on a tiny setting: every simulator runs the same
robot (its error against the independent DOP853 reference shrinks with the step), ours conserves, and the entries
carry finite points with the keys the README's figure and bench/run.py read.

The benchmark's peers (Pinocchio, MuJoCo) are installed by ``make bench`` only (requirements-bench.txt), so the
tiny setting runs where they are; its curve arithmetic (bench/curves.py) is checked everywhere."""

import importlib.util
from pathlib import Path

import numpy as np
import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
KEYS = {"time_step", "cpu_seconds", "state_error", "drift"}


def load(name: str):
    spec = importlib.util.spec_from_file_location(name, BENCH / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def bench():
    for peer in ("pinocchio", "mujoco"):
        pytest.importorskip(peer, reason="a benchmark peer: `make bench` installs it (requirements-bench.txt)")
    return load("bench_work_precision")


def test_matched_interpolates_log_log():
    """Two power laws t = c e^(−1/4) with c = 1 (ours) and c = 3 (peer): the peer takes 3 times as long at every
    shared error; curves with no shared error range give NaN."""
    errors = [1e-8, 1e-6, 1e-4]
    ours = [{"e": e, "t": e ** -0.25} for e in errors]
    peer = [{"e": e, "t": 3.0 * e ** -0.25} for e in (3e-7, 3e-5, 3e-3)]
    curves = load("curves")
    assert curves.matched(ours, peer, "e", "t") == pytest.approx(3.0, rel=1e-12)
    assert np.isnan(curves.matched(ours, [{"e": 1.0, "t": 1.0}], "e", "t"))
    # a peer curve that starts at twice ours' largest error: extended along its first segment within reach 3
    shifted = [{"e": e, "t": 3.0 * e ** -0.25} for e in (2e-4, 2e-2)]
    assert curves.matched(ours, shifted, "e", "t", reach=3.0) == pytest.approx(3.0, rel=1e-12)
    assert np.isnan(curves.matched(ours, shifted, "e", "t"))


def test_tiny_setting_runs_with_finite_points(bench, tmp_path):
    entries = bench.run({0.02: (1e-3, 2e-3)}, output_dirs=(tmp_path / "docs", tmp_path / "results"))
    # (CPU time at matched error, drift at matched time) x 1 horizon x (3 of ours on the arm and the UR5, 1 on the
    # space robot)
    assert len(entries) == 2 * (3 + 3 + 1)
    for entry in entries:
        assert {"name", "ratio", "baseline", "peer", "unit", "ratios"} <= entry.keys()
        assert set(entry["ratios"]) == set(bench.PEERS)
    for entry in entries[::2]:
        curves = entry["details"]
        assert set(bench.PEERS) <= curves.keys() and any(label.startswith("ours") for label in curves)
        for label, points in curves.items():
            assert len(points) == 2 and all(point.keys() == KEYS for point in points), label
            assert all(np.isfinite(point[key]) and point[key] >= 0.0 for point in points for key in KEYS), label
            # all on the same robot: 20 ms at 1 ms steps stays within 1e-5 of the reference, 1e-2 for first-order
            # Euler (the wrist's 4 g too many or gravity on the floating robot fail it)
            tolerance = 1e-2 if "Euler" in label else 1e-5
            assert points[0]["state_error"] < tolerance, (entry["name"], label, points[0])
        for label in bench.OURS[entry["name"].split(",")[0]]:
            assert max(point["drift"] for point in curves[label]) < 1e-12, entry["name"]   # energy / momentum kept
    assert all(Path(path).is_file() for path in entries[0]["figures"])
    assert {Path(path).parent.name for path in entries[0]["figures"]} == {"docs", "results"}
