"""Work lanes: requests of one kind run one at a time, each answered within its budget counted from its arrival.

A node whose requests differ in cost (trajectory_planner_node: a min_time plan takes milliseconds, a min_effort
solve up to its ``request_timeout``) gives each kind a :class:`Lane` of its own, so cheap requests never queue
behind expensive ones. In a lane requests run first come, first served. A request's budget covers its wait as
well as its work: its deadline is its arrival plus the budget, and the work gets what is left. The requests
ahead of it arrived earlier, so they end by their earlier deadlines and its turn comes before its own: every
request is answered within its budget, however many wait. One whose turn comes with nothing left is refused at
once, naming the budget and the queue, rather than started.

A waiting request is an rclpy future awaited by a coroutine callback: it holds no executor thread.
"""

import contextlib
import threading
import time
from collections import deque

from rclpy.task import Future

from discrete_robot.budget import BudgetExceededError, limited


class Lane:
    """One request at a time of the work called ``name`` (say ``min_effort``) on ``node``'s executor."""

    def __init__(self, node, name: str):
        self.node, self.name = node, name
        self._lock = threading.Lock()
        self._busy = False
        self._waiting: deque[Future] = deque()

    @contextlib.asynccontextmanager
    async def turn(self, seconds: float, limit: str = "request_timeout"):
        """``async with lane.turn(seconds):`` waits for the lane, then runs the block inside a budget
        (discrete_robot.budget.limited) that ends ``seconds`` after the call; BudgetExceededError when the
        turn comes after that, the reason naming ``limit`` and the requests that were ahead."""
        deadline = time.monotonic() + seconds
        turn, ahead = self._join()
        try:
            await turn
            if time.monotonic() >= deadline:
                raise BudgetExceededError(f"not started within {limit} = {seconds:g} s: {ahead} {self.name} "
                                          f"request(s) were ahead of it; try again later")
            with limited(seconds, limit) as budget:
                budget.deadline = deadline
                yield budget
        finally:
            self._leave(turn)

    def _join(self) -> tuple[Future, int]:
        turn = Future()
        with self._lock:
            ahead = len(self._waiting) + self._busy
            if self._busy:
                self._waiting.append(turn)
            else:
                self._busy = True
                turn.set_result(True)
        return turn, ahead

    def _leave(self, turn: Future) -> None:
        """Hand the lane to the next request (one that never got its turn, as at shutdown, just leaves)."""
        with self._lock:
            if not turn.done():
                self._waiting.remove(turn)
                return
            if not self._waiting:
                self._busy = False
                return
            self._waiting.popleft().set_result(True)
        # a waiting coroutine is resumed when the executor next looks at its tasks: have it look now
        if self.node.executor is not None:
            self.node.executor.wake()
