"""The simulators' pacing, with synthetic wall-clock times: real time is kept when ticks come late, a long stall is
dropped, a pause is not made up for, a world following a faster clock ticks at its own rate, and a world keeping
its own clock publishes once per period of simulated time."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from discrete_robot.simulation.pacing import MAX_CATCH_UP_TICKS, RealTimePacer, TickGrid

STEP, PERIOD = 1e-3, 0.01


@given(st.lists(st.floats(0.0, 3.0), min_size=1, max_size=200), st.sampled_from([0.5, 1.0, 3.0]))
def test_late_ticks_keep_real_time(lateness, factor):
    """Ticks late by up to three periods (the timer skipping periods meanwhile): the steps owed still add up to
    the wall time that passed times the factor, to within one step."""
    pacer = RealTimePacer(STEP, PERIOD, now=0.0)
    now, steps = 0.0, 0
    for late in lateness:
        now += PERIOD * (1.0 + late)
        steps += pacer.steps(now, factor)
    assert steps * STEP == pytest.approx(factor * now, abs=STEP * (1.0 + 1e-6))


@given(st.lists(st.floats(0.0, 20.0), min_size=1, max_size=200), st.sampled_from([0.5, 1.0, 3.0, 100.0]))
def test_simulated_time_is_the_factor_times_the_wall_time_less_only_the_stalls_beyond_the_catch_up(gaps, factor):
    """Ticks any number of periods apart (a busy machine): the world never runs ahead of ``factor`` times the wall
    time, and it loses exactly the part of each gap beyond MAX_CATCH_UP_TICKS periods (to within one step): a
    late tick loses no simulated time, only a stall does."""
    pacer = RealTimePacer(STEP, PERIOD, now=0.0)
    now, steps, kept = 0.0, 0, 0.0
    for gap in gaps:
        now += PERIOD * gap
        kept += min(PERIOD * gap, MAX_CATCH_UP_TICKS * PERIOD)
        steps += pacer.steps(now, factor)
    assert steps * STEP <= factor * now + 1e-9
    assert steps * STEP == pytest.approx(factor * kept, abs=STEP * (1.0 + 1e-6))


def test_a_long_stall_is_dropped_not_replayed():
    pacer = RealTimePacer(STEP, PERIOD, now=0.0)
    assert pacer.steps(10.0, 1.0) == round(MAX_CATCH_UP_TICKS * PERIOD / STEP)
    assert pacer.steps(10.0 + PERIOD, 1.0) == round(PERIOD / STEP)


def test_a_pause_is_not_made_up_for():
    pacer = RealTimePacer(STEP, PERIOD, now=0.0)
    pacer.steps(0.0105, 1.0)              # half a step carried
    for now in np.arange(0.02, 5.0, PERIOD):
        pacer.hold(now)
    assert pacer.steps(5.0 + PERIOD, 1.0) == round(PERIOD / STEP)


@pytest.mark.parametrize(("leader_hz", "own_hz", "expected_hz"), [(100.0, 50.0, 50.0), (100.0, 30.0, 30.0),
                                                                    (100.0, 100.0, 100.0), (20.0, 50.0, 20.0)])
def test_a_follower_ticks_at_its_own_rate_or_the_slower_leader(leader_hz, own_hz, expected_hz):
    ticks = TickGrid(1.0 / own_hz)
    # the leader's stamps as /clock carries them: whole nanoseconds
    stamps = [round(k * 1e9 / leader_hz) * 1e-9 for k in range(1, round(10 * leader_hz) + 1)]
    count = sum(ticks.due(t) for t in stamps)
    assert count == pytest.approx(10 * expected_hz, abs=1)


@given(st.lists(st.floats(0.0, 3.0), min_size=1, max_size=200))
def test_a_leader_publishes_once_per_period_of_simulated_time_however_its_ticks_fall(lateness):
    """Ticks late by up to three periods (the timer skipping periods meanwhile) or early: the world advances by
    the steps owed in chunks that end on the publish grid, and publishes on each line it reaches, one message per
    period of simulated time, each a period after the one before."""
    pacer, grid = RealTimePacer(STEP, PERIOD, now=0.0), TickGrid(PERIOD, 0.0)
    now, steps, stamps = 0.0, 0, []
    for late in lateness:
        now += PERIOD * late
        owed = pacer.steps(now, 1.0)
        while owed > 0:
            chunk = min(owed, grid.steps_to_line(steps * STEP, STEP))
            steps, owed = steps + chunk, owed - chunk
            if grid.due(steps * STEP):
                stamps.append(steps * STEP)
    assert len(stamps) == int(np.floor(steps * STEP / PERIOD + 1e-9))
    np.testing.assert_allclose(np.diff(stamps, prepend=0.0), PERIOD, atol=1e-12)
