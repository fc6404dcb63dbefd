"""The sweep engine on Ray: a local instance with N workers, or an existing cluster (``address``).

Ray and pyarrow are imported here (and in :mod:`.results`) only, when a sweep runs, so nothing else pays for
them. The driver keeps two tasks in flight per worker (one running, one queued behind it in Ray, so that a
worker's next task never waits for the driver's Python loop; Ray's own round trip between tasks, 2-11 ms on 2
busy cores, remains): each task runs a batch of cases in a worker process (:func:`run_task`,
:func:`run_cases`: every case with a budget of ``case_timeout``, its exception recorded as a failed row) and
returns its rows encoded as an Arrow part, which the driver writes at once (:mod:`.results`).
Batches follow guided self-scheduling (:func:`batch_size`; Polychronopoulos and Kuck 1987): a new task takes
ceil(remaining / workers) cases, at most the spec's ``batch``, and at least enough for TASK_S of work at the
per-case cost measured so far (or a tenth of ``batch`` before the first result): cheap cases share a task (Ray's
per-task cost, about 9 ms measured on 2 loaded cores, stays a few % of the work) and the last tasks are smaller
(no worker waits long on the tail: a larger TASK_S, 0.2 s, left one worker idle for a third of a 10⁴-case
predict-push sweep). Factoring's ceil(remaining / (2 workers)), used before, bounds the largest task at a
quarter of the cases instead of a half (for a worker slowed mid-sweep), but made 9-10 tasks of 10⁴ predict-push
cases on 2 workers instead of 5, each one a round trip through the driver and raylet on cores the workers use:
the per-worker throughput ratio was 0.72 against 0.75 here (medians of 20 interleaved pairs).

What goes wrong on clusters:

- a case that raises or runs out of its ``case_timeout`` (the core's long loops poll :mod:`discrete_robot.budget`)
  is a failed row with the reason, inside its task;
- a task whose worker dies (``WorkerCrashedError``: a crash, the OOM killer, a lost node) is retried
  ``retries`` times by Ray (``max_retries``); when it still fails, a batch is split and its cases run one per
  task, so only the case that kills its worker fails;
- a task with no result after ``case_timeout`` per case plus START_GRACE, times 1 + ``retries``, times 2 (it
  may wait behind one task, itself bounded so) since it was submitted (code that never polls the budget) is
  cancelled with its worker (``ray.cancel(force=True)``) and split the same way;
- Ctrl-C (or SIGTERM) cancels the tasks in flight, stops the workers and keeps every finished row. While the driver
  waits on Ray, the signal only sets a flag, which the driver checks after every wait (at most POLL): Ray's wait
  runs Python's signal handlers itself, and the KeyboardInterrupt they raised there could be lost (a sweep ignored
  Ctrl-C for minutes in 1 of 4 runs beside another sweep on 2 loaded cores). While Ray starts, the handler raises
  KeyboardInterrupt as well, and what the start left is stopped; a signal Ray's start kept from raising is found by
  the flag when it returns. Ray's start holds the interpreter (the GIL) in a C++ wait for its raylet, up to 2-3 s on
  2 loaded cores, when no handler runs (in a thread of its own it held the waiting main thread as well): the local
  instance starts in a process of its own (:mod:`.local_head`), which the driver waits for in steps of 0.1 s and
  then joins as it joins a cluster (below), so that Ctrl-C is served at once in every phase. The handlers stay
  the sweep's until every process is stopped (``ray.init`` replaces the SIGTERM handler with Ray's, which ends the
  driver with status 1 and no summary; Python's default one would turn a second Ctrl-C into a KeyboardInterrupt in
  the middle of the teardown), and a task Ray cannot cancel or a failing ``ray.shutdown`` does not replace the
  summary;
- a local instance whose raylet or GCS server dies (the OOM killer, a kill) ends the sweep at the driver's next
  check (at most POLL): Ray's own detection takes 15 s and then ends the driver process with status 1, before it
  can keep or report anything (and a dead GCS left Ray's agents running for minutes). The rows finished are kept
  and the summary names the process lost; every process of the instance still running is then stopped
  (:class:`LocalProcesses`), so none outlives the command;
- ``--address`` is checked before Ray is asked: HOST:PORT, a TCP connection within CONNECT_S, then ``ray.init``
  within CONNECT_S (a port that answers but is no Ray GCS made ``ray.init`` retry for minutes), both in a thread
  the driver waits on in steps of 0.1 s, so Ctrl-C is obeyed while connecting (``ray.init`` blocks in C++, where
  Python runs no signal handler). A local instance runs at most one worker per core (``--workers`` above is
  capped, with a note on stderr: 1000 workers on 2 cores took 7.4 GB).
"""

