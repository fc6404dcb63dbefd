"""Bounded work per request: a wall-clock budget, and a process-wide stop flag long computations poll.

A node answers every request in bounded time: the core's long loops (planning
passes, push simulations, DMOC iterations) call :meth:`Budget.check` once per
iteration, which raises :class:`BudgetExceededError` when the request's wall-clock
budget is spent or the process is stopping (:data:`STOP`, set by the nodes'
SIGINT/SIGTERM handler), so Ctrl-C never waits for a long computation.
"""

import threading
import time
from dataclasses import dataclass, field

from discrete_robot.errors import DiscreteRobotError

#: set when the process is asked to stop (SIGINT/SIGTERM in a node); every budget then runs out at once
STOP = threading.Event()


class BudgetExceededError(DiscreteRobotError):
    """A computation ran out of its wall-clock budget, or the process is stopping."""


@dataclass
class Budget:
    """A wall-clock budget of ``seconds`` from creation; ``limit`` names the parameter that sets it."""

    seconds: float = float("inf")
    limit: str = "request_timeout"
    deadline: float = field(init=False)

    def __post_init__(self):
        self.deadline = time.monotonic() + self.seconds

    def check(self) -> None:
        """Raise :class:`BudgetExceededError` if the budget is spent or the process is stopping."""
        if STOP.is_set():
            raise BudgetExceededError("stopped: the process is shutting down")
        if time.monotonic() > self.deadline:
            raise BudgetExceededError(f"not finished within {self.limit} = {self.seconds:g} s of computation")
