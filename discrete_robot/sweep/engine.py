"""The sweep engine on Ray: a local instance with N workers, or an existing cluster (``address``).

Ray and pyarrow are imported here (and in :mod:`.results`) only, when a sweep runs, so nothing else pays for
them. The driver keeps two tasks in flight per worker (one running, one queued behind it, so that a worker never
waits for the driver between tasks): each task runs a batch of cases in a worker process
(:func:`run_cases`: every case under ``budget.limited(case_timeout)``, its exception recorded as a failed row)
and returns its rows encoded as a Parquet part, which the driver writes at once (:mod:`.results`).
Batches follow guided self-scheduling (:func:`batch_size`): a new task takes ceil(remaining / (2 workers))
cases, at most the spec's ``batch``, and at least enough for TASK_S of work at the per-case cost measured so
far (or a tenth of ``batch`` before the first result): cheap cases share a task (Ray's per-task cost, about
9 ms measured on 2 loaded cores, stays a few % of the work) and the last tasks are smaller (no worker waits
long on the tail: a larger TASK_S, 0.2 s, left one worker idle for a third of a 10⁴-case predict-push sweep).

What goes wrong on clusters:

- a case that raises or runs out of its ``case_timeout`` (the core's long loops poll :mod:`discrete_robot.budget`)
  is a failed row with the reason, inside its task;
- a task whose worker dies (``WorkerCrashedError``: a crash, the OOM killer, a lost node) is retried
  ``retries`` times by Ray (``max_retries``); when it still fails, a batch is split and its cases run one per
  task, so only the case that kills its worker fails;
- a task with no result after ``case_timeout`` per case plus START_GRACE, times 1 + ``retries``, times 2 (it
  may wait behind one task, itself bounded so) since it was submitted (code that never polls the budget) is
  cancelled with its worker (``ray.cancel(force=True)``) and split the same way;
- Ctrl-C (or SIGTERM) cancels the tasks in flight, stops the workers and keeps every finished row.
"""

import contextlib
import logging
import math
import os
import pickle
import signal
import socket
import sys
import threading
import time
from collections import deque
from pathlib import Path

from discrete_robot import budget
from discrete_robot.sweep.results import ResultStore, cases_table, encode

#: s a task may take beyond its cases' timeouts before it is cancelled: a fresh worker's imports and kernel loads
START_GRACE = 10.0
#: s of work a task holds at least, when the spec's ``batch`` allows (module docstring)
TASK_S = 0.05
#: s between the driver's checks of deadlines while it waits for results
POLL = 0.5
#: tasks in flight per worker: the one it runs and the one it takes next
QUEUED = 2
#: Ray's default token file (ray/_private/authentication/authentication_token_setup.py, _get_default_token_path)
TOKEN_FILE = Path.home() / ".ray" / "auth_token"


def run_cases(experiment, batch: bytes, case_timeout: float) -> tuple[bytes, int, float]:
    """Run the cases pickled in ``batch`` in this worker process (module docstring): their rows encoded as a
    Parquet part (:func:`.results.encode`), how many failed and the seconds they took. The cases come as one
    pickle: a list argument would be serialized by Ray one object at a time (msgpack, one pickle per case:
    9 ms per 1000 cases in the driver, measured)."""
    cases = pickle.loads(batch)
    outcomes, failed, wall_s = [], 0, 0.0
    for case in cases:
        started = time.perf_counter()
        try:
            with budget.limited(case_timeout, "case_timeout"):
                outcome = ("ok", "", experiment.function(case.inputs, case.seed))
        except Exception as exception:  # any failure of a case is its row's reason; the batch goes on
            outcome = ("failed", f"{type(exception).__name__}: {exception}", {})
            failed += 1
        took = time.perf_counter() - started
        wall_s += took
        outcomes.append((*outcome, took))
    return encode(cases_table(experiment, cases, outcomes, f"{socket.gethostname()}:{os.getpid()}")), failed, wall_s


