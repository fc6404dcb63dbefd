"""The engine's faults as the command meets them (issue 41), real CLI runs: a local instance that loses its
raylet or its GCS server ends the sweep with its summary (what was kept, and why) and leaves no Ray process
running; ``--workers`` past the cores is capped with a note; a malformed ``--address`` or one where nothing
listens is one ``error:`` line with status 2, within seconds; a port that answers but is no Ray cluster is
given up within 30 s, and Ctrl-C while connecting to it is obeyed within 2 s. Only loopback addresses and
malformed strings are used: nothing is contacted off this machine."""

import importlib.util
import json
import os
import signal
import socket
import subprocess
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml

from discrete_robot.sweep.engine import local_cores
from discrete_robot.sweep.results import PARTS
from sweep_runs import command, wait_for_first_part

pytestmark = [pytest.mark.skipif(importlib.util.find_spec("ray") is None, reason="needs ray (make setup)"),
              pytest.mark.slow]

#: 2 swings of the planar arm that take 0.5 s of simulated time, 2 that take 10⁴ s (hours): the sweep is still
#: running, with rows kept, when its Ray instance is hurt
SWINGS = {"experiment": "simulate", "fixed": {"integrator": "variational", "dt": 0.001},
          "grid": {"duration": [0.5, 10_000.0], "q0": [[0.1, 0.5], [0.2, 0.5]]}}
PUSHES = {"experiment": "predict-push", "samples": 2}


def write_spec(tmp_path: Path, raw: dict) -> Path:
    spec = tmp_path / "spec.yaml"
    spec.write_text(yaml.safe_dump(raw))
    return spec


