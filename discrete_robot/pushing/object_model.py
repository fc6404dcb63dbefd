"""The pushed object: footprint, support pressure, support friction and weight.

Pressure models (:class:`PressureModel`):

- ``EXACT_UNIFORM`` (default): uniform pressure over the footprint, friction
  integrated in closed form (:class:`~discrete_robot.pushing.support.UniformPolygonSupport`).
- ``UNIFORM_GRID``: uniform pressure discretised by the midpoint rule on a
  square grid: every cell of side ``h`` whose centre lies inside the footprint
  becomes a support point at that centre with weight h^2 (then normalised).
  The rule integrates constants over the covered cells exactly; the
  footprint's boundary is resolved to O(h). ``h`` is chosen from a target
  number of points, h = sqrt(area / count).
- ``POINTS``: support points and weights given by the user (any positive scale).

The solver works in a local frame at the support centroid with lengths in
units of the footprint radius (the largest vertex distance from that
centroid): twists, wrenches and powers are O(1) there whatever the object's
size or where its frame origin is.
"""

import enum
from dataclasses import dataclass, field

import numpy as np

from discrete_robot.errors import InputError
from discrete_robot.pushing.polygon import as_footprint, closest_on_outline, contains, signed_area
from discrete_robot.pushing.support import (
    MERGE_DISTANCE,
    PointSupport,
    SupportFriction,
    UniformPolygonSupport,
    merged_points,
)
from discrete_robot.validation import positive_scalar


class PressureModel(enum.Enum):
    EXACT_UNIFORM = "exact_uniform"
    UNIFORM_GRID = "uniform_grid"
    POINTS = "points"


@dataclass(frozen=True)
class PushedObject:
    """A rigid object sliding on a table (object frame: the footprint's coordinates).

    ``support`` is expressed in the local frame ``(r - origin) / scale``. Derived once, at construction (every
    finger move reads them): ``size``, the footprint's largest extent along x or y, m (the scale of the
    prediction's tolerances); ``circumradius``, the largest distance of the footprint from the object frame's
    origin (the pose's point), m; ``friction_load`` = mu_s N, the largest friction force the table can exert, N.
    """

    footprint: np.ndarray
    support_friction: float
    normal_force: float
    pressure_model: PressureModel
    support: SupportFriction
    origin: np.ndarray
    scale: float
    size: float = field(init=False)
    circumradius: float = field(init=False)
    friction_load: float = field(init=False)

    def __post_init__(self):
        object.__setattr__(self, "size", float(np.max(np.ptp(self.footprint, axis=0))))
        object.__setattr__(self, "circumradius", float(np.max(np.linalg.norm(self.footprint, axis=1))))
        object.__setattr__(self, "friction_load", self.support_friction * self.normal_force)

    def support_points(self) -> tuple[np.ndarray, np.ndarray] | None:
        """Support points (object frame, m) and normalised weights, or None for the exact uniform model."""
        if isinstance(self.support, PointSupport):
            return self.support.points * self.scale + self.origin, self.support.weights
        return None


def grid_support(footprint: np.ndarray, count: int) -> tuple[np.ndarray, np.ndarray]:
    """About ``count`` support points on a square grid (midpoint rule, cell side sqrt(area / count))."""
    if count < 2:
        raise InputError(f"grid support needs at least 2 points, got {count}")
    spacing = np.sqrt(signed_area(footprint) / count)
    low = footprint.min(axis=0)
    high = footprint.max(axis=0)
    # centred on the bounding box so that a symmetric footprint gets a symmetric grid
    cells = np.ceil((high - low) / spacing).astype(int)
    start = 0.5 * (low + high) - 0.5 * (cells - 1) * spacing
    xs = start[0] + spacing * np.arange(cells[0])
    ys = start[1] + spacing * np.arange(cells[1])
    grid = np.stack(np.meshgrid(xs, ys, indexing="ij"), axis=-1).reshape(-1, 2)
    points = grid[contains(footprint, grid)]
    if len(points) < 2:
        raise InputError(f"a grid of {count} points leaves fewer than 2 cell centres inside the footprint")
    return points, np.full(len(points), spacing * spacing)


def _validated_points(footprint: np.ndarray, points, weights) -> tuple[np.ndarray, np.ndarray]:
    points = np.asarray(points, dtype=float)
    weights = np.asarray(weights, dtype=float)
    if points.ndim != 2 or points.shape[1] not in (2, 3):
        raise InputError(f"support_points: expected a list of [x, y] points, got shape {points.shape}")
    points = points[:, :2]
    if weights.shape != (len(points),):
        raise InputError(f"support_weights: expected one weight per support point ({len(points)}), "
                         f"got {weights.size}")
    if not (np.all(np.isfinite(points)) and np.all(np.isfinite(weights))):
        raise InputError("support_points and support_weights must be finite (no NaN or inf)")
    if np.any(weights < 0.0) or weights.sum() <= 0.0:
        raise InputError("support_weights must be >= 0 with a positive sum")
    size = float(np.max(np.ptp(footprint, axis=0)))
    for k, point in enumerate(points):
        if not contains(footprint, point[None])[0] and closest_on_outline(footprint, point)[1] > 1e-9 * size:
            raise InputError(f"support point {k} {point.tolist()} lies outside the footprint")
    return points, weights


def make_pushed_object(footprint, support_friction: float, normal_force: float, support_points=None,
                       support_weights=None, grid_points: int = 0) -> PushedObject:
    """Validate and build a pushed object.

    ``support_points``/``support_weights`` empty (or None) means uniform
    pressure over the footprint: exact when ``grid_points`` is 0, otherwise
    discretised into about ``grid_points`` grid points.
    Raises InputError with the offending field for invalid input.
    """
    footprint = as_footprint(footprint)
    mu = positive_scalar(support_friction, "support_friction")
    weight = positive_scalar(normal_force, "normal_force")
    given = support_points is not None and len(support_points) > 0
    if given or (support_weights is not None and len(support_weights) > 0):
        points, weights = _validated_points(footprint, support_points if given else np.empty((0, 2)),
                                            support_weights if support_weights is not None else [])
        model = PressureModel.POINTS
    elif grid_points:
        points, weights = grid_support(footprint, int(grid_points))
        model = PressureModel.UNIFORM_GRID
    else:
        points = weights = None
        model = PressureModel.EXACT_UNIFORM
    if points is None:
        exact = UniformPolygonSupport(footprint)
        origin = exact.centroid
    else:
        origin = weights @ points / weights.sum()
    scale = float(np.max(np.linalg.norm(footprint - origin, axis=1)))
    local_footprint = (footprint - origin) / scale
    if points is not None and len(merged_points((points - origin) / scale, weights, MERGE_DISTANCE)[0]) < 2:
        raise InputError(f"the support needs at least 2 distinct points with positive weight (points closer than "
                         f"{MERGE_DISTANCE:g} footprint radii are one; on a single point the object could spin "
                         "freely)")
    support = UniformPolygonSupport(local_footprint) if points is None else PointSupport((points - origin) / scale,
                                                                                         weights)
    return PushedObject(footprint=footprint, support_friction=mu, normal_force=weight, pressure_model=model,
                        support=support, origin=origin, scale=scale)