def batch_size(remaining: int, workers: int, batch: int, case_s: float | None) -> int:
    """Cases of the next task (module docstring): ``remaining`` cases left, ``batch`` the most per task,
    ``case_s`` the mean seconds per case measured so far (None before any result)."""
    least = math.ceil(batch / 10) if case_s is None else math.ceil(TASK_S / max(case_s, 1e-9))
    return min(remaining, batch, max(least, math.ceil(remaining / (QUEUED * workers))))


def start_ray(workers: int | None, address: str | None) -> tuple[object, int, bool]:
    """Ray started locally (loopback only, ``workers`` CPUs) or connected to ``address``; (ray, workers, whether
    this call started the session)."""
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    if address is None:
        # a local instance serves this process only: every Ray socket on 127.0.0.1 (Ray's single-machine mode;
        # read when ray is first imported)
        os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
        # Ray starts workers at niceness 15 (RayConfig worker_niceness, as RAY_worker_niceness): on a busy machine
        # they then get a fraction of what this process would, 2.5x slower measured on 2 shared cores. The
        # workers are the sweep's work (the driver only waits): at the priority the user runs the command with
        os.environ.setdefault("RAY_worker_niceness", "0")
    elif "RAY_AUTH_MODE" not in os.environ and (TOKEN_FILE.exists() or os.environ.get("RAY_AUTH_TOKEN")
                                                 or os.environ.get("RAY_AUTH_TOKEN_PATH")):
        # `ray start` turns token authentication on where a token is at hand (Ray >= 2.59), but ray.init(address)
        # does not: a driver must say RAY_AUTH_MODE=token to join such a cluster (docs.ray.io, "Ray token
        # authentication"); with the cluster's token here, do as `ray start` does
        os.environ["RAY_AUTH_MODE"] = "token"
    import ray

    if ray.is_initialized():    # the caller's Ray session (a notebook, a benchmark): used as it is, kept running
        return ray, workers or max(1, int(ray.cluster_resources().get("CPU", 1))), False
    options = {"include_dashboard": False, "log_to_driver": False, "logging_level": logging.WARNING}
    if address is None:
        workers = workers or os.cpu_count() or 1
        # "local": a new instance even where `ray start` left one running on this machine (which ray.init()
        # would join)
        ray.init(address="local", num_cpus=workers, **options)
    else:
        ray.init(address=address, **options)
        workers = workers or max(1, int(ray.cluster_resources().get("CPU", 1)))
    return ray, workers, True


def _failure_reason(error) -> str:
    import ray

    if isinstance(error, ray.exceptions.WorkerCrashedError):
        return "worker crashed: the worker process running this case died (retried, and died again)"
    return f"{type(error).__name__}: {str(error).strip().splitlines()[0] if str(error).strip() else ''}"


def run_sweep(spec, experiment, cases: list, output_dir: Path, workers: int | None = None,
              address: str | None = None, resume: bool = False, progress: bool = True) -> dict:
    """Run the cases of ``spec`` not already ok in ``output_dir`` (with ``resume``); a summary of the run:
    cases, computed, reused, failed (rows of this spec's cases that failed, this run or before), interrupted,
    engine, address, workers, wall_s, compute_s (from the first task to the last result: wall_s without Ray's
    start, the spec and the results' consolidation) and the results table (``table``, pyarrow). In a Ray session
    the caller started, the sweep runs there and leaves it running."""
    from tqdm import tqdm

    started = time.perf_counter()
    store = ResultStore(output_dir, experiment, resume)
    done = store.done() if resume else set()
    todo = deque(case for case in cases if case.id not in done)
    reused, interrupted, used, compute = len(cases) - len(todo), False, 0, 0.0
    if todo:
        ray, used, own = start_ray(workers, address)
        remote = ray.remote(run_cases).options(num_cpus=1, max_retries=spec.retries)
        bar = tqdm(total=len(todo), desc=f"sweep {experiment.name}", unit="case", file=sys.stderr,
                   disable=not progress, smoothing=0.05)
        main = threading.current_thread() is threading.main_thread()    # signal handlers: main thread only
        previous = signal.signal(signal.SIGTERM, signal.default_int_handler) if main else None
        try:
            # Ray's driver prints the raylet's error reports (a worker died, a task is retried) on sys.stdout
            # (ray/_private/worker.py, listen_error_messages): they go to stderr, stdout keeps the summary
            with contextlib.redirect_stdout(sys.stderr):
                compute = time.perf_counter()
                try:
                    _drive(ray, remote, ray.put(experiment), experiment, spec, todo, used, store, bar)
                finally:
                    compute = time.perf_counter() - compute
        except KeyboardInterrupt:
            interrupted = True
        finally:
            if main:
                signal.signal(signal.SIGTERM, previous)
            bar.close()
            if own:
                ray.shutdown()
    table = store.consolidate()
    ids = {case.id for case in cases}
    statuses = [s for c, s in zip(table.column("case").to_pylist(), table.column("status").to_pylist(),
                                  strict=True) if c in ids]
    return {"experiment": experiment.name, "cases": len(cases), "computed": store.rows, "reused": reused,
            "failed": statuses.count("failed"),
            "interrupted": interrupted, "engine": "ray", "address": address or "local", "workers": used,
            "wall_s": time.perf_counter() - started, "compute_s": compute, "results": store.path, "table": table}


