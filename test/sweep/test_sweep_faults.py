"""What happens on clusters, on a local Ray with 2 workers: a case that raises, one that kills its worker (every
time, or once), one that overruns its ``case_timeout`` while polling the budget and one that never returns.
Each fails (or, killed once, is retried) alone: the other cases of its batch and of the sweep are computed and
equal what the experiment gives in process from the case's seed."""

import contextlib
import importlib.util
import os
import signal
import time
from pathlib import Path

import pytest

from discrete_robot import budget
from discrete_robot.sweep import engine
from discrete_robot.sweep.commands import sweep
from discrete_robot.sweep.experiments import Experiment, Metric
from discrete_robot.sweep.spec import Input

# not importorskip: importing ray here would be before the engine's loopback setting
pytestmark = pytest.mark.skipif(importlib.util.find_spec("ray") is None, reason="needs ray (make setup)")


def probe_experiment(actions: tuple, markers: Path) -> Experiment:
    """A test-only experiment: case ``index`` does actions[index]. Defined in a function, so that Ray's
    cloudpickle ships it to the workers by value."""

    def probe(inputs: dict, seed: int) -> dict:
        action = actions[inputs["index"]]
        if action == "raise":
            raise ValueError("refused on purpose")
        if action == "crash" or (action == "crash_once" and not (markers / str(inputs["index"])).exists()):
            (markers / str(inputs["index"])).write_text(str(os.getpid()))     # the worker this case kills
            os._exit(3)
        while action == "stall":
            budget.check()
            time.sleep(0.01)
        if action == "hang":
            time.sleep(3600.0)
        if action == "nap":
            time.sleep(0.5)
        return {"value": seed % 1000 / 1000.0, "pid": os.getpid()}

    return Experiment("probe", "fault injection", (Input("index", "integer", 0, low=0, high=len(actions) - 1),),
                      (Metric("value", "number"), Metric("pid", "integer")), probe, batch=4)


def run_probe(tmp_path: Path, actions: tuple, **spec) -> tuple[dict, dict]:
    markers = tmp_path / "markers"
    markers.mkdir()
    experiment = probe_experiment(actions, markers)
    raw = {"experiment": "probe", "seed": 7, "grid": {"index": list(range(len(actions)))}, **spec}
    summary = sweep(raw, tmp_path / "out", workers=2, progress=False, experiments={"probe": experiment})
    import pyarrow.parquet as pq

    rows = {row["index"]: row for row in pq.read_table(tmp_path / "out" / "results.parquet").to_pylist()}
    assert summary["cases"] == summary["computed"] == len(rows) == len(actions)
    for row in rows.values():
        if row["status"] == "ok":
            assert row["value"] == experiment.function({"index": 0}, row["seed"])["value"]
    return summary, rows


def test_a_crash_fails_only_its_case_and_a_killed_worker_is_retried(tmp_path):
    """Batches of two: the crashing case's batch is retried, then split; its batch-mate killed once by its own
    case is retried and computed, in another worker process."""
    actions = ("ok", "raise", "crash", "crash_once", "ok", "ok")
    summary, rows = run_probe(tmp_path, actions, batch=2)
    assert [rows[i]["status"] for i in range(len(actions))] == ["ok", "failed", "failed", "ok", "ok", "ok"]
    assert rows[1]["error"] == "ValueError: refused on purpose"
    assert rows[2]["error"].startswith("worker crashed")
    killed = int((tmp_path / "markers" / "3").read_text())     # case 3 did kill its first worker
    assert rows[3]["pid"] != killed                            # and was computed by another
    assert summary["failed"] == 2 and summary["workers"] == 2


def test_a_case_past_its_timeout_fails_alone(tmp_path, monkeypatch):
    """One case polls the budget past case_timeout (stopped in its task), one never returns (its task is
    cancelled with the worker after 2 (case_timeout + START_GRACE)): both fail with the reason, the others run."""
    monkeypatch.setattr(engine, "START_GRACE", 3.0)
    actions = ("ok", "stall", "hang", "ok")
    summary, rows = run_probe(tmp_path, actions, case_timeout=3.0, batch=1, retries=0)
    assert [rows[i]["status"] for i in range(len(actions))] == ["ok", "failed", "failed", "ok"]
    assert rows[1]["error"] == "BudgetExceededError: not finished within case_timeout = 3 s of computation"
    assert rows[2]["error"].startswith("timed out: no result in 12 s")
    assert summary["failed"] == 2


def test_ctrl_c_stops_the_sweep_even_when_rays_wait_swallows_it(tmp_path, monkeypatch):
    """Ray's wait runs Python's signal handlers itself, and may drop the KeyboardInterrupt they raise: a sweep
    beside another on 2 loaded cores ignored Ctrl-C for minutes. Here a Ctrl-C comes during the first wait, which
    swallows the KeyboardInterrupt as Ray may: the sweep still stops, with most of its 8 half-second cases not
    run."""
    start_ray = engine.start_ray

    def start_ray_with_a_swallowing_wait(*args):
        ray, workers, own = start_ray(*args)
        wait, interrupted = ray.wait, []

        def swallowing_wait(*args, **kwargs):
            if not interrupted:
                interrupted.append(True)
                with contextlib.suppress(KeyboardInterrupt):
                    signal.raise_signal(signal.SIGINT)      # its handler runs here, in the main thread
            return wait(*args, **kwargs)

        monkeypatch.setattr(ray, "wait", swallowing_wait)
        return ray, workers, own

    monkeypatch.setattr(engine, "start_ray", start_ray_with_a_swallowing_wait)
    experiment = probe_experiment(("nap",) * 8, tmp_path)
    raw = {"experiment": "probe", "seed": 7, "grid": {"index": list(range(8))}, "batch": 1}
    summary = sweep(raw, tmp_path / "out", workers=2, progress=False, experiments={"probe": experiment})
    assert summary["interrupted"] and summary["computed"] < 8
