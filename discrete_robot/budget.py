"""Bounded work per request: a wall-clock budget, and a process-wide stop flag long computations poll.

A node answers every request in bounded time: it runs the computation inside
``with limited(seconds):`` and the core's long loops (planning passes, push
simulations, DMOC iterations) call :func:`check` once per iteration, which raises
:class:`BudgetExceededError` when the budget is spent or the process is stopping
(:data:`STOP`, set by the nodes' SIGINT/SIGTERM handler), so Ctrl-C never waits
for a long computation. The budget is a context variable: each thread (each
request of a multi-threaded executor) has its own, and code run outside any
``limited`` block is bounded only by :data:`STOP`.
"""

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from discrete_robot.errors import DiscreteRobotError

#: set when the process is asked to stop (SIGINT/SIGTERM in a node); every budget then runs out at once
STOP = threading.Event()
#: (deadline on time.monotonic(), seconds, the parameter that set it) of the computation running in this context
_ACTIVE: ContextVar[tuple[float, float, str] | None] = ContextVar("discrete_robot_budget", default=None)


class BudgetExceededError(DiscreteRobotError):
    """A computation ran out of its wall-clock budget, or the process is stopping."""


@contextmanager
def limited(seconds: float, limit: str = "request_timeout") -> Iterator[None]:
    """Run the block with a wall-clock budget of ``seconds``; ``limit`` names the parameter that sets it."""
    token = _ACTIVE.set((time.monotonic() + seconds, seconds, limit))
    try:
        yield
    finally:
        _ACTIVE.reset(token)


def check() -> None:
    """Raise :class:`BudgetExceededError` if the process is stopping or the active budget is spent."""
    if STOP.is_set():
        raise BudgetExceededError("stopped: the process is shutting down")
    active = _ACTIVE.get()
    if active is not None and time.monotonic() > active[0]:
        raise BudgetExceededError(f"not finished within {active[2]} = {active[1]:g} s of computation")
