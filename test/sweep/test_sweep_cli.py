"""The command line around the engine: Ctrl-C stops the workers and keeps what is done (what ``--resume``
then skips), and ``--address`` runs the same sweep on a Ray cluster started separately (``ray start --head``,
loopback only, stopped with its own process group) with the numbers the experiment gives in process."""

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

from discrete_robot.sweep.commands import prepare
from discrete_robot.sweep.results import ResultStore
from sweep_runs import command, wait_for_first_part

pytestmark = [pytest.mark.skipif(importlib.util.find_spec("ray") is None, reason="needs ray (make setup)"),
              pytest.mark.slow]

VENV_BIN = Path(sys.executable).parent
#: unforced swings of the planar arm with the variational integrator (hundreds of µs a step): the 4 short ones
#: (500 steps) come first and finish within seconds; the 4 long ones (10⁷ steps, the most a case may take: over an
#: hour on any machine) cannot finish while the test runs, so Ctrl-C always lands on a sweep in progress
SHORT, LONG = 0.5, 10_000.0
SWINGS = {"experiment": "simulate", "fixed": {"integrator": "variational", "dt": 0.001},
          "grid": {"duration": [SHORT, LONG], "q0": [[0.1 * k, 0.5] for k in range(1, 5)]}}


def running(pid: int) -> bool:
    """Whether process ``pid`` exists and has not ended (a zombie has)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"


def ray_workers(root: int) -> set[int]:
    """The Ray worker processes (``ray::`` titles) among the descendants of process ``root``."""
    parents = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:     # ended meanwhile
            continue
        parents[int(pid)] = int(stat[stat.rindex(")") + 2:].split()[1])
    descendants, frontier = set(), {root}
    while frontier:
        frontier = {pid for pid, parent in parents.items() if parent in frontier} - descendants
        descendants |= frontier
    titles = {}
    for pid in descendants:
        try:
            titles[pid] = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
    return {pid for pid, title in titles.items() if title.startswith(b"ray::")}


def test_ctrl_c_stops_the_workers_and_keeps_what_is_done(tmp_path):
    import pyarrow.parquet as pq

    spec = tmp_path / "swings.yaml"
    spec.write_text(yaml.safe_dump(SWINGS))
    output = tmp_path / "out"
    with open(tmp_path / "stderr", "w") as stderr:
        process = subprocess.Popen(command(spec, output, "--workers", "2"), stdout=subprocess.PIPE, stderr=stderr,
                                   text=True)
        try:
            wait_for_first_part(process, output, tmp_path / "stderr")
            workers = ray_workers(process.pid)
            process.send_signal(signal.SIGINT)
            stdout, _ = process.communicate(timeout=120.0)
        finally:
            if process.poll() is None:
                process.kill()
    # the sweep's own output on any failure: a CI run once ended with status 1 and no summary
    output_of_the_sweep = f"stdout: {stdout[-1000:]!r}\nstderr: {(tmp_path / 'stderr').read_text()[-3000:]}"
    assert process.returncode == 1, output_of_the_sweep
    assert stdout.lstrip().startswith("{"), output_of_the_sweep
    summary = json.loads(stdout)
    assert summary["interrupted"] and summary["success"] is False
    kept = pq.read_table(output / "results.parquet").to_pylist()
    assert len(kept) == summary["computed"]
    assert 1 <= len(kept) <= 4      # some short cases done, no long one
    assert all(row["status"] == "ok" and row["duration"] == SHORT for row in kept)
    assert not list((output / "parts").glob("*"))
    assert all(row["steps"] == round(SHORT / SWINGS["fixed"]["dt"]) for row in kept)
    # --resume skips exactly the kept cases
    _, experiment, _ = prepare(SWINGS)
    assert ResultStore(output, experiment, resume=True).done() == {row["case"] for row in kept}

    # the workers that ran the kept cases were among those found, and none outlives the sweep
    assert {int(row["worker"].split(":")[1]) for row in kept} <= workers
    deadline = time.monotonic() + 120.0
    while any(running(pid) for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not [pid for pid in workers if running(pid)]


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


def test_sweeps_started_together_on_a_machine_without_a_ray_token_both_run(tmp_path):
    """Ray (>= 2.59) turns token authentication on for a new local instance and makes its token where none is at
    hand, but a driver joins without one unless told: the first sweep on a machine was refused by its own local
    instance (InvalidAuthToken), and two starting together each wrote a token of their own. The sweep makes the
    token first, race-free: two sweeps started at once under a home without ~/.ray both finish, on one token that
    only the user can read."""
    spec = tmp_path / "swings.yaml"
    spec.write_text(yaml.safe_dump({"experiment": "simulate", "fixed": {"integrator": "discrete", "dt": 0.001},
                                    "grid": {"duration": [0.01], "q0": [[0.1, 0.5], [0.2, 0.5]]}}))
    home = tmp_path / "home"
    home.mkdir()
    env = {**os.environ, "HOME": str(home)}
    env.pop("RAY_AUTH_MODE", None)
    runs = [subprocess.Popen(command(spec, tmp_path / f"out{k}", "--workers", "1"), env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True) for k in range(2)]
    for run in runs:
        out, err = run.communicate(timeout=600)
        assert run.returncode == 0, err[-3000:]
        assert json.loads(out)["computed"] == 2
    token = home / ".ray" / "auth_token"
    assert len(token.read_text()) == 64 and token.stat().st_mode & 0o077 == 0
    assert list(token.parent.iterdir()) == [token]
