"""How the engine cuts a sweep into tasks (engine.batch_size), replayed without Ray as the driver calls it: the
tasks cover every case once, none holds more than the spec's ``batch``, each holds at least TASK_S of work
once the per-case cost is known (unless ``batch`` or the cases left forbid it), and under a constant cost the
later tasks are never larger (guided self-scheduling: the tail is the smallest work)."""

from hypothesis import given
from hypothesis import strategies as st

from discrete_robot.sweep.engine import QUEUED, TASK_S, batch_size


def replay(cases: int, workers: int, batch: int, case_s: float) -> list[int]:
    """Task sizes in submission order: QUEUED x workers tasks before the first result, then one per result."""
    sizes, remaining = [], cases
    while remaining:
        measured = case_s if len(sizes) >= QUEUED * workers else None
        sizes.append(batch_size(remaining, workers, batch, measured))
        remaining -= sizes[-1]
    return sizes


@given(st.integers(1, 50_000), st.integers(1, 16), st.integers(1, 20_000), st.floats(1e-6, 10.0))
def test_tasks_cover_the_cases_within_the_batch_and_hold_enough_work(cases, workers, batch, case_s):
    sizes = replay(cases, workers, batch, case_s)
    assert sum(sizes) == cases and all(0 < size <= batch for size in sizes)
    left = cases
    for k, size in enumerate(sizes):
        if k >= QUEUED * workers and size < min(left, batch):
            assert size * case_s >= TASK_S * (1 - 1e-9)
        left -= size
    measured = sizes[QUEUED * workers:]
    assert all(later <= earlier for earlier, later in zip(measured, measured[1:], strict=False))


def test_expensive_cases_run_one_per_task_and_cheap_ones_share_few_tasks():
    """A push-to-pose case (seconds, batch 1) is a task of its own; 10⁴ predict-push cases (~65 µs each, batch
    10⁴) on 2 workers make a handful of tasks, where a task per 1000 cases made 14 (bench_sweep): half the cases,
    then half of the rest, down to TASK_S of work."""
    assert replay(8, 2, 1, 5.0) == [1] * 8
    sizes = replay(10_000, 2, 10_000, 65e-6)
    assert sizes[:3] == [5000, 2500, 1250] and len(sizes) <= 6
