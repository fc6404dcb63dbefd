"""Waiting for a node to have seen messages up to a simulated time (their stamps), with a wall-clock bound."""

from rclpy.task import Future


def stamp_key(stamp) -> tuple[int, int]:
    """A builtin_interfaces/Time as (sec, nanosec), which order as the times do."""
    return stamp.sec, stamp.nanosec


class StampLatch:
    """The last stamp a node has seen (:meth:`saw`), one waiter released once it reaches a time, and ``first``, done
    at the first stamp."""

    def __init__(self):
        self.stamp = None
        self.first = Future()
        self.awaited: tuple[tuple[int, int], Future] | None = None

    def saw(self, stamp) -> None:
        self.stamp = stamp
        if not self.first.done():
            self.first.set_result(True)
        self._release()

    def _release(self) -> None:
        awaited = self.awaited
        if awaited is not None and self.stamp is not None and stamp_key(self.stamp) >= awaited[0]:
            awaited[1].done() or awaited[1].set_result(True)

    async def through(self, node, stamp, timeout_s: float) -> None:
        """Wait until a stamp at or after ``stamp`` has been seen, at most ``timeout_s`` wall-clock seconds
        (``node``: a GuardedNode, whose wall_clock_result bounds the wait)."""
        self.awaited = (stamp_key(stamp), Future())
        self._release()
        try:
            await node.wall_clock_result(self.awaited[1], timeout_s)
        finally:
            self.awaited = None
