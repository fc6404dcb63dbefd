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


def _distinct_points(waypoints) -> np.ndarray:
    """The validated points with consecutive duplicates merged; InputError when all coincide."""
    points = _validated_waypoints(waypoints)
    steps = np.linalg.norm(np.diff(points, axis=0), axis=1)
    keep = np.concatenate([[0], 1 + np.flatnonzero(steps > MIN_SEGMENT_LENGTH)])
    if len(keep) < 2:
        raise InputError("path: all waypoints coincide, there is nothing to plan")
    return points[keep]


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
        self.waypoints = points = _distinct_points(waypoints)
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


class SplinePath:
    """A stack's joint path as toppra's ``SplineInterpolator`` builds it: the C² cubic spline through the points
    (N, n) over the uniform parameter s = 0, 1, …, N − 1 (dimensionless), not-a-knot ends (consecutive duplicates
merged). It passes through
    every point (to round-off) and is the path the retimer follows by default (:mod:`.retime`)."""

    def __init__(self, points):
        self.points = _distinct_points(points)
        self.breakpoints = np.arange(len(self.points), dtype=float)
        self._spline = CubicSpline(self.breakpoints, self.points, bc_type="not-a-knot")

    @property
    def length(self) -> float:
        return float(self.breakpoints[-1])

    def derivatives(self, s) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """q(s), q'(s) = dq/ds and q''(s), each (..., n)."""
        s = np.asarray(s, dtype=float)
        return self._spline(s), self._spline(s, 1), self._spline(s, 2)


class BlendedPath:
    """Straight segments between the points, each corner replaced by a circular arc, as TOTG builds its path
    (Kunz & Stilman 2012, ``Path``/``CircularPathSegment``): s is the joint-space arc length (rad), the arc at a
    corner of angle θ starts d = min(half of each neighbouring segment (all of the first and last),
    max_deviation·sin(θ/2)/(1 − cos(θ/2))) before it and has radius d/tan(θ/2), so it passes within
    ``max_deviation`` (rad) of the corner point. The first and last points are on the path."""

    def __init__(self, points, max_deviation: float = 0.1):
        self.points = points = _distinct_points(points)
        pieces = []     # (start point, start tangent, centre or None, radius, length)
        start = points[0]
        for i in range(1, len(points) - 1):
            incoming, outgoing = points[i] - points[i - 1], points[i + 1] - points[i]
            u_in, u_out = incoming / np.linalg.norm(incoming), outgoing / np.linalg.norm(outgoing)
            angle = float(np.arccos(np.clip(u_in @ u_out, -1.0, 1.0)))
            if np.pi - angle < 1e-9:
                raise InputError(f"path: the motion reverses at point {i}, which a blend cannot round: use the spline")
            if angle < 1e-9:        # straight on
                pieces.append((start, u_in, None, 0.0, float(np.linalg.norm(points[i] - start))))
                start = points[i]
                continue
            d = min(np.linalg.norm(incoming) / (1.0 if i == 1 else 2.0),
                    np.linalg.norm(outgoing) / (1.0 if i == len(points) - 2 else 2.0),
                    max_deviation * np.sin(angle / 2.0) / (1.0 - np.cos(angle / 2.0)))
            radius = d / np.tan(angle / 2.0)
            arc_start = points[i] - d * u_in
            bisector = (u_out - u_in) / np.linalg.norm(u_out - u_in)
            pieces.append((start, u_in, None, 0.0, float(np.linalg.norm(arc_start - start))))
            pieces.append((arc_start, u_in, points[i] + bisector * radius / np.cos(angle / 2.0), radius,
                           angle * radius))
            start = points[i] + d * u_out
        pieces.append((start, (points[-1] - start) / max(np.linalg.norm(points[-1] - start), MIN_SEGMENT_LENGTH),
                       None, 0.0, float(np.linalg.norm(points[-1] - start))))
        self._pieces = [p for p in pieces if p[4] > MIN_SEGMENT_LENGTH]
        self.breakpoints = np.concatenate([[0.0], np.cumsum([p[4] for p in self._pieces])])

    @property
    def length(self) -> float:
        return float(self.breakpoints[-1])

    def derivatives(self, s) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """q(s), q'(s) (unit) and q''(s) (zero on the lines, of norm 1/radius on the arcs), each (m, n)."""
        s = np.clip(np.atleast_1d(np.asarray(s, dtype=float)), 0.0, self.length)
        index = np.clip(np.searchsorted(self.breakpoints, s, side="right") - 1, 0, len(self._pieces) - 1)
        n = self.points.shape[1]
        q, dq, ddq = np.empty((s.size, n)), np.empty((s.size, n)), np.zeros((s.size, n))
        for i, (start, tangent, centre, radius, _) in enumerate(self._pieces):
            rows = index == i
            local = (s[rows] - self.breakpoints[i])[:, None]
            if centre is None:
                q[rows], dq[rows] = start + local * tangent, tangent
                continue
            x = (start - centre) / radius           # unit vectors spanning the arc's plane
            angle = local / radius
            q[rows] = centre + radius * (x * np.cos(angle) + tangent * np.sin(angle))
            dq[rows] = -x * np.sin(angle) + tangent * np.cos(angle)
            ddq[rows] = -(x * np.cos(angle) + tangent * np.sin(angle)) / radius
        return q, dq, ddq
