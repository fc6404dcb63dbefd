"""Log-log curve arithmetic for work-precision comparisons (bench_work_precision): no peer imports, so the tests
check it on a machine without the benchmark peers."""

import numpy as np


def loglog_at(points: list[dict], x: str, y: str, target: float, reach: float = 1.0) -> float:
    """y at x = ``target`` on the log-log polyline through ``points`` (finite ones, sorted by x), extended along
    its end segments up to a factor ``reach`` beyond them; NaN beyond that or with no point."""
    points = sorted((p for p in points if np.isfinite(p[x]) and np.isfinite(p[y])), key=lambda p: p[x])
    if not points or not points[0][x] / reach <= target <= points[-1][x] * reach:
        return float("nan")
    xs, ys = np.log([p[x] for p in points]), np.log([p[y] for p in points])
    if len(points) == 1:
        return float(np.exp(ys[0]))
    t = np.log(target)
    end = 0 if t < xs[0] else len(xs) - 2 if t > xs[-1] else None
    if end is None:
        return float(np.exp(np.interp(t, xs, ys)))
    slope = (ys[end + 1] - ys[end]) / (xs[end + 1] - xs[end])
    return float(np.exp(ys[end] + slope * (t - xs[end])))


def matched(ours: list[dict], peer: list[dict], x: str, y: str, floor: float = 0.0, reach: float = 1.0) -> float:
    """peer's y / ours' y at the smallest x above ``floor`` that both curves reach (log-log, the peer's curve
    extended by up to a factor ``reach`` when that x lies beyond it); NaN when there is none."""
    ours = [p for p in ours if np.isfinite(p[x]) and p[x] > floor]
    peer = [p for p in peer if np.isfinite(p[x]) and p[x] > floor]
    if not ours or not peer:
        return float("nan")
    target = max(min(p[x] for p in ours), min(p[x] for p in peer) / reach)
    return loglog_at(peer, x, y, target, reach) / loglog_at(ours, x, y, target)
