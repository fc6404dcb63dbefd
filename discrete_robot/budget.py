"""Bounded work per request: a wall-clock budget, and a process-wide stop flag long computations poll.

A node answers every request in bounded time: it runs the computation inside
``with limited(seconds):`` and the core's long loops (planning passes, push
simulations, DMOC iterations) call :func:`check` once per iteration, which raises
:class:`BudgetExceededError` when the budget is spent or the process is stopping
(:data:`STOP`, set by the nodes' SIGINT/SIGTERM handler), so Ctrl-C never waits
for a long computation. The budget is a context variable: each thread (each
request of a multi-threaded executor) has its own, and code run outside any
``limited`` block is bounded only by :data:`STOP`. A loop of short computations
each with its own budget (a sweep's cases) enters one block and calls
:meth:`limited.renew` before each.
"""

import threading
import time
from contextvars import ContextVar

from discrete_robot.errors import DiscreteRobotError

#: set when the process is asked to stop (SIGINT/SIGTERM in a node); every budget then runs out at once
STOP = threading.Event()
#: the budget of the computation running in this context
_ACTIVE: ContextVar["limited | None"] = ContextVar("discrete_robot_budget", default=None)


class BudgetExceededError(DiscreteRobotError):
    """A computation ran out of its wall-clock budget, or the process is stopping."""


class limited:  # noqa: N801  (used as a function: ``with limited(seconds):``)
    """Run the block with a wall-clock budget of ``seconds`` (``deadline`` on time.monotonic()); ``limit`` names
    the parameter that sets it. ``with limited(s) as budget:`` gives the block :meth:`renew`.

    A class rather than ``contextlib.contextmanager``: the generator-based form cost 3-6 µs of a 60 µs
    predict-push case when a sweep entered one per case (5-10 % of its work); entering and leaving this one
    still cost 0.5 µs a case, and :meth:`renew` 0.1.
    """

    __slots__ = ("seconds", "limit", "deadline", "_token")

    def __init__(self, seconds: float, limit: str = "request_timeout"):
        self.seconds, self.limit = seconds, limit
        self.deadline = time.monotonic() + seconds

    def __enter__(self) -> "limited":
        self._token = _ACTIVE.set(self)
        return self

    def __exit__(self, *exc_info) -> None:
        _ACTIVE.reset(self._token)

    def renew(self) -> None:
        """Start the budget again from now: the next computation of a loop gets the whole ``seconds``."""
        self.deadline = time.monotonic() + self.seconds


def check() -> None:
    """Raise :class:`BudgetExceededError` if the process is stopping or the active budget is spent."""
    if STOP.is_set():
        raise BudgetExceededError("stopped: the process is shutting down")
    active = _ACTIVE.get()
    if active is not None and time.monotonic() > active.deadline:
        raise BudgetExceededError(f"not finished within {active.limit} = {active.seconds:g} s of computation")
