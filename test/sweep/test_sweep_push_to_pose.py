"""An 8-case push-to-pose sweep on a local Ray with 2 workers (the planar arm simulated at 5 ms, whose final
poses lie within 2e-4 rad of 2 ms ones): it completes; ``--resume`` recomputes nothing; 1 worker gives the
same numbers, bit for bit. Physics checked on the way, independently of the planner: the quasistatic motion
does not depend on the support friction's size (the minimum-power twist minimises mu_s N P(xi), whose
minimiser no positive factor moves), so cases apart only in support_friction end identically; and the
pressure distribution does move the object (a rim resists turning more than a uniform base)."""

import importlib.util

import numpy as np
import pytest

from discrete_robot.sweep.commands import sweep
from discrete_robot.sweep.experiments import EXPERIMENTS

pytestmark = pytest.mark.skipif(importlib.util.find_spec("ray") is None, reason="needs ray (make setup)")

SPEC = {"experiment": "push-to-pose", "seed": 5, "samples": 2,
        "fixed": {"model": "planar_2link.yaml", "goal": [1.15, 0.02, 0.3], "time_step": 0.005,
                  "planner_pressure": "uniform", "planner_support_friction": 0.4, "planner_contact_friction": 0.3},
        "grid": {"support_friction": [0.3, 0.6], "pressure": ["uniform", "rim"]},
        "random": {"contact_friction": {"uniform": [0.2, 0.4]}}}
OUTCOME = [m.name for m in EXPERIMENTS["push-to-pose"].metrics if not m.timing]


def outcomes(table) -> dict:
    rows = table.to_pylist()
    return {row["case"]: (row["seed"], row["status"], *(row[name] for name in OUTCOME)) for row in rows}


def test_an_8_case_push_sweep_resumes_and_gives_the_same_numbers_on_1_worker(tmp_path):
    import pyarrow.parquet as pq

    first = sweep(SPEC, tmp_path / "two", workers=2, progress=False)
    assert (first["cases"], first["computed"], first["reused"], first["failed"]) == (8, 8, 0, 0)
    table = pq.read_table(tmp_path / "two" / "results.parquet")
    rows = table.to_pylist()
    assert len({row["worker"] for row in rows}) == 2
    by_key = {(row["sample"], row["pressure"], row["support_friction"]): row for row in rows}
    for sample in range(2):
        for pressure in ("uniform", "rim"):
            low, high = by_key[sample, pressure, 0.3], by_key[sample, pressure, 0.6]
            assert low["final_pose"] == pytest.approx(high["final_pose"], rel=0, abs=1e-12)
            assert low["pushes"] == high["pushes"] >= 1
            assert low["penetration_m"] <= 1e-3
        uniform, rim = by_key[sample, "uniform", 0.3], by_key[sample, "rim", 0.3]
        assert abs(uniform["final_pose"][2] - rim["final_pose"][2]) > np.radians(1.0)
    assert any(row["success"] for row in rows) and not all(row["success"] for row in rows)

    again = sweep(SPEC, tmp_path / "two", workers=2, resume=True, progress=False)
    assert (again["computed"], again["reused"], again["workers"]) == (0, 8, 0)   # Ray not even started
    assert outcomes(pq.read_table(tmp_path / "two" / "results.parquet")) == outcomes(table)

    single = sweep(SPEC, tmp_path / "one", workers=1, progress=False)
    assert single["computed"] == 8 and single["workers"] == 1
    one = pq.read_table(tmp_path / "one" / "results.parquet")
    assert len({row["worker"] for row in one.to_pylist()}) == 1
    assert outcomes(one) == outcomes(table)