def _drive(ray, remote, experiment_ref, experiment, spec, todo: deque, workers: int, store: ResultStore,
           bar) -> None:
    """Keep QUEUED tasks per worker in flight until every case has a row. On
    KeyboardInterrupt the tasks in flight are cancelled (their workers stopped) and it propagates."""
    isolated: deque = deque()
    in_flight: dict = {}
    failed, measured, measured_s = 0, 0, 0.0

    def submit():
        if isolated:
            batch = [isolated.popleft()]
        else:
            size = batch_size(len(todo), workers, spec.batch, measured_s / measured if measured else None)
            batch = [todo.popleft() for _ in range(size)]
        ref = remote.remote(experiment_ref, pickle.dumps(batch, pickle.HIGHEST_PROTOCOL), spec.case_timeout)
        allowed = QUEUED * (spec.retries + 1) * (spec.case_timeout * len(batch) + START_GRACE)
        in_flight[ref] = (batch, time.monotonic(), allowed)

    def record(part: bytes, rows: int, part_failed: int, wall_s: float):
        nonlocal failed, measured, measured_s
        store.write(part, rows)
        measured, measured_s, failed = measured + rows, measured_s + wall_s, failed + part_failed
        bar.update(rows)
        bar.set_postfix(failed=failed, refresh=False)

    def give_up(batch, submitted: float, reason: str):
        """A batch of one fails with ``reason``; a larger one runs again one case per task."""
        if len(batch) > 1:
            isolated.extend(batch)
            return
        took = time.monotonic() - submitted
        record(encode(cases_table(experiment, batch, [("failed", reason, {}, took)], "")), 1, 1, took)

    try:
        while todo or isolated or in_flight:
            while (todo or isolated) and len(in_flight) < QUEUED * workers:
                submit()
            ready, _ = ray.wait(list(in_flight), num_returns=1, timeout=POLL)
            for ref in ready:
                batch, submitted, _ = in_flight.pop(ref)
                try:
                    part, part_failed, wall_s = ray.get(ref)
                except ray.exceptions.RayError as error:
                    give_up(batch, submitted, _failure_reason(error))
                    continue
                record(part, len(batch), part_failed, wall_s)
            now = time.monotonic()
            for ref, (batch, submitted, allowed) in list(in_flight.items()):
                if now - submitted > allowed:
                    ray.cancel(ref, force=True)
                    del in_flight[ref]
                    give_up(batch, submitted, f"timed out: no result in {allowed:g} s (case_timeout = "
                                              f"{spec.case_timeout:g} s, {START_GRACE:g} s for a worker's start, "
                                              f"{spec.retries} retries); its worker was stopped")
    except KeyboardInterrupt:
        for ref in in_flight:
            ray.cancel(ref, force=True)
        raise
