"""A simulated world run in (scaled) real time, without ROS: ticks, steps, pause/resume/step/reset, diagnostics.

A host (a simulator node, or a replay in process) derives from :class:`SimulationRuntime`, calls
:meth:`~SimulationRuntime.start_runtime` and implements the hooks: the world (``world``, ``advance_world``,
``reset_world``, ``on_step_failed``, ``on_reset``, ``diagnostic_values``), ``publish_all`` (the world's state at
its time) and the two log lines (``log_step_failure``, ``warn_behind``). It then calls :meth:`tick` on each
wall-clock tick of its own, or :meth:`follow` with each time of a clock it follows.

- **Simulated time.** A tick advances the world by ``real_time_factor`` simulated seconds per wall second, in
  whole steps of ``time_step`` (``real_time_factor`` 0: as many steps as fit in the tick), by the wall time since
  the previous tick (:class:`~discrete_robot.simulation.pacing.RealTimePacer`), publishing each ``1 /
  publish_rate`` of simulated time (:class:`~discrete_robot.simulation.pacing.TickGrid`). A world that follows
  another's clock advances up to the time received and publishes on its grid (a world joining a running system
  starts at its time).
- **Pause, resume, step, reset.** Paused, the state is still published; ``step`` requests are owed and taken on
  the next ticks, a tick's share each (a pause, resume or reset drops the rest). A reset restores the initial
  state while simulated time goes on, and is counted.
- **A failed step** (no convergence even in sub-steps) leaves the state as it was; the host says why, then pauses
  or resets (``on_step_failure``).
- **Diagnostics**: achieved real-time factor, step cost, failed steps and resets, and a :class:`Level`.

Wall time decides only how many steps a tick takes, never a step's result.
"""

import enum
import sys
import time

import numpy as np

from discrete_robot.errors import DiscreteRobotError
from discrete_robot.simulation.pacing import MAX_CATCH_UP_TICKS, RealTimePacer, TickGrid
from discrete_robot.validation import bounded_count

#: the most steps a paused simulator may owe to ``step`` requests (one request or several): they run on its ticks
MAX_STEP_REQUEST = 100_000
#: s of wall time: the longest a simulator goes without publishing its state (paused, failed, waiting for the
#: followed clock, or too slow a real-time factor to reach a publish line), so it is never silent (>= 1 Hz)
STATE_SILENCE_S = 0.5
#: a follower more than this many publish periods behind the followed clock reports WARN (cannot keep up)
FOLLOWER_LAG_PERIODS = 5
#: with real_time_factor 0, the share of each tick spent stepping (the rest publishes and serves)
AS_FAST_AS_POSSIBLE_SHARE = 0.8
#: s of wall time without the followed clock after which a follower publishes its state at its own rate (no
#: leader running; a shorter silence is a busy leader, and publishing then would repeat stamps)
LEADER_SILENCE_S = 1.0



def steps_for(seconds: float, time_step: float) -> int:
    """The whole steps of ``time_step`` (s) that reach at least ``seconds`` (s) of simulated time (0 for none)."""
    return max(0, int(np.ceil(seconds / time_step - 1e-9)))

class Level(enum.IntEnum):
    """A status's level, as diagnostic_msgs/DiagnosticStatus numbers them."""

    OK = 0
    WARN = 1
    ERROR = 2


