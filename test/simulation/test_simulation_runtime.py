"""The simulation runtime's state machine without ROS, on a counting world: steps owed to requests are taken on
the ticks and no more, a running world refuses them, a failed step pauses (or resets) and is reported as ERROR
until a resume, a reset restores the world and is counted."""

import pytest

from discrete_robot.errors import ConvergenceError, InputError
from discrete_robot.simulation.runtime import MAX_STEP_REQUEST, Level, SimulationRuntime


class World:
    time = 0.0


class Host(SimulationRuntime):
    """A world whose step adds ``time_step`` and fails at the times listed in ``failing``."""

    def __init__(self, on_step_failure="pause", failing=()):
        self._world, self.failing, self.published_times, self.failures, self.resets_done = World(), failing, [], [], 0
        self.start_runtime(0.01, 100.0, 0.0, False, on_step_failure, paused=True)

    @property
    def world(self):
        return self._world

    def advance_world(self, steps):
        for _ in range(steps):
            if round(self._world.time, 9) in self.failing:
                raise ConvergenceError("no convergence")
            self._world.time += self.time_step

    def reset_world(self):
        self.resets_done += 1

    def publish_all(self, tf=True):
        self.published()
        self.published_times.append(self.world_time)

    def log_step_failure(self, message):
        self.failures.append(message)

    def warn_behind(self, message):
        pass


def test_steps_owed_are_taken_on_the_ticks_and_no_more():
    host = Host()
    refused, target = host.request_steps(7)
    assert refused is None and target == pytest.approx(0.07)
    for _ in range(5):
        host.tick()
    assert host.world_time == pytest.approx(0.07) and host.pending_steps == 0
    assert host.published_times[-1] == pytest.approx(0.07)


def test_a_running_world_refuses_step_requests_and_the_owed_steps_are_bounded():
    host = Host()
    with pytest.raises(InputError, match="MAX_STEP_REQUEST"):
        host.request_steps(MAX_STEP_REQUEST + 1)
    host.resume()
    refused, _ = host.request_steps(1)
    assert refused == "steps: the simulation is running; pause it first"


@pytest.mark.parametrize("on_step_failure", ["pause", "reset"])
def test_a_failed_step_pauses_or_resets_and_is_reported_once_as_error(on_step_failure):
    host = Host(on_step_failure, failing={0.03})
    host.request_steps(10)
    host.tick()
    assert host.world_time == pytest.approx(0.03) and host.pending_steps == 0     # the rest dropped
    assert len(host.failures) == 1 and f"simulation {on_step_failure}" in host.failures[0]
    assert host.resets_done == (on_step_failure == "reset")
    level, message, values = host.diagnostics()
    assert level is Level.ERROR and "1 failed step(s)" in message and values["failed_steps"] == 1.0
    level, message, _ = host.diagnostics()     # reported once; while the world stays paused, the reason stays
    assert level is Level.ERROR and message.startswith(f"paused after a failed step ({on_step_failure})")
    host.resume()
    assert host.diagnostics()[:2] == (Level.WARN, "running; 1 failed step(s) since start")


def test_a_reset_restores_the_world_and_is_counted():
    host = Host()
    host.request_steps(3)
    assert host.reset().endswith("(reset 1)")
    assert host.resets_done == 1 and host.pending_steps == 0 and host.resets == 1
