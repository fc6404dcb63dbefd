"""Sweep throughput on Ray against the in-process loop (discrete_robot.sweep).

10⁴ predict-push cases (random contact points on the square's four edges, finger directions within ±0.6 rad
of the inward normal, three friction values) are computed by the loop ``experiment.function(case.inputs,
case.seed)`` in this process (the baseline: cases per second of one process, warm) and by the sweep engine on a
local Ray with 1 and with 2 workers (warm: a small sweep first, in small tasks and the same Ray session, so
that every worker has imported the experiment). Per-worker throughput = cases / compute_s / workers,
compute_s from the first task to the last result (the rows written as Arrow parts on the way); ratio =
per-worker sweep throughput / in-process throughput (1 would be free; the issue asks >= 0.8). REPEATS
interleaved pairs (a loop, then a sweep: both see the same spell of a shared machine's load); ``ratio`` is the
median of the pairs' ratios (``paired_ratios``), ``ratio_of_least`` the least sweep against the least loop,
which on a loaded machine may pair two different spells. Ray's start-up and the whole sweep's wall time are
reported beside.

Two references run in the same pairs, after the sweep, to separate what the machine and Ray allow from what the
engine costs (each the median of the pairs' ratios, per worker, against the same loop):

- ``floor_ratio``: no engine at all. The cases are cut into one contiguous share per worker, put in Ray's object
  store before the clock starts, and each share is one Ray task running the plain loop (nothing returned);
- ``one_task_per_worker_ratio``: the engine's work per case with no scheduling: each share packed as the engine
  packs a task (``engine.Batch``, inside the clock) and run as one task (``engine.run_task``: the budget, the
  rows, the Arrow part returned), its part not written.

What bounds the figures is CPU, which a loaded machine hides in its wall times, so CPU seconds are reported
beside them (from /proc, during the fastest sweep: the workers, the driver without the final merge of the
results, Ray's raylet and GCS), per case, with the in-process loop's (``loop_cpu_us``, process time, same
run). With l the loop's CPU per case, w the workers' and o the driver's and Ray's, W workers on C otherwise idle
cores take at least max(w / W, (w + o) / C) per case, so the per-worker ratio cannot exceed
``cpu_ratio_bound`` = min(l / w, C l / (W (w + o))): for 2 workers on 2 cores l / (w + o), every CPU second
the engine spends beside the experiment counts against it.
"""

import os
import pickle
import statistics
import tempfile
import time
from pathlib import Path

CASES = 10_000
WARM_CASES = 400
REPEATS = 5


def spec(samples: int, seed: int, batch: int | None = None) -> dict:
    return {"experiment": "predict-push", "seed": seed, "samples": samples, **({"batch": batch} if batch else {}),
            "grid": {"contact_edge": [0, 1, 2, 3], "contact_friction": [0.2, 0.5]},
            "random": {"contact_fraction": {"uniform": [0.0, 1.0]}, "pusher_angle": {"uniform": [-0.6, 0.6]}}}


def in_process(cases, experiment) -> tuple[float, float]:
    """Wall and CPU seconds of the plain loop over ``cases``."""
    started, cpu = time.perf_counter(), time.process_time()
    for case in cases:
        experiment.function(case.inputs, case.seed)
    return time.perf_counter() - started, time.process_time() - cpu


def plain_loop(experiment, cases) -> int:
    """The in-process loop as a Ray task (``floor_ratio``): how many cases it ran."""
    for case in cases:
        experiment.function(case.inputs, case.seed)
    return len(cases)


def shares(cases: list, workers: int) -> list[list]:
    """``cases`` cut into ``workers`` contiguous shares (each holding every grid combination alike)."""
    size = -(-len(cases) // workers)
    return [cases[k:k + size] for k in range(0, len(cases), size)]


def timed_tasks(ray, function, experiment_ref, items: list, pack) -> float:
    """Wall seconds from packing the first item to the last result of the tasks ``function(experiment,
    *pack(item))``, one per item."""
    started = time.perf_counter()
    ray.get([function.remote(experiment_ref, *pack(item)) for item in items])
    return time.perf_counter() - started


def as_arguments(item) -> tuple:
    """``item`` (a share already in the object store) as a task's only argument beside the experiment."""
    return (item,)


def as_task(cases: list, case_timeout: float) -> tuple:
    """``cases`` as the engine sends a task's: one pickle of their :class:`Batch`, and the case budget."""
    from discrete_robot.sweep.engine import Batch

    return pickle.dumps(Batch.of(cases), pickle.HIGHEST_PROTOCOL), case_timeout


def ray_cpu_s() -> dict:
    """CPU seconds so far (user + system, /proc/PID/stat) of this process and of Ray's: raylet, gcs and the
    workers (``ray::`` process titles), summed per kind."""
    tick, totals = os.sysconf("SC_CLK_TCK"), {"driver": 0.0, "raylet": 0.0, "gcs": 0.0, "workers": 0.0}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
            command = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0].decode(errors="replace")
        except OSError:     # a process that ended meanwhile
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        kind = ("driver" if int(pid) == os.getpid() else "raylet" if command.endswith("/raylet")
                else "gcs" if command.endswith("/gcs_server") else "workers" if command.startswith("ray::")
                else None)
        if kind:
            totals[kind] += (int(fields[11]) + int(fields[12])) / tick
    return totals


