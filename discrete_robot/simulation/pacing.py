"""Real-time pacing of a simulated world: the steps a wall-clock tick owes it, and the grid of simulated time on
which it publishes.

A tick advances the world by the wall time since the previous tick (times ``real_time_factor``), so a late tick
does not lose simulated time (:class:`RealTimePacer`); a world that keeps its own clock publishes each
``period`` of its simulated time (:class:`TickGrid`), so a late tick does not lose a message either. Wall time
decides only how many steps are taken when, never a step's result.
"""

import numpy as np

#: the most wall-clock time one tick makes up for, in ticks: a late tick (a busy executor, a suspended
#: process) advances the world by the wall time that passed, but a long stall is dropped, not replayed in a burst
MAX_CATCH_UP_TICKS = 5
#: s: a simulated time this close to a line of a tick grid is on it (clock messages carry nanoseconds, and a
#: world's own time is a sum of steps)
FOLLOW_TOLERANCE_S = 1e-6


class RealTimePacer:
    """Whole steps of ``time_step`` owed to a world run at ``real_time_factor`` simulated seconds per wall second.

    Each tick owes the wall time since the previous tick (times the factor), not the timer's period: a tick that
    comes late, or a period the timer skipped while the process was busy, would otherwise lose its time and the
    world fall behind real time. A stall longer than :data:`MAX_CATCH_UP_TICKS` periods is dropped rather than
    replayed in one burst. Simulated time below one step is carried to the next tick.
    """

    def __init__(self, time_step: float, period: float, now: float):
        self.time_step, self.period = time_step, period
        self.carried = 0.0     # simulated seconds owed (less than one step)
        self.last = now        # wall time of the last tick, s

    def steps(self, now: float, real_time_factor: float) -> int:
        """The steps owed at wall time ``now`` (s, monotonic)."""
        elapsed = min(now - self.last, MAX_CATCH_UP_TICKS * self.period)
        self.last = now
        self.carried += real_time_factor * elapsed
        steps = int(np.floor(self.carried / self.time_step + 1e-9))
        self.carried -= steps * self.time_step
        return steps

    def hold(self, now: float) -> None:
        """A tick while paused, or the resume: the pause is not time the world owes."""
        self.carried, self.last = 0.0, now


class TickGrid:
    """A grid of ``period`` simulated seconds on which a world ticks and publishes, so that it publishes at its own
    rate however the wall-clock or the followed clock's ticks fall.

    - A world that follows another's /clock ticks on the clock messages that reach a line (not at a faster leader's
      rate; with a slower leader, on every message): the grid starts at the first message (``start`` −inf).
    - A world that keeps its own clock advances in chunks ending on the lines (:meth:`steps_to_line`) and
      publishes at each line it reaches: a tick that comes late, after the timer skipped periods a busy process
      missed, publishes at each line it passes, and an early tick that reaches none publishes nothing.
    """

    def __init__(self, period: float, start: float = -np.inf):
        self.period = period
        self.next = start + period      # simulated time of the next line, s

    def due(self, time: float) -> bool:
        """True when simulated time ``time`` (s) is on or past the next line; the grid then moves on from it (or,
        after a jump past several lines, from ``time``)."""
        if time < self.next - FOLLOW_TOLERANCE_S:
            return False
        self.next += self.period
        if self.next <= time:
            self.next = time + self.period
        return True

    def steps_to_line(self, time: float, time_step: float) -> int:
        """Steps of ``time_step`` from simulated time ``time`` to the next line (at least one). A line within
        FOLLOW_TOLERANCE_S past a step is reached by that step, as :meth:`due` counts it: the time is a sum of
        steps and the line a sum of periods, whose round-off (1e-9 of a step after 10⁴ steps) would otherwise
        add a step or not by where the count started, and the lines would move with the wall clock's ticks."""
        return max(1, int(np.ceil((self.next - FOLLOW_TOLERANCE_S - time) / time_step)))

    def restart(self, time: float) -> None:
        """Lines from simulated time ``time`` on (a resume: a paused world published on every tick)."""
        self.next = time + self.period
