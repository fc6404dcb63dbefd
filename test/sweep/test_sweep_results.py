"""A task's cases as they travel and its rows as they come back, without Ray: every case's inputs are rebuilt
from a batch as they were; a worker's part read back by the store gives the rows the worker computed, value for
value, by the same experiment function called on the original cases; a part another experiment wrote is
refused by --resume; a worker process freezes its heap out of the garbage collector once, and the garbage its
later tasks make is still collected."""

import pickle
import subprocess
import sys
import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from discrete_robot.errors import InputError
from discrete_robot.sweep.commands import prepare
from discrete_robot.sweep.engine import Batch, run_cases
from discrete_robot.sweep.results import PART_SUFFIX, PARTS, ResultStore

PUSHES = {"experiment": "predict-push", "seed": 5, "samples": 3,
          "grid": {"contact_edge": [0, 2], "contact_friction": [0.2, 0.5]},
          "random": {"contact_fraction": {"uniform": [0.0, 1.0]}, "pusher_angle": {"uniform": [-0.6, 0.6]}}}


@settings(deadline=None, max_examples=30)
@given(st.lists(st.integers(0, 11), min_size=1, max_size=12))
def test_a_batch_rebuilds_every_case_inputs(picks):
    """Any selection of a sweep's cases (repeats included): the inputs left out of the rows are those every case
    of the batch holds as the same object, and shared + row gives back each case's inputs."""
    _, _, cases = prepare(PUSHES)
    chosen = [cases[k] for k in picks]
    batch = pickle.loads(pickle.dumps(Batch.of(chosen)))
    for case, row, seed in zip(chosen, batch.values, batch.seeds, strict=True):
        assert {**batch.shared, **dict(zip(batch.varying, row, strict=True))} == case.inputs
        assert seed == case.seed
    assert set(batch.shared) == {name for name, value in chosen[0].inputs.items()
                                 if all(c.inputs[name] is value for c in chosen)}


def test_a_part_read_back_holds_what_the_experiment_computed(tmp_path):
    _, experiment, cases = prepare(PUSHES)
    part, failed, _ = run_cases(experiment, pickle.dumps(Batch.of(cases)), 60.0)
    store = ResultStore(tmp_path, experiment, resume=False)
    store.write(part, len(cases))
    rows = store.read().to_pylist()
    assert failed == 0 and [row["case"] for row in rows] == [case.id for case in cases]
    for row, case in zip(rows, cases, strict=True):
        assert row["status"] == "ok" and row["seed"] == case.seed
        assert {name: row[name] for name in case.inputs} == case.inputs
        assert {name: row[name] for name in (m.name for m in experiment.metrics)} == \
            experiment.function(case.inputs, case.seed)
    assert list((tmp_path / PARTS).glob(f"*{PART_SUFFIX}"))
    assert store.consolidate().to_pylist() == rows and not list((tmp_path / PARTS).glob("*"))


def test_a_part_of_another_experiment_is_refused_on_resume(tmp_path):
    _, pushes, cases = prepare(PUSHES)
    part, _, _ = run_cases(pushes, pickle.dumps(Batch.of(cases[:2])), 60.0)
    ResultStore(tmp_path, pushes, resume=False).write(part, 2)
    _, swings, _ = prepare({"experiment": "simulate", "fixed": {"duration": 0.01}})
    with pytest.raises(InputError, match="--resume: .* another experiment or version"):
        ResultStore(tmp_path, swings, resume=True).done()


def test_a_worker_freezes_its_heap_once_and_later_garbage_is_still_collected():
    """In a fresh interpreter, as a Ray worker runs tasks (run_task): after the first, the objects alive are
    frozen (gc.get_freeze_count); a reference cycle dropped between tasks is freed by the next collection, and
    the second task freezes nothing more."""
    script = textwrap.dedent(f"""
        import gc, pickle, weakref
        from discrete_robot.sweep.commands import prepare
        from discrete_robot.sweep.engine import Batch, run_task
        _, experiment, cases = prepare({PUSHES!r})
        batch = pickle.dumps(Batch.of(cases[:3]))
        assert gc.get_freeze_count() == 0
        run_task(experiment, batch, 60.0)
        frozen = gc.get_freeze_count()

        class Node:
            pass

        node = Node()
        node.itself = node
        alive = weakref.ref(node)
        del node
        run_task(experiment, batch, 60.0)
        gc.collect()
        print(frozen, gc.get_freeze_count(), alive() is None)
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    frozen, after, collected = done.stdout.split()
    assert int(frozen) > 10_000 and int(after) == int(frozen) and collected == "True"