def count_merge_cpu(store_class) -> list[float]:
    """Wrap ``store_class.consolidate`` (the final merge, after compute_s ends) to add its CPU seconds to the
    one-element list returned."""
    spent, consolidate = [0.0], store_class.consolidate

    def counted(store):
        started = time.process_time()
        try:
            return consolidate(store)
        finally:
            spent[0] += time.process_time() - started

    store_class.consolidate = counted
    return spent


def run() -> list[dict]:
    from discrete_robot.sweep.commands import prepare
    from discrete_robot.sweep.engine import remote_run_task, run_sweep, start_ray
    from discrete_robot.sweep.results import ResultStore

    sweep_spec, experiment, cases = prepare(spec(CASES // 8, seed=1))
    # tasks of 25 cases: every worker gets some
    warm_spec, _, warm_cases = prepare(spec(WARM_CASES // 8, seed=2, batch=25))
    in_process(warm_cases, experiment)
    merge = count_merge_cpu(ResultStore)
    cores, entries = os.cpu_count(), []
    for workers in (1, 2):
        started = time.perf_counter()
        ray, _, _ = start_ray(workers, None)
        start_s = time.perf_counter() - started
        loops, loops_cpu, sweeps, cpu, load = [], [], [], None, None
        floors, single_tasks = [], []
        try:
            experiment_ref, parts = ray.put(experiment), shares(cases, workers)
            stored = [ray.put(part) for part in parts]
            floor_task = ray.remote(plain_loop).options(num_cpus=1)
            engine_task = remote_run_task().options(num_cpus=1)
            with tempfile.TemporaryDirectory() as folder:
                run_sweep(warm_spec, experiment, warm_cases, Path(folder) / "warm", workers, progress=False)
                timed_tasks(ray, floor_task, experiment_ref, [warm_cases] * workers, as_arguments)
                for repeat in range(REPEATS):     # interleaved: both see the same spells of load
                    wall, loop_cpu = in_process(cases, experiment)
                    loops.append(wall)
                    loops_cpu.append(loop_cpu)
                    before, load_before, merged = ray_cpu_s(), os.getloadavg()[0], merge[0]
                    summary = run_sweep(sweep_spec, experiment, cases, Path(folder) / f"sweep{repeat}", workers,
                                        progress=False)
                    sweeps.append(summary["compute_s"])
                    if summary["compute_s"] == min(sweeps):
                        cpu = {k: v - before[k] for k, v in ray_cpu_s().items()}
                        cpu["driver"] -= merge[0] - merged
                        load, wall_s = load_before, summary["wall_s"]
                    floors.append(timed_tasks(ray, floor_task, experiment_ref, stored, as_arguments))
                    single_tasks.append(timed_tasks(ray, engine_task, experiment_ref, parts,
                                                    lambda part: as_task(part, sweep_spec.case_timeout)))
        finally:
            ray.shutdown()
        baseline, per_worker = len(cases) / min(loops), len(cases) / min(sweeps) / workers
        paired = [loop / (sweep * workers) for loop, sweep in zip(loops, sweeps, strict=True)]
        per_case = {k: v / len(cases) * 1e6 for k, v in cpu.items()}
        loop_us, worker_us = min(loops_cpu) / len(cases) * 1e6, per_case["workers"]
        beside_us = per_case["driver"] + per_case["raylet"] + per_case["gcs"]
        entries.append({"name": f"sweep predict-push, 10^4 cases, {workers} worker(s): per-worker throughput",
                        "ours_cases_per_s": per_worker, "baseline_cases_per_s": baseline,
                        "ratio": statistics.median(paired), "paired_ratios": paired,
                        "ratio_of_least": per_worker / baseline, "baseline": "in-process loop, one process, same run",
                        "compute_s": sweeps, "loop_s": loops, "sweep_wall_s": wall_s,
                        "ray_start_s": start_s, "failed": summary["failed"], "cores": cores,
                        "load_average": load, "cpu_s": cpu, "cpu_us_per_case": per_case,
                        "loop_cpu_us": loop_us,
                        "cpu_ratio_bound": min(loop_us / worker_us,
                                               cores * loop_us / (workers * (worker_us + beside_us))),
                        "floor_ratio": statistics.median(loop / (floor * workers)
                                                         for loop, floor in zip(loops, floors, strict=True)),
                        "floor_s": floors,
                        "one_task_per_worker_ratio": statistics.median(
                            loop / (single * workers) for loop, single in zip(loops, single_tasks, strict=True)),
                        "one_task_per_worker_s": single_tasks})
    return entries


if __name__ == "__main__":
    import json

    print(json.dumps(run(), indent=2))
