"""Joint-space paths through waypoints, parametrised by the joint-space arc length s (rad or m).

Default (``smooth=False``): the waypoints are joined by straight segments and the arm stops at every
interior waypoint. On a straight segment q(s) = q_a + s·u (u the unit direction) every velocity the
discrete model can produce is parallel to u: its smoothing formula q̇(k+1) = 2Δq(k)/Δt(k) − q̇(k) maps
q̇(k) = v_k u to q̇(k+1) = v_{k+1} u. The planner's state is then the scalar path speed v = ṡ (rad/s).
At a corner the incoming and outgoing directions differ, and a node velocity cannot lie along both
unless it is zero, hence the stop.

``smooth=True`` (passing interior waypoints without stopping): the path is the C² cubic spline through
the waypoints in the same arc-length parameter (chord-length knots, natural end conditions). On a curved
path the discrete model's node velocity is a vector that the smoothing formula carries from step to step,
so the scalar reachability planner does not apply; such paths are planned by the generic NLP over the
time steps (:func:`discrete_robot.planning.min_time.plan_min_time_nlp`). This is the simple documented
choice: it needs no blending radius and interpolates every waypoint exactly.
"""

from dataclasses import dataclass

import numpy as np
from scipy.interpolate import CubicSpline

from discrete_robot.errors import InputError
from discrete_robot.validation import whole_number

#: waypoints closer than this (joint-space norm, rad or m) are one waypoint
MIN_SEGMENT_LENGTH = 1e-9


@dataclass(frozen=True)
class Segment:
    """The straight segment q(s) = start + (s − s0)·direction for s ∈ [s0, s0 + length]."""

    start: np.ndarray
    end: np.ndarray
    s0: float
    length: float

    @property
    def direction(self) -> np.ndarray:
        """Unit joint-space direction u (dimensionless)."""
        return (self.end - self.start) / self.length

    def position(self, s) -> np.ndarray:
        """q(s) for a scalar or an array of path parameters (shape (..., n))."""
        s = np.asarray(s, dtype=float)
        fraction = ((s - self.s0) / self.length)[..., None]
        # The weighted form returns both waypoints exactly at fraction 0 and 1.
        return (1.0 - fraction) * self.start + fraction * self.end


def _validated_waypoints(waypoints) -> np.ndarray:
    points = np.asarray(waypoints, dtype=float)
    if points.ndim != 2 or points.shape[0] < 2 or points.shape[1] < 1:
        raise InputError(f"path: need at least two waypoints of shape (m, n), got shape {points.shape}")
    if not np.all(np.isfinite(points)):
        bad = sorted({int(i) for i in np.argwhere(~np.isfinite(points))[:, 0]})
        raise InputError(f"path: waypoints {bad} contain NaN or infinity")
    return points


class WaypointPath:
    """Waypoints (m, n) joined by straight segments, or by a cubic spline when ``smooth``.

    Consecutive duplicate waypoints are merged; a path whose waypoints all coincide is rejected.
    """

    def __init__(self, waypoints, smooth: bool = False):
        points = _validated_waypoints(waypoints)
        keep = [0] + [i for i in range(1, len(points))
                      if np.linalg.norm(points[i] - points[i - 1]) > MIN_SEGMENT_LENGTH]
        points = points[keep]
        if len(points) < 2:
            raise InputError("path: all waypoints coincide, there is nothing to plan")
        self.waypoints = points
        self.smooth = bool(smooth)
        lengths = np.linalg.norm(np.diff(points, axis=0), axis=1)
        self.knots = np.concatenate([[0.0], np.cumsum(lengths)])
        self.segments = tuple(Segment(points[i], points[i + 1], float(self.knots[i]), float(lengths[i]))
                              for i in range(len(lengths)))
        self._spline = CubicSpline(self.knots, points, bc_type="natural") if self.smooth else None

    @property
    def dof(self) -> int:
        return self.waypoints.shape[1]

    @property
    def length(self) -> float:
        """Total path parameter range (joint-space chord length), rad or m."""
        return float(self.knots[-1])

    def position(self, s) -> np.ndarray:
        """q(s), shape (..., n)."""
        s = np.clip(np.asarray(s, dtype=float), 0.0, self.length)
        if self._spline is not None:
            positions = self._spline(s)
            # the spline meets its waypoints only to round-off; return them exactly at the knots
            index = np.searchsorted(self.knots, s)
            exact = (index < self.knots.size) & (self.knots[np.minimum(index, self.knots.size - 1)] == s)
            positions[exact] = self.waypoints[index[exact]]
            return positions
        index = np.clip(np.searchsorted(self.knots, s, side="right") - 1, 0, len(self.segments) - 1)
        starts = self.waypoints[index]
        ends = self.waypoints[index + 1]
        fraction = ((s - self.knots[index]) / (self.knots[index + 1] - self.knots[index]))[..., None]
        return (1.0 - fraction) * starts + fraction * ends

    def segment_grids(self, points: int) -> list[np.ndarray]:
        """Path parameters of about ``points`` nodes over the whole path, split per segment.

        Each segment gets a uniform grid with a number of steps proportional to its length, at least
        two (rest to rest needs two steps: one to speed up, one to stop). Shared waypoints appear in
        both neighbouring grids.
        """
        points = whole_number(points, "path grid points", low=3)
        steps = np.maximum(2, np.round((points - 1) * np.diff(self.knots) / self.length).astype(int))
        grids = []
        for segment, count in zip(self.segments, steps, strict=True):
            grid = segment.s0 + segment.length * np.arange(count + 1) / count
            grid[-1] = segment.s0 + segment.length
            grids.append(grid)
        return grids

    def spline_grid(self, points: int) -> np.ndarray:
        """A uniform grid of ``points`` path parameters over the whole (smooth) path."""
        points = whole_number(points, "path grid points", low=3)
        return np.linspace(0.0, self.length, points)