import contextlib
import ctypes
import functools
import gc
import logging
import math
import operator
import os
import pickle
import re
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path

from discrete_robot import budget
from discrete_robot.errors import InputError
from discrete_robot.sweep import local_head
from discrete_robot.sweep.results import FolderError, Outcomes, ResultStore, encode, rows_table
from discrete_robot.sweep.spec import spec_digest, spec_text

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
#: s for each step of joining a cluster (module docstring): the TCP connection, then ray.init
CONNECT_S = 12.0
#: HOST:PORT of --address: a host name, an IPv4 address or an IPv6 one in brackets
ADDRESS = re.compile(r"(?P<host>[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\]):(?P<port>[0-9]{1,5})")
#: s a process of a local instance has to end on SIGTERM after Ctrl-C, before SIGKILL (Ctrl-C is obeyed within 2 s):
#: the instance's process and its agents (Ray's shutdown) and at times the raylet outlived 0.3 s in every run
#: measured, so a longer wait only delayed the SIGKILL
STOP_GRACE = 0.1
#: the processes of a local instance the driver watches: the sweep cannot go on without them
VITAL = ("raylet", "gcs_server")
#: prctl(2) option: orphaned descendants are reparented to this process rather than to init
PR_SET_CHILD_SUBREAPER = 36
#: s the process of a local instance has to stop it (Ray's shutdown) once its session is over, before SIGKILL
HEAD_END_S = 30.0

#: the process of the local instance this process started last (:mod:`.local_head`): like Ray's session, which
#: runs on it, one per process; the instance runs while its stdin is open
_head: subprocess.Popen | None = None


class EngineLostError(Exception):
    """A process the local Ray instance needs has ended (module docstring); the message names it."""


