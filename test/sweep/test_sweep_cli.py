"""The command line around the engine: Ctrl-C stops the workers and keeps what is done (then ``--resume``
computes only the rest), and ``--address`` runs the same sweep on a Ray cluster started separately
(``ray start --head``, loopback only, stopped with its own process group) with the numbers the experiment
gives in process."""

import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from discrete_robot.sweep.commands import prepare, sweep

pytestmark = [pytest.mark.skipif(importlib.util.find_spec("ray") is None, reason="needs ray (make setup)"),
              pytest.mark.slow]

VENV_BIN = Path(sys.executable).parent
#: 8 unforced swings of the planar arm, a few seconds each
SWINGS = {"experiment": "simulate", "fixed": {"dt": 0.001, "duration": 60.0},
          "grid": {"q0": [[0.1 * k, 0.5] for k in range(1, 9)]}}


def command(spec: Path, output: Path, *options) -> list[str]:
    return [sys.executable, "-m", "discrete_robot", "sweep", "run", str(spec), "--output-dir", str(output),
            "--json", "--no-progress", *options]


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_ctrl_c_stops_the_workers_and_keeps_what_is_done(tmp_path):
    import pyarrow.parquet as pq

    spec = tmp_path / "swings.yaml"
    spec.write_text(yaml.safe_dump(SWINGS))
    output = tmp_path / "out"
    with open(tmp_path / "stderr", "w") as stderr:
        process = subprocess.Popen(command(spec, output, "--workers", "2"), stdout=subprocess.PIPE, stderr=stderr,
                                   text=True)
        try:
            deadline = time.monotonic() + 300.0
            while not list((output / "parts").glob("*.parquet")) and time.monotonic() < deadline:
                assert process.poll() is None, (tmp_path / "stderr").read_text()[-3000:]
                time.sleep(0.1)
            process.send_signal(signal.SIGINT)
            stdout, _ = process.communicate(timeout=120.0)
        finally:
            if process.poll() is None:
                process.kill()
    summary = json.loads(stdout)
    assert process.returncode == 1 and summary["interrupted"] and summary["success"] is False
    kept = pq.read_table(output / "results.parquet").to_pylist()
    assert 1 <= len(kept) == summary["computed"] < 8
    assert all(row["status"] == "ok" for row in kept)
    assert not list((output / "parts").glob("*"))
    workers = {int(row["worker"].split(":")[1]) for row in kept}
    assert not any(alive(pid) for pid in workers)

    resumed = sweep(SWINGS, output, workers=2, resume=True, progress=False)
    assert (resumed["computed"], resumed["reused"], resumed["failed"]) == (8 - len(kept), len(kept), 0)
    rows = pq.read_table(output / "results.parquet").to_pylist()
    assert len(rows) == 8 and all(row["status"] == "ok" for row in rows)
    # the discrete model conserves T + V: each swing's drift is at rounding level of its energy
    assert all(row["energy_drift"] <= 1e-10 * abs(row["energy_initial"]) for row in rows)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_a_cluster_started_separately_gives_the_in_process_numbers(tmp_path):
    import pyarrow.parquet as pq

    raw = {"experiment": "predict-push", "seed": 4, "samples": 10, "grid": {"pressure": ["uniform", "three_point"]},
           "random": {"contact_fraction": {"uniform": [0.0, 1.0]}, "pusher_angle": {"normal": [0.0, 0.4]}}}
    spec = tmp_path / "push.yaml"
    spec.write_text(yaml.safe_dump(raw))
    env = {**os.environ, "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0", "RAY_USAGE_STATS_ENABLED": "0"}
    port = free_port()
    with open(tmp_path / "head.log", "w") as log:
        head = subprocess.Popen([str(VENV_BIN / "ray"), "start", "--head", "--port", str(port), "--num-cpus", "2",
                                 "--include-dashboard=false", "--block"], env=env, stdout=log,
                                stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + 180.0
        while "Ray runtime started" not in (tmp_path / "head.log").read_text():
            assert head.poll() is None and time.monotonic() < deadline, (tmp_path / "head.log").read_text()[-3000:]
            time.sleep(0.5)
        result = subprocess.run(command(spec, tmp_path / "out", "--address", f"127.0.0.1:{port}"), env=env,
                                capture_output=True, text=True, timeout=600)
    finally:
        os.killpg(head.pid, signal.SIGTERM)     # the head and everything it started: its own process group
        try:
            head.wait(timeout=60.0)
        except subprocess.TimeoutExpired:
            os.killpg(head.pid, signal.SIGKILL)
            head.wait()
    assert result.returncode == 0, result.stderr[-3000:]
    summary = json.loads(result.stdout)
    assert (summary["address"], summary["workers"], summary["computed"]) == (f"127.0.0.1:{port}", 2, 20)
    _, experiment, cases = prepare(raw)
    rows = {row["case"]: row for row in pq.read_table(tmp_path / "out" / "results.parquet").to_pylist()}
    for case in cases:
        expected = experiment.function(case.inputs, case.seed)
        assert {name: rows[case.id][name] for name in expected} == expected
