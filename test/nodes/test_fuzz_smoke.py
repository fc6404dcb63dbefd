"""A DDS smoke run of the fuzzer (scripts/fuzz.py, which ``make fuzz`` runs with 5000 cases): a hundred
hypothesis-generated requests per service and messages per topic against the live nodes, with no crash, no
hang and no success response holding a non-finite number."""

import fuzz  # scripts/fuzz.py (pyproject's pytest pythonpath)
import pytest

pytestmark = pytest.mark.ros


@pytest.mark.parametrize("target", fuzz.SMOKE_TARGETS, ids=lambda t: t.name)
def test_a_hundred_generated_cases_neither_crash_nor_hang_the_node(ros, target):
    tally = fuzz.fuzz_target(ros.session, ros.workdir, target, cases=target.smoke_cases, timeout=15.0)
    assert tally["cases"] == target.smoke_cases
    assert (tally["crashes"], tally["hangs"], tally["non_finite_successes"]) == (0, 0, 0), tally