class SimulationRuntime:
    """The run of a simulated world: time, stepping, pause/resume/step/reset and diagnostics (module docstring)."""

    # ------------------------------------------------------------------------------------ hooks

    @property
    def world(self):
        """The simulated world: any object whose ``time`` attribute is its simulated time, s."""
        raise NotImplementedError

    @property
    def world_time(self) -> float:
        """Simulated time, s (settable: a follower starts at the time of the clock it joins)."""
        return self.world.time

    @world_time.setter
    def world_time(self, seconds: float) -> None:
        self.world.time = seconds

    def advance_world(self, steps: int) -> None:
        """Advance by ``steps`` fixed steps; on DiscreteRobotError the state is the last one stepped to."""
        raise NotImplementedError

    def reset_world(self) -> None:
        """Restore the initial state (simulated time goes on)."""
        raise NotImplementedError

    def publish_all(self, tf: bool = True) -> None:
        """Publish the world's state at its time (``tf``: its moving frames too); then call :meth:`published`."""
        raise NotImplementedError

    def log_step_failure(self, message: str) -> None:
        """Say that a step failed and what was done about it."""
        raise NotImplementedError

    def warn_behind(self, message: str) -> None:
        """Say that the world runs below the requested real-time factor (rate-limited by the host)."""
        raise NotImplementedError

    def diagnostic_values(self) -> dict[str, float]:
        """World-specific figures for the diagnostics (e.g. energy drift)."""
        return {}

    def on_step_failed(self) -> None:
        """Clear the commands that led to a failed step (called before pausing or resetting)."""

    def on_reset(self) -> None:
        """Clear the commands before a ``reset`` request restores the initial state (as after a failed step)."""
        self.on_step_failed()

    # ------------------------------------------------------------------------------------ state

    def start_runtime(self, time_step: float, publish_rate: float, real_time_factor: float, follow_clock: bool,
                      on_step_failure: str, paused: bool) -> None:
        """The run's settings and its state at the start (paused with ``paused``)."""
        self.time_step, self.publish_rate, self.real_time_factor = time_step, publish_rate, real_time_factor
        self.follow_clock, self.on_step_failure, self.paused = follow_clock, on_step_failure, paused
        self._resets = 0                  # reset requests served, reported in the diagnostics
        self._pacer = RealTimePacer(self.time_step, 1.0 / self.publish_rate, time.monotonic())
        self._followed_ticks = TickGrid(1.0 / self.publish_rate)
        self._grid = TickGrid(1.0 / self.publish_rate, self.world_time)
        self._followed_time: float | None = None
        self._last_clock_wall = -np.inf
        self._steps = self._step_wall_s = self._failed_steps = 0
        self._pending_steps = 0           # steps owed to step requests, taken on the paused world's ticks
        self._failure: str | None = None  # why the last step failed, until the next resume, reset or set_state
        self._reported_failures = 0       # failed steps already reported in the diagnostics
        self._last_publish, self._published_time = time.monotonic(), None   # wall time and simulated time, s
        # the diagnostics' window: wall and simulated time at its start, and whether the world was running then
        # (start-up and pauses are no slowness)
        self._window = (time.monotonic(), self.world_time, False)

    def published(self) -> None:
        """The host published the state at the world's time (publish_all calls this)."""
        self._last_publish, self._published_time = time.monotonic(), self.world_time

    @property
    def step_cost(self) -> float:
        """Mean wall time of one step since start, s (0 before the first)."""
        return self._step_wall_s / self._steps if self._steps else 0.0

    # ------------------------------------------------------------------------------------ ticks

    def follow(self, followed: float) -> None:
        """A time (s) of the followed clock: the world advances to it and publishes on its grid."""
        if self._followed_time is None:
            # joining a running system: the world starts (from its initial state) at the system's time, instead
            # of simulating the time before it joined
            self.world_time = followed
        self._followed_time = followed
        self._last_clock_wall = time.monotonic()
        if self._followed_ticks.due(self._followed_time):
            self.tick()

    def tick_without_clock(self) -> None:
        """A follower's own tick: with no leader ticking it, it takes the steps owed and shows its state at its
        own rate, as when paused."""
        now = time.monotonic()
        if self.paused and self._pending_steps and now - self._last_clock_wall > LEADER_SILENCE_S:
            self._take_requested_steps()     # no leader ticks this world: its own timer takes the steps owed
        elif now - self._last_clock_wall > LEADER_SILENCE_S or now - self._last_publish > STATE_SILENCE_S:
            self.publish_all(tf=False)

    def steps_due(self) -> int:
        """Whole steps this tick owes the world: by the real-time factor, or up to the followed clock."""
        if self.follow_clock:
            if self._followed_time is None:
                return 0
            return max(0, int(np.floor((self._followed_time - self.world_time) / self.time_step + 1e-9)))
        if self.real_time_factor == 0.0:
            return -1   # as many as fit in the tick
        return self._pacer.steps(time.monotonic(), self.real_time_factor)

    def tick(self) -> None:
        """One wall-clock tick: advance the world by the steps due, then publish everything at its new time.

        Paused, the state is still published (late joiners see it) but not the moving frames (tf buffers warn
        about repeated stamps); steps owed to ``step`` requests are taken here, a tick's share at a time. A tick
        that reaches no publish line (no step due, or too few) publishes the state when nothing was published for
        :data:`STATE_SILENCE_S`."""
        if self.paused:
            self._pacer.hold(time.monotonic())
            if self._pending_steps:
                self._take_requested_steps()
            else:
                self.publish_all(tf=False)
            return
        start = time.perf_counter()
        steps = self.steps_due()
        if steps == 0:
            self._keep_alive()
            return
        if self.follow_clock:
            # a follower must reach the leader's time, so it drops nothing; it catches up over several ticks
            self._advance(min(steps, MAX_CATCH_UP_TICKS * int(np.ceil(1.0 / (self.publish_rate * self.time_step)))))
        elif steps < 0:
            # on the publish grid too: the states published (and the controllers' updates at them) fall on the
            # same simulated times at any real-time factor
            self._advance_on_grid(sys.maxsize, start + AS_FAST_AS_POSSIBLE_SHARE / self.publish_rate)
            self._keep_alive()
            return
        else:
            # as much wall time as the simulated time the tick makes up (a late tick owes several periods), at least
            # a period: steps are dropped only when stepping is slower than the requested real-time factor
            budget = max(1.0 / self.publish_rate, steps * self.time_step / self.real_time_factor)
            self._advance_on_grid(steps, start + budget)
            self._keep_alive()
            return
        self.publish_all()

    def _keep_alive(self) -> None:
        """The state, when nothing was published for :data:`STATE_SILENCE_S` (the moving frames only if the time
        moved on since the last publication: tf buffers warn about a repeated stamp)."""
        if time.monotonic() - self._last_publish > STATE_SILENCE_S:
            self.publish_all(tf=self.world_time != self._published_time)

    def _take_requested_steps(self) -> None:
        """A paused tick's share of the steps owed to ``step`` requests (as a real_time_factor 0 tick takes),
        published on the grid as a running world is, and the state at the time they reach once all are taken (so
        the samples are the same however the ticks fall); a failed step drops the rest."""
        deadline = time.perf_counter() + AS_FAST_AS_POSSIBLE_SHARE / self.publish_rate
        failures = self._failed_steps
        taken = self._advance_on_grid(self._pending_steps, deadline)
        self._pending_steps = 0 if self._failed_steps > failures else self._pending_steps - taken
        if not self._pending_steps and self._published_time != self.world_time:
            self.publish_all()

    def _advance_on_grid(self, steps: int, deadline: float) -> int:
        """Advance by up to ``steps`` before ``deadline`` (as :meth:`_advance_within`), publishing at each line of
        the publish grid the world reaches. The deadline is for stepping: the time spent publishing moves it.
        Returns the steps taken."""
        taken = 0
        while taken < steps:
            chunk = min(steps - taken, self._grid.steps_to_line(self.world_time, self.time_step))
            done = self._advance_within(chunk, deadline)
            taken += done
            if self._grid.due(self.world_time):
                published = time.perf_counter()
                self.publish_all()
                deadline += time.perf_counter() - published
            if done < chunk:
                break
        return taken

    def _advance_within(self, steps: int, deadline: float) -> int:
        """Advance by up to ``steps``, in chunks sized from the measured step cost, until ``deadline``
        (perf_counter s). Steps that do not fit are dropped: the world then runs slower than requested (which
        the diagnostics report) and the host keeps serving instead of stepping for seconds. Returns the steps
        taken."""
        taken = 0
        while taken < steps:
            room = deadline - time.perf_counter()
            if room <= 0.0:
                break
            cost = self.step_cost
            chunk = 1 if cost == 0.0 else max(1, min(steps - taken, int(room / cost)))
            if not self._advance(chunk):
                break
            taken += chunk
        return taken

    def _advance(self, steps: int) -> bool:
        """Advance by ``steps``; a failure is reported and handled by ``on_step_failure``. True when it worked."""
        start = time.perf_counter()
        try:
            self.advance_world(steps)
        except DiscreteRobotError as error:
            self._failed_steps += 1
            self._failure = f"a step failed at t = {self.world_time:.3f} s: {' '.join(str(error).split())}"
            self.on_step_failed()
            if self.on_step_failure == "reset":
                self.reset_world()
            else:
                self.paused = True
            then = "reset" if self.on_step_failure == "reset" else "paused"
            self.log_step_failure(f"simulation step failed at t = {self.world_time:.3f} s: {error}; commands "
                                  f"cleared and the simulation {then} (on_step_failure); the node keeps serving")
            return False
        finally:
            self._step_wall_s += time.perf_counter() - start
        self._steps += steps
        return True

    # ------------------------------------------------------------------------------------ requests

    def pause(self) -> str:
        self.paused = True
        self._pending_steps = 0
        return f"paused at t = {self.world_time:.6f} s"

    def resume(self) -> str:
        self.paused = False
        self._pending_steps = 0
        self._failure = None
        self._pacer.hold(time.monotonic())
        self._grid.restart(self.world_time)
        self._window = (time.monotonic(), self.world_time, True)
        return f"resumed at t = {self.world_time:.6f} s"

    def reset(self) -> str:
        """Restore the initial state (simulated time goes on) and publish it; the message counts the resets."""
        self._pending_steps = 0
        self._failure = None
        self.on_reset()
        self.reset_world()
        self._resets += 1
        self.publish_all()
        return f"initial state restored at t = {self.world_time:.6f} s; simulated time goes on (reset {self._resets})"

    @property
    def resets(self) -> int:
        return self._resets

    def request_steps(self, steps: int) -> tuple[str | None, float]:
        """Owe ``steps`` more steps, taken on the next ticks (a tick's share each, so the host serves meanwhile):
        (None, the simulated time they reach, s), or (the reason, 0) while running. InputError beyond
        :data:`MAX_STEP_REQUEST` owed."""
        if not self.paused:
            return "steps: the simulation is running; pause it first", 0.0
        self._pending_steps = bounded_count(self._pending_steps + steps, MAX_STEP_REQUEST, "steps",
                                            "MAX_STEP_REQUEST", f"{self._pending_steps} steps are still to come")
        return None, self.world_time + self._pending_steps * self.time_step

    def steps_for(self, seconds: float) -> int:
        """The whole steps of this world that reach at least ``seconds`` (s) of simulated time."""
        return steps_for(seconds, self.time_step)

    @property
    def pending_steps(self) -> int:
        return self._pending_steps

    def state_set(self) -> str:
        """After the host set the world's state: publish it (a failure's report ends)."""
        self._failure = None
        self.publish_all()
        return f"state set at t = {self.world_time:.6f} s"

    # ------------------------------------------------------------------------------------ diagnostics

    def diagnostics(self) -> tuple[Level, str, dict[str, float]]:
        """The run's status since the last call: level, message and figures (real-time factor achieved and
        requested, step cost, simulated time, steps, failed steps, resets, and the world's)."""
        now, sim_now = time.monotonic(), self.world_time
        wall0, sim0, was_running = self._window
        self._window = (now, sim_now, self._steps > 0 and not self.paused)
        achieved = (sim_now - sim0) / max(now - wall0, 1e-9)
        values = {"real_time_factor_achieved": achieved, "real_time_factor_requested": self.real_time_factor,
                  "step_cost_s": self.step_cost, "time_step_s": self.time_step, "sim_time_s": sim_now,
                  "steps": float(self._steps), "failed_steps": float(self._failed_steps),
                  "resets": float(self._resets), **self.diagnostic_values()}
        return *self._level(achieved, was_running, values), values

    def _level(self, achieved: float, was_running: bool, values: dict[str, float]) -> tuple[Level, str]:
        """Level and message, worst first: ERROR for a step that failed since the last report, and while paused
        after a failure (with its reason); WARN while behind the requested real-time factor over the last window
        (a late tick is made up by the next: RealTimePacer) or, following a clock, behind the followed time; OK
        paused or running (WARN after failures since start)."""
        failures, self._reported_failures = self._failed_steps - self._reported_failures, self._failed_steps
        lag = (self._followed_time - self.world_time if self.follow_clock and self._followed_time is not None
               else 0.0)
        if failures:
            return Level.ERROR, f"{failures} failed step(s) in the last second; {self._failure}"
        if self.paused and self._failure is not None:
            return Level.ERROR, f"paused after a failed step ({self.on_step_failure}): {self._failure}"
        if self.paused:
            return Level.OK, "paused"
        if was_running and self.real_time_factor > 0.0 and achieved < 0.9 * self.real_time_factor \
                and not self.follow_clock:
            self.warn_behind(f"the simulation runs at {achieved:.2f}x real time, below the requested "
                             f"real_time_factor {self.real_time_factor:g}: {self._cost_against_budget(values)}; "
                             "lower real_time_factor, raise time_step or lower publish_rate")
            return Level.WARN, (f"behind real time: {achieved:.2f}x, below the requested "
                                f"real_time_factor {self.real_time_factor:g}")
        if lag > FOLLOWER_LAG_PERIODS / self.publish_rate:
            return Level.WARN, f"behind the followed /clock by {lag:.3f} s: the steps do not keep up"
        if self._failed_steps:
            return Level.WARN, f"running; {self._failed_steps} failed step(s) since start"
        return Level.OK, "running"

    def _cost_against_budget(self, values: dict[str, float]) -> str:
        """What keeping up asks for: a step's wall time against time_step / real_time_factor, and the model's size
        where the world reports it (``dof`` and ``mimic_joints`` among its diagnostic values), which sets the
        step's cost."""
        size = ", ".join(f"{values[key]:.0f} {label}"
                         for key, label in (("dof", "DOF"), ("mimic_joints", "mimic joints")) if key in values)
        return (f"a step costs {1e3 * self.step_cost:.3f} ms of wall time, against a budget of "
                f"{1e3 * self.time_step / self.real_time_factor:.3f} ms (time_step / real_time_factor)"
                + (f" for a model of {size}" if size else ""))