def descendants(root: int) -> dict[int, str]:
    """Process id -> command name of every descendant of ``root`` now (from /proc)."""
    parents, names = {}, {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            continue
        parents[int(pid)] = int(stat[stat.rindex(")") + 2:].split()[1])
        names[int(pid)] = stat[stat.index("(") + 1:stat.rindex(")")]
    found, frontier = set(), {root}
    while frontier:
        frontier = {pid for pid, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return {pid: names[pid] for pid in found}


def running(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] not in "ZX"


@pytest.mark.parametrize("victim", ["raylet", "gcs_server"])
def test_a_lost_raylet_or_gcs_ends_the_sweep_with_its_summary_and_no_ray_process_left(tmp_path, victim):
    spec = write_spec(tmp_path, SWINGS)
    output = tmp_path / "out"
    with open(tmp_path / "stderr", "w") as stderr:
        process = subprocess.Popen(command(spec, output, "--workers", "1000"), stdout=subprocess.PIPE,
                                   stderr=stderr, text=True)
        try:
            wait_for_first_part(process, output, tmp_path / "stderr")
            ray_processes = descendants(process.pid)
            (target,) = [pid for pid, name in ray_processes.items() if name == victim]
            os.kill(target, signal.SIGKILL)
            stdout, _ = process.communicate(timeout=120.0)
        finally:
            if process.poll() is None:
                process.kill()
    log = (tmp_path / "stderr").read_text()
    assert process.returncode == 1, log[-3000:]
    summary = json.loads(stdout)
    assert summary["lost"] == f"the local Ray instance lost its {victim} (pid {target})"
    assert summary["success"] is False and summary["message"].startswith(summary["lost"] + ": the finished cases")
    # --workers 1000 on this machine: one worker per core, and a note saying so
    cores = local_cores()
    assert summary["workers"] == cores
    assert f"note: --workers 1000 capped at {cores}, the cores of this machine" in log
    kept = pq.read_table(output / "results.parquet").to_pylist()
    assert 1 <= len(kept) == summary["computed"] <= 2
    assert all(row["status"] == "ok" and row["duration"] == 0.5 for row in kept)
    # every Ray process the sweep had when its instance was hurt has ended with the command
    assert [name for pid, name in ray_processes.items() if running(pid)] == []


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.mark.parametrize("address, reason", [
    ("10.0.0.1", "--address: expected HOST:PORT of a Ray cluster's head (e.g. 10.0.0.1:6379), got '10.0.0.1'"),
    ("127.0.0.1:99999", "--address: expected HOST:PORT"),
    ("http://127.0.0.1:6379", "--address: expected HOST:PORT"),
    ("127.0.0.1:6379; rm -rf /", "--address: expected HOST:PORT"),
    ("", "--address: expected HOST:PORT"),
    ("127.0.0.1:{port}", "--address 127.0.0.1:{port}: cannot connect (Connection refused): is `ray start --head "
                         "--port {port}` running there?"),
], ids=["no-port", "port-range", "url", "shell", "empty", "nothing-listening"])
def test_an_address_that_is_malformed_or_where_nothing_listens_is_one_line(tmp_path, address, reason):
    port = free_port()
    started = time.monotonic()
    result = subprocess.run(command(write_spec(tmp_path, PUSHES), tmp_path / "out", "--address",
                                    address.format(port=port)), capture_output=True, text=True, timeout=120)
    took = time.monotonic() - started
    assert result.returncode == 2, result.stderr[-3000:]
    lines = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr[-3000:]
    assert lines[0].startswith("error: " + reason.format(port=port)), lines[0]
    assert took < 30.0
    assert not list((tmp_path / "out" / PARTS).glob("*"))


def interrupted(process: subprocess.Popen, after: float) -> tuple[dict, float]:
    """SIGINT to the running ``process`` ``after`` s from now: its summary (status 1, no traceback) and the
    seconds from the signal to its end."""
    try:
        time.sleep(after)
        assert process.poll() is None
        process.send_signal(signal.SIGINT)
        signalled = time.monotonic()
        stdout, stderr = process.communicate(timeout=60.0)
        took = time.monotonic() - signalled
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 1 and "Traceback" not in stderr, stderr[-3000:]
    return json.loads(stdout), took


def test_a_port_that_is_no_ray_cluster_is_given_up_within_30_s_and_ctrl_c_is_obeyed_while_connecting(tmp_path):
    """A loopback listener that accepts connections and never speaks: ``ray.init`` alone retried for minutes
    and ignored Ctrl-C. Ctrl-C once the command has connected: it ends within 2 s, interrupted, nothing
    computed; left alone: one error line within 30 s."""
    spec = write_spec(tmp_path, PUSHES)
    with socket.create_server(("127.0.0.1", 0)) as silent:
        address = f"127.0.0.1:{silent.getsockname()[1]}"
        silent.settimeout(120.0)
        process = subprocess.Popen(command(spec, tmp_path / "interrupted", "--address", address),
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        connection, _ = silent.accept()     # the command's TCP check: it is connecting now
        connection.close()
        summary, took = interrupted(process, 1.0)     # 1 s into ray.init
        assert summary["interrupted"] and summary["computed"] == 0 and summary["success"] is False
        assert took < 2.0

        started = time.monotonic()
        result = subprocess.run(command(spec, tmp_path / "alone", "--address", address), capture_output=True,
                                text=True, timeout=120)
        took = time.monotonic() - started
    lines = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert result.returncode == 2 and len(lines) == 1 and "Traceback" not in result.stderr, result.stderr[-3000:]
    assert lines[0].startswith(f"error: --address {address}: ")
    assert took < 30.0


def test_ctrl_c_while_a_million_cases_are_built_ends_the_command_within_2_s(tmp_path):
    """The cases of 10⁶ samples take tens of seconds to build, before any folder or Ray: Ctrl-C there is obeyed
    at once, with the interrupted summary (status 1), no traceback and nothing written."""
    spec = write_spec(tmp_path, {"experiment": "predict-push", "samples": 1_000_000,
                                 "random": {"contact_fraction": {"uniform": [0.0, 1.0]}}})
    process = subprocess.Popen(command(spec, tmp_path / "out"), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True)
    summary, took = interrupted(process, 8.0)    # imports and the spec's checks take 1-3 s; the cases, over 20
    assert summary == {"success": False, "interrupted": True,
                       "message": "interrupted: the finished cases are kept; --resume computes the others"}
    assert took < 2.0 and not (tmp_path / "out").exists()


def test_ctrl_c_while_the_local_ray_instance_starts_gives_the_summary_and_leaves_no_ray_process(tmp_path):
    """SIGINT once the local instance's GCS server runs (Ray's start goes on for seconds: the raylet, then the
    driver's connection): the interrupted summary (status 1, no traceback), nothing computed, and every process
    the start left is stopped. The instance starts in a process of its own, so the driver serves the signal at
    once; the bound on the time only ends a hang (the exit's time is measured apart, not asserted)."""
    spec = write_spec(tmp_path, SWINGS)
    process = subprocess.Popen(command(spec, tmp_path / "out", "--workers", "2"), stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    seen: dict[int, str] = {}
    deadline = time.monotonic() + 600.0     # only so that a hang ends the test: imports take seconds when loaded
    while "gcs_server" not in seen.values():
        assert process.poll() is None and time.monotonic() < deadline
        seen.update(descendants(process.pid))
        time.sleep(0.02)
    gcs = next(pid for pid, name in seen.items() if name == "gcs_server")
    session = next(arg for arg in Path(f"/proc/{gcs}/cmdline").read_bytes().split(b"\0")
                   if arg.startswith(b"--session-name="))
    summary, took = interrupted(process, 0.0)
    assert summary["interrupted"] and summary["computed"] == 0 and summary["success"] is False
    assert took < 10.0
    # what the start went on to launch is no descendant once its parent is stopped: found by its session
    assert not [f"{pid} {name}" for pid, name in seen.items() if running(pid)]
    assert not [pid for pid in session_processes(session) if running(pid)]


def session_processes(session: bytes) -> list[int]:
    """The processes whose command line holds ``session`` (a Ray instance's ``--session-name=...``)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if session in Path(f"/proc/{pid}/cmdline").read_bytes():
                found.append(int(pid))
        except OSError:
            continue
    return found