def _process_start(pid: int) -> tuple[str, int] | None:
    """(command name, start time in clock ticks) of a running process, None once it has ended (a zombie has)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat[stat.rindex(")") + 2:].split()
    return None if fields[0] in "ZX" else (stat[stat.index("(") + 1:stat.rindex(")")], int(fields[19]))


def _adopt_orphans(on: bool) -> None:
    """Whether this process adopts its descendants whose parent ends (a child subreaper, Linux >= 3.4), so that
    they stay its descendants; nothing where prctl is missing."""
    with contextlib.suppress(AttributeError, OSError):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, int(on), 0, 0, 0)


class LocalProcesses:
    """The processes a local Ray instance started under this driver (every descendant of this process, taken
    when asked: the instance's process (:mod:`.local_head`) starts its GCS server, raylet, agents and monitors,
    the raylet its workers), each known by pid and start time (a pid reused later is not ours). Until
    :meth:`stop`, this process adopts those whose parent ends, so that they stay its descendants: a worker busy
    in a compiled loop outlives its raylet (lost, or ended with the instance's process), and one that had not
    been seen before was left running."""

    def __init__(self):
        self.known: dict[int, tuple[str, int]] = {}
        _adopt_orphans(True)

    def snapshot(self) -> None:
        parents: dict[int, int] = {}
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                with contextlib.suppress(OSError, ValueError, IndexError):
                    stat = Path(f"/proc/{entry}/stat").read_text()
                    parents[int(entry)] = int(stat[stat.rindex(")") + 2:].split()[1])
        frontier, found = {os.getpid()}, set()
        while frontier:
            frontier = {pid for pid, parent in parents.items() if parent in frontier} - found
            found |= frontier
        for pid in found:
            start = _process_start(pid)
            if start is not None:
                self.known.setdefault(pid, start)

    def running(self) -> list[int]:
        """The known processes still running, by start time: a worker's name changes with its task's."""
        return [pid for pid, (_, start) in self.known.items() if (_process_start(pid) or ("", None))[1] == start]

    def lost(self) -> str | None:
        """The reason the instance cannot go on: a VITAL process of it has ended; None while they run."""
        running = self.running()
        for pid, (name, _) in self.known.items():
            if name in VITAL and pid not in running:
                return f"the local Ray instance lost its {name} (pid {pid})"
        return None

    def stop(self, grace: float = 2.0) -> None:
        """SIGTERM every process still running, SIGKILL those alive after ``grace`` s; reap them."""
        for number in (signal.SIGTERM, signal.SIGKILL):
            for pid in self.running():
                with contextlib.suppress(OSError):
                    os.kill(pid, number)
            deadline = time.monotonic() + grace
            while self.running() and time.monotonic() < deadline:
                time.sleep(0.05)
        for pid in self.known:     # those adopted are this process's children, to reap
            with contextlib.suppress(OSError):
                os.waitpid(pid, os.WNOHANG)
        _adopt_orphans(False)


def local_cores() -> int:
    """The cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


class _ThreadNote(logging.Filter):
    """Leaves out Ray's warning that ``ray.init`` in a thread sets no SIGTERM handler: the sweep sets its own
    (run_sweep)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith("SIGTERM handler is not set")


THREAD_NOTE = _ThreadNote()


def _connect(address: str, options: dict) -> str | None:
    """``ray.init(address)`` after a TCP connection to it, each step within CONNECT_S, in a thread the driver
    waits on in steps of 0.1 s (module docstring); None once joined, else the reason."""
    import ray

    logging.getLogger("ray._private.worker").addFilter(THREAD_NOTE)     # a filter already there is not added again
    host, port = address.rsplit(":", 1)
    outcome: dict = {}

    def connect():
        try:
            with socket.create_connection((host.strip("[]"), int(port)), timeout=CONNECT_S):
                pass
        except OSError as error:
            outcome["error"] = f"cannot connect ({error.strerror or error or 'timed out'})"
            return
        outcome["connected"] = time.monotonic()
        try:
            ray.init(address=address, **options)
            outcome["joined"] = True
        except Exception as error:  # Ray's own reasons (a version mismatch, no GCS there)
            outcome["error"] = f"{type(error).__name__}: {str(error).strip().splitlines()[0] if str(error) else ''}"

    started = time.monotonic()
    thread = threading.Thread(target=connect, name="sweep-connect", daemon=True)
    thread.start()
    # each step its own CONNECT_S: ray.init's from the connection on (a silent port then fails in CONNECT_S, not
    # twice that: with the start-up, 2 x 12 s left a loaded machine past the 30 s an unreachable address is given)
    while thread.is_alive() and time.monotonic() < outcome.get("connected", started + 0.5) + CONNECT_S:
        thread.join(0.1)     # the main thread runs Python's signal handlers between joins: Ctrl-C is obeyed
    if "joined" in outcome:
        return None
    return outcome.get("error", f"no Ray cluster answered within {CONNECT_S:g} s of the connection")


def _join(address: str, options: dict) -> None:
    """:func:`_connect` to ``address`` once checked; InputError naming it when the address is malformed or
    nothing answers."""
    match = ADDRESS.fullmatch(address)
    if match is None or not 1 <= int(match["port"]) <= 65535:
        raise InputError(f"--address: expected HOST:PORT of a Ray cluster's head (e.g. 10.0.0.1:6379), got "
                         f"{address!r}")
    reason = _connect(address, options)
    if reason is not None:
        raise InputError(f"--address {address}: {reason}: is `ray start --head --port {match['port']}` running "
                         "there?")


def _start_local(workers: int, options: dict) -> None:
    """A local instance of ``workers`` CPUs in a process of its own (:mod:`.local_head`), joined as a cluster
    is; EngineLostError when it does not start or does not take the driver."""
    global _head
    _end_head()
    _head = local_head.start(workers)
    try:
        address = local_head.address(_head)
    except local_head.HeadError as error:
        raise EngineLostError(str(error)) from None
    reason = _connect(address, options)
    if reason is not None:
        raise EngineLostError(f"the local Ray instance at {address} did not take the driver: {reason}")


def _end_head() -> None:
    """End the process of the local instance started last (its Ray session is over): its stdin closed, it
    stops its instance (Ray's shutdown), killed if still running after HEAD_END_S."""
    global _head
    if _head is None:
        return
    _head.stdin.close()
    try:
        _head.wait(HEAD_END_S)
    except subprocess.TimeoutExpired:
        _head.kill()
        _head.wait()
    _head = None
@dataclass(frozen=True)
class Batch:
    """The cases of one task as they travel (one pickle): ids, samples, seeds, the inputs every case of the
    batch shares (``shared``, sent once per task) and, per case, the values of the ``varying`` ones. Cheap
    cases pay per case for what a task carries: unpickling case objects and rebuilding the input columns from
    them cost the worker about 3.5 µs a predict-push case (of 65), rebuilding each case's inputs from these
    rows about 1.4 (measured in process); the pickle is 43 % of the case objects'."""

    ids: list
    samples: list
    seeds: list
    shared: dict
    varying: tuple
    values: list

    @classmethod
    def of(cls, cases: list) -> "Batch":
        """``cases`` with the inputs they all hold as the very same object (the spec's fixed values and the
        defaults; a resolved value equal by chance counts as varying, which costs only its place in each row)
        left out of their rows. Found per batch, so that the first task leaves before the driver has looked at
        every case (4 ms of 10⁴ predict-push cases, while the workers wait)."""
        first = cases[0].inputs
        shared = {name: value for name, value in first.items() if all(c.inputs[name] is value for c in cases)}
        varying = tuple(name for name in first if name not in shared)
        row = operator.itemgetter(*varying) if varying else (lambda inputs: ())
        values = [row(c.inputs) for c in cases] if len(varying) != 1 else [(row(c.inputs),) for c in cases]
        return cls([c.id for c in cases], [c.sample for c in cases], [c.seed for c in cases], shared, varying,
                   values)

    def table(self, experiment, outcomes: Outcomes, worker: str):
        """The rows of these cases with their ``outcomes`` (:func:`.results.rows_table`)."""
        varying = dict(zip(self.varying, (list(column) for column in zip(*self.values, strict=True)), strict=True))
        return rows_table(experiment, self.ids, self.samples, self.seeds, self.shared, varying, outcomes, worker)


def run_cases(experiment, batch: bytes, case_timeout: float) -> tuple[bytes, int, float]:
    """Run the cases of a pickled :class:`Batch` in this worker process (module docstring): their rows encoded
    as an Arrow part (:func:`.results.encode`), how many failed and the seconds they took. The cases come as
    one pickle: a list argument would be serialized by Ray one object at a time (msgpack, one pickle per case:
    9 ms per 1000 cases in the driver, measured).

    What a cheap case pays beside its experiment is kept small (8.5 µs of a 60 µs predict-push case in process
    before, measured with bench_sweep's cases): one budget for the task, renewed per case, instead of a budget
    entered per case; one clock reading per case (a case's wall time runs from the previous one's end, so it
    includes building its inputs); the outcome's columns filled as the cases end."""
    batch = pickle.loads(batch)
    function, shared, varying = experiment.function, batch.shared, batch.varying
    outcomes = Outcomes([], [], [], [])
    with budget.limited(case_timeout, "case_timeout") as limit:
        clock = started = time.perf_counter()
        for row, seed in zip(batch.values, batch.seeds, strict=True):
            inputs = shared.copy()
            inputs.update(zip(varying, row, strict=True))
            limit.renew()
            try:
                outcomes.metrics.append(function(inputs, seed))
                outcomes.status.append("ok")
                outcomes.error.append("")
            except Exception as exception:  # any failure of a case is its row's reason; the batch goes on
                outcomes.metrics.append({})
                outcomes.status.append("failed")
                outcomes.error.append(f"{type(exception).__name__}: {exception}")
            now = time.perf_counter()
            outcomes.wall_s.append(now - clock)
            clock = now
    worker = f"{socket.gethostname()}:{os.getpid()}"
    return (encode(batch.table(experiment, outcomes, worker)), outcomes.status.count("failed"),
            clock - started)


#: whether this worker process has frozen the heap its start and its first task left (:func:`run_task`)
_heap_frozen = False


def run_task(experiment, batch: bytes, case_timeout: float) -> tuple[bytes, int, float]:
    """:func:`run_cases` as a Ray worker process runs it: the objects its start left, and those its first task
    added, are frozen out of Python's cyclic garbage collector (``gc.freeze``). A full collection scans every
    object the collector tracks: in a worker, about 155 000 after Ray's, pyarrow's and the experiment's imports,
    70 ms a collection, which each worker paid once in its first 10⁴-case predict-push sweep (0.45 s on 2
    workers) and then about every 40 000 cases; frozen, the largest collection in eight such sweeps took under
    2 ms. Freezing at the first task's start spares that task the full scan its imports would bring; freezing
    again at its end takes in the modules the experiment imports in its first case. The price: cyclic garbage
    alive at those two moments is never freed, a bounded amount, once; later tasks' garbage is collected as
    usual."""
    global _heap_frozen
    first = not _heap_frozen
    if first:
        gc.freeze()
    result = run_cases(experiment, batch, case_timeout)
    if first:
        gc.freeze()
        _heap_frozen = True
    return result


def batch_size(remaining: int, workers: int, batch: int, case_s: float | None) -> int:
    """Cases of the next task (module docstring): ``remaining`` cases left, ``batch`` the most per task,
    ``case_s`` the mean seconds per case measured so far (None before any result)."""
    least = math.ceil(batch / 10) if case_s is None else math.ceil(TASK_S / max(case_s, 1e-9))
    return min(remaining, batch, max(least, math.ceil(remaining / workers)))


def _share_token() -> None:
    """Ray's default token file, made where there is none, before a local instance starts: left to the instance,
    it was made there after the driver had decided to join without a token, and every sweep's first local
    instance on a machine refused its driver (InvalidAuthToken); two instances starting at once each wrote their
    own. The token is written to a file of its own and linked into place, so the first one made is everyone's
    (``secrets.token_hex(32)``, as Ray's own ``generate_new_authentication_token``; readable by the user only)."""
    if TOKEN_FILE.exists():
        return
    try:
        TOKEN_FILE.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", dir=TOKEN_FILE.parent, prefix=".auth_token.", delete=False) as made:
            made.write(secrets.token_hex(32))
    except OSError:     # a home it cannot write: Ray's own start then says why
        return
    try:
        os.link(made.name, TOKEN_FILE)
    except OSError:     # another sweep's came first (FileExistsError), or no hard links here: Ray's own then
        pass
    finally:
        os.unlink(made.name)


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
    if "RAY_AUTH_MODE" not in os.environ:
        given = os.environ.get("RAY_AUTH_TOKEN") or os.environ.get("RAY_AUTH_TOKEN_PATH")
        if address is None and not given:
            _share_token()
        if given or TOKEN_FILE.exists():
            # `ray start` and a local instance's start turn token authentication on (Ray >= 2.59; a new local
            # instance makes the token where none is at hand), but ray.init(address) does not: a driver must say
            # RAY_AUTH_MODE=token to join such a cluster (docs.ray.io, "Ray token authentication"), the local
            # instance (.local_head) as well
            os.environ["RAY_AUTH_MODE"] = "token"
    import ray

    if ray.is_initialized():    # the caller's Ray session (a notebook, a benchmark): used as it is, kept running
        return ray, workers or max(1, int(ray.cluster_resources().get("CPU", 1))), False
    options = {"include_dashboard": False, "log_to_driver": False, "logging_level": logging.WARNING}
    if address is None:
        cores = local_cores()
        if workers is not None and workers > cores:
            print(f"note: --workers {workers} capped at {cores}, the cores of this machine (a local Ray instance "
                  "runs one worker per core)", file=sys.stderr)
        workers = min(workers or cores, cores)
        _start_local(workers, options)
    else:
        _join(address, options)
        workers = workers or max(1, int(ray.cluster_resources().get("CPU", 1)))
    return ray, workers, True


@functools.cache
def remote_run_task():
    """:func:`run_task` as a Ray remote function, made once per process: Ray sends a remote function to its
    cluster at its first call in each session (5 ms here, while the workers wait), so sweeps after the first in a
    session (a notebook, a benchmark) skip it."""
    import ray

    return ray.remote(run_task)


def _failure_reason(error) -> str:
    import ray

    if isinstance(error, ray.exceptions.WorkerCrashedError):
        return "worker crashed: the worker process running this case died (retried, and died again)"
    return f"{type(error).__name__}: {str(error).strip().splitlines()[0] if str(error).strip() else ''}"


def _stop_ray(own: bool, local: "LocalProcesses | None", grace: float) -> None:
    """Shut down the Ray session this sweep started (``own``) and stop every process of its local instance
    (``local``, with its process, :mod:`.local_head`), also what an interrupted start left, SIGKILL after
    ``grace`` s. A join cut short is left to its thread (ray.shutdown would wait for that ray.init). A failing
    shutdown is a note on stderr: the summary is still due, and the processes are stopped all the same."""
    if local is not None:
        local.snapshot()    # with the workers started since, or what an interrupted start left
    ray = sys.modules.get("ray")
    if own and ray is not None and ray.is_initialized():
        try:
            ray.shutdown()
        except Exception as error:  # noqa: BLE001 -- any reason: what follows stops the processes regardless
            print(f"note: Ray's shutdown failed ({type(error).__name__}: {error}); its processes are stopped",
                  file=sys.stderr)
    if local is not None:
        local.stop(grace)
        _end_head()


def run_sweep(spec, experiment, cases: list, output_dir: Path, workers: int | None = None,
              address: str | None = None, resume: bool = False, progress: bool = True) -> dict:
    """Run the cases of ``spec`` not already ok in ``output_dir`` (with ``resume``); a summary of the run:
    cases, computed, reused, failed (rows of this spec's cases that failed, this run or before), interrupted,
    engine, address, workers, wall_s, compute_s (from the first task to the last result: wall_s without Ray's
    start, the spec and the results' consolidation) and the results table (``table``, pyarrow). In a Ray session
    the caller started, the sweep runs there and leaves it running."""
    started = time.perf_counter()
    store = ResultStore(output_dir, experiment, resume, spec_text(spec.raw), spec_digest(spec.raw))
    done = store.done() if resume else set()
    todo = deque(case for case in cases if case.id not in done)
    reused, interrupted, lost, used, compute = len(cases) - len(todo), False, None, 0, 0.0
    stop, starting = threading.Event(), threading.Event()
    main = threading.current_thread() is threading.main_thread()    # signal handlers: main thread only
    previous: dict = {}

    def on_signal(*_):
        """Ctrl-C and SIGTERM set ``stop``; while Ray starts they also raise KeyboardInterrupt there (module
        docstring)."""
        stop.set()
        if starting.is_set():
            starting.clear()
            raise KeyboardInterrupt

    def flag_signals():
        """``on_signal`` for Ctrl-C and SIGTERM, again after Ray's start: ``ray.init`` sets its own SIGTERM
        handlers (``sys.exit``, then its node's, which ends the driver with status 1 and no summary)."""
        if main:
            for number in (signal.SIGINT, signal.SIGTERM):
                previous.setdefault(number, signal.signal(number, on_signal))

    ray, own, local = None, False, None
    # Ray's driver prints the raylet's error reports (a worker died, a task is retried, the raylet ended) on
    # sys.stdout (ray/_private/worker.py, listen_error_messages) until its shutdown: they go to stderr, stdout
    # keeps the summary
    with contextlib.redirect_stdout(sys.stderr):
        try:
            if todo:
                local = LocalProcesses() if address is None else None
                flag_signals()
                own = True      # until start_ray says otherwise: what a start cut short left is this sweep's
                starting.set()
                try:
                    ray, used, own = start_ray(workers, address)
                finally:
                    starting.clear()
                flag_signals()
            if ray is not None and not own and local is not None:
                local.stop()        # knows no process: only ends the adoption
                local = None        # the caller's session is not this sweep's to watch or stop
            if stop.is_set():       # a signal Ray's start kept from raising (module docstring)
                raise KeyboardInterrupt
            if ray is not None:
                if local is not None:
                    local.snapshot()
                compute = time.perf_counter()
                try:
                    _drive(ray, experiment, spec, todo, used, store, stop, progress,
                           local.lost if local is not None else lambda: None, cancel=not own)
                finally:
                    compute = time.perf_counter() - compute
        except KeyboardInterrupt:
            interrupted = True
        except EngineLostError as error:
            lost = str(error)
        finally:
            # the handlers stay ours until every process is stopped: a second Ctrl-C only sets the flag again
            _stop_ray(own, local, STOP_GRACE if stop.is_set() else 2.0)
            for number, handler in previous.items():
                signal.signal(number, handler)
    table = store.consolidate()
    ids = {case.id for case in cases}
    statuses = [s for c, s in zip(table.column("case").to_pylist(), table.column("status").to_pylist(),
                                  strict=True) if c in ids]
    return {"experiment": experiment.name, "cases": len(cases), "computed": store.rows, "reused": reused,
            "failed": statuses.count("failed"),
            "interrupted": interrupted, "lost": lost, "engine": "ray", "address": address or "local",
            "workers": used, "wall_s": time.perf_counter() - started, "compute_s": compute,
            "results": store.path, "table": table}


def _drive(ray, experiment, spec, todo: deque, workers: int, store: ResultStore, stop: threading.Event,
           progress: bool, lost, cancel: bool = True) -> None:
    """Keep QUEUED tasks per worker in flight until every case has a row, with a progress bar. When ``stop`` is
    set (the signal handlers' flag) or on KeyboardInterrupt, the tasks in flight are cancelled (their workers
    stopped; with ``cancel`` only: a sweep's own instance is stopped whole right after, and cancelling there
    made Ray's driver abort now and then, "Tried to complete task that was not pending", before the summary)
    and KeyboardInterrupt propagates; when ``lost()`` gives a reason, EngineLostError with it."""
    from tqdm import tqdm

    remote = remote_run_task().options(num_cpus=1, max_retries=spec.retries)
    experiment_ref = ray.put(experiment)
    bar = tqdm(total=len(todo), desc=f"sweep {experiment.name}", unit="case", file=sys.stderr,
               disable=not progress, smoothing=0.05)
    isolated: deque = deque()
    in_flight: dict = {}
    failed, measured, measured_s = 0, 0, 0.0

    def submit():
        if isolated:
            batch = [isolated.popleft()]
        else:
            size = batch_size(len(todo), workers, spec.batch, measured_s / measured if measured else None)
            batch = [todo.popleft() for _ in range(size)]
        packed = pickle.dumps(Batch.of(batch), pickle.HIGHEST_PROTOCOL)
        ref = remote.remote(experiment_ref, packed, spec.case_timeout)
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
        outcomes = Outcomes(["failed"], [reason], [{}], [took])
        record(encode(Batch.of(batch).table(experiment, outcomes, "")), 1, 1, took)

    try:
        while todo or isolated or in_flight:
            while (todo or isolated) and len(in_flight) < QUEUED * workers:
                submit()
            ready, _ = ray.wait(list(in_flight), num_returns=1, timeout=POLL)
            if stop.is_set():
                raise KeyboardInterrupt
            reason = lost()
            if reason is not None:
                raise EngineLostError(reason)
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
    except (KeyboardInterrupt, FolderError):
        for ref in in_flight if cancel else ():
            # a task Ray cannot cancel (ended meanwhile) must not replace the reason the sweep stops: its worker
            # ends with the local instance, and a cluster's finishes it into no one's store
            with contextlib.suppress(Exception):
                ray.cancel(ref, force=True)
        raise
    finally:
        bar.close()
