"""Planar polygon geometry for pushed footprints (object frame, metres): the bottom of pushing/'s order.

A footprint is a simple polygon stored as a (k, 2) array of counter-clockwise
vertices without a repeated closing vertex. Edge j runs from vertex j to
vertex j+1; its outward normal is the edge direction turned clockwise.

Imports nothing of :mod:`discrete_robot.pushing`; its one kernel, the outline point nearest to a finger
(:func:`closest_on_outline`, asked at every finger move), is compiled here.
"""

import logging
import math
from typing import NamedTuple

import numpy as np

from discrete_robot.errors import InputError
from discrete_robot.geometry2d import cross2
from discrete_robot.jit import njit

log = logging.getLogger(__name__)


def signed_area(vertices: np.ndarray) -> float:
    """Shoelace area, positive for counter-clockwise vertices (m^2)."""
    following = np.roll(vertices, -1, axis=0)
    return 0.5 * float(np.sum(cross2(vertices, following)))


def centroid(vertices: np.ndarray) -> np.ndarray:
    """Area centroid (1/A) integral of r dA of a simple polygon (m)."""
    following = np.roll(vertices, -1, axis=0)
    weight = cross2(vertices, following)
    return (vertices + following).T @ weight / (6.0 * signed_area(vertices))


#: m: the farthest a footprint's vertex may lie from the object frame's origin. A pushed object stands on a table;
#: a vertex beyond 1 km is a units mistake, and near 1e154 m the outline's products overflow (a 1e200 m triangle was
#: refused as "self-intersecting").
MAX_VERTEX_DISTANCE = 1e3


def as_footprint(points, what: str = "footprint") -> np.ndarray:
    """Validate a footprint and return it as counter-clockwise (k, 2) vertices.

    Accepts (k, 2) or (k, 3) (z ignored). A repeated closing vertex is dropped.
    Clockwise input is reversed with a logged warning (the services ask for
    counter-clockwise, but a reversed list describes the same object).
    Raises InputError for fewer than 3 vertices, non-finite values, a vertex
    beyond :data:`MAX_VERTEX_DISTANCE`, repeated consecutive vertices, zero area or a
    self-intersecting outline.
    """
    array = np.asarray(points, dtype=float)
    if array.size == 0:
        raise InputError(f"{what} is empty: give at least 3 vertices")
    if array.ndim != 2 or array.shape[1] not in (2, 3):
        raise InputError(f"{what}: expected a list of [x, y] vertices, got shape {array.shape}")
    if not np.all(np.isfinite(array)):
        raise InputError(f"{what}: vertices must be finite (no NaN or inf)")
    vertices = array[:, :2].copy()
    reach = float(np.max(np.abs(vertices)))
    if reach > MAX_VERTEX_DISTANCE:
        raise InputError(f"{what}: vertices must lie within {MAX_VERTEX_DISTANCE:g} m of the object frame's origin, "
                         f"got a coordinate of {reach:g} m")
    if len(vertices) > 3 and np.array_equal(vertices[0], vertices[-1]):
        vertices = vertices[:-1]
    if len(vertices) < 3:
        raise InputError(f"{what} has {len(vertices)} vertices: a polygon needs at least 3")
    size = float(np.max(np.ptp(vertices, axis=0)))
    edges = np.roll(vertices, -1, axis=0) - vertices
    lengths = np.linalg.norm(edges, axis=1)
    if size == 0.0 or np.any(lengths <= 1e-12 * size):
        j = int(np.argmin(lengths))
        raise InputError(f"{what}: vertices {j} and {(j + 1) % len(vertices)} coincide (zero-length edge)")
    if np.linalg.svd(vertices - vertices.mean(axis=0), compute_uv=False)[1] <= 1e-12 * size:
        raise InputError(f"{what} has zero area (all vertices on one line)")
    crossing = self_intersection(vertices)
    if crossing is not None:
        i, j = crossing
        raise InputError(f"{what} is self-intersecting: edge {i} ({vertices[i].tolist()} -> "
                         f"{vertices[(i + 1) % len(vertices)].tolist()}) meets edge {j}")
    area = signed_area(vertices)
    if area < 0.0:
        log.warning("%s is clockwise; using it reversed (counter-clockwise)", what)
        vertices = vertices[::-1].copy()
    return vertices


def self_intersection(vertices: np.ndarray) -> tuple[int, int] | None:
    """The first pair of edges (i, j) that touch or cross, other than neighbours sharing their vertex; else None.

    Neighbouring edges count as intersecting when they fold back onto each
    other (collinear and opposite). Closed segments: touching is intersecting.
    """
    k = len(vertices)
    a = vertices
    b = np.roll(vertices, -1, axis=0)
    size = float(np.max(np.ptp(vertices, axis=0)))
    eps = 1e-12 * size * size
    direction = b - a
    following = np.roll(direction, -1, axis=0)
    folds = (np.abs(cross2(direction, following)) <= eps) & (np.sum(direction * following, axis=1) < 0.0)
    if np.any(folds):
        i = int(np.argmax(folds))
        return i, (i + 1) % k
    i, j = np.triu_indices(k, 2)
    keep = ~((i == 0) & (j == k - 1))
    i, j = i[keep], j[keep]
    if i.size == 0:
        return None
    d1 = cross2(direction[i], a[j] - a[i])
    d2 = cross2(direction[i], b[j] - a[i])
    d3 = cross2(direction[j], a[i] - a[j])
    d4 = cross2(direction[j], b[i] - a[j])
    s1, s2, s3, s4 = (np.where(np.abs(d) <= eps, 0.0, np.sign(d)) for d in (d1, d2, d3, d4))
    proper = (s1 * s2 < 0) & (s3 * s4 < 0)
    touching = (_on_segment(s1, a[i], b[i], a[j]) | _on_segment(s2, a[i], b[i], b[j])
                | _on_segment(s3, a[j], b[j], a[i]) | _on_segment(s4, a[j], b[j], b[i]))
    hits = np.flatnonzero(proper | touching)
    return (int(i[hits[0]]), int(j[hits[0]])) if hits.size else None


def _on_segment(side, start, end, point) -> np.ndarray:
    """Collinear (side 0) points within the bounding box of their segment."""
    low = np.minimum(start, end)
    high = np.maximum(start, end)
    inside = np.all((point >= low - 1e-15) & (point <= high + 1e-15), axis=-1)
    return (side == 0) & inside


def contains(vertices: np.ndarray, points: np.ndarray) -> np.ndarray:
    """Even-odd point-in-polygon test for (m, 2) points (boundary points may go either way): :func:`inside` each."""
    vertices = np.ascontiguousarray(vertices, dtype=float)
    return np.array([inside(vertices, float(x), float(y)) for x, y in np.atleast_2d(points)], dtype=bool)


@njit
def inside(vertices, px, py):
    """Whether (px, py) is inside the polygon (even-odd rule; the boundary may go either way)."""
    k = vertices.shape[0]
    count = 0
    for j in range(k):
        ax, ay = vertices[j, 0], vertices[j, 1]
        bx, by = vertices[(j + 1) % k, 0], vertices[(j + 1) % k, 1]
        if (ay > py) != (by > py) and px < ax + (py - ay) * (bx - ax) / (by - ay):
            count += 1
    return count % 2 == 1


class OutlinePoint(NamedTuple):
    """The outline point nearest to a point (m), its distance (m), edge index and parameter along the edge in
    [0, 1], and whether the point lies inside the footprint."""

    point: np.ndarray
    distance: float
    edge: int
    parameter: float
    inside: bool


def nearest_outline(vertices: np.ndarray, point: np.ndarray) -> OutlinePoint:
    """:func:`closest_on_outline` of ``point`` (2,) and whether it is inside (:func:`contains`)."""
    closest, distance, edge, parameter = closest_on_outline(vertices, point)
    return OutlinePoint(closest, distance, edge, parameter, bool(contains(vertices, point[None])[0]))


def closest_on_outline(vertices: np.ndarray, point: np.ndarray) -> tuple[np.ndarray, float, int, float]:
    """The outline point nearest to ``point``: (closest point, distance, edge index, edge parameter in [0, 1])."""
    x, y, distance, edge, parameter = _nearest_on_outline(np.ascontiguousarray(vertices, dtype=float),
                                                          float(point[0]), float(point[1]))
    return np.array([x, y]), distance, int(edge), parameter


@njit
def _nearest_on_outline(vertices, px, py):
    """The point of the closed outline through ``vertices`` (k, 2) nearest to (px, py): (x, y, distance, edge,
    parameter along the edge in [0, 1]); the first edge wins a tie."""
    k = vertices.shape[0]
    best_x, best_y, best_distance, best_edge, best_t = 0.0, 0.0, np.inf, 0, 0.0
    for j in range(k):
        ax, ay = vertices[j, 0], vertices[j, 1]
        ex, ey = vertices[(j + 1) % k, 0] - ax, vertices[(j + 1) % k, 1] - ay
        t = min(max(((px - ax) * ex + (py - ay) * ey) / (ex * ex + ey * ey), 0.0), 1.0)
        cx, cy = ax + t * ex, ay + t * ey
        distance = math.hypot(cx - px, cy - py)
        if distance < best_distance:
            best_x, best_y, best_distance, best_edge, best_t = cx, cy, distance, j, t
    return best_x, best_y, best_distance, best_edge, best_t


def outward_normals(vertices: np.ndarray) -> np.ndarray:
    """Unit outward normal of each edge of a counter-clockwise polygon."""
    edge = np.roll(vertices, -1, axis=0) - vertices
    normal = np.stack([edge[:, 1], -edge[:, 0]], axis=1)
    return normal / np.linalg.norm(normal, axis=1, keepdims=True)


@njit
def _inward(vertices, j):
    """The unit inward normal of edge j (j = −1: the last edge)."""
    k = vertices.shape[0]
    dx, dy = vertices[(j + 1) % k, 0] - vertices[j, 0], vertices[(j + 1) % k, 1] - vertices[j, 1]
    length = math.hypot(dx, dy)
    return -dy / length, dx / length


@njit
def outline_normal(vertices, edge, parameter, vertex_tolerance):
    """The unit inward normal of the outline at ``parameter`` along ``edge``: within ``vertex_tolerance`` m of a
    vertex the outline has no tangent, and the normal is the normalised mean of its two edges' inward normals (the
    bisector of the contact normal cone); (nx, ny)."""
    k = vertices.shape[0]
    nx, ny = _inward(vertices, edge)
    length = math.hypot(vertices[(edge + 1) % k, 0] - vertices[edge, 0], vertices[(edge + 1) % k, 1]
                        - vertices[edge, 1])
    if parameter * length <= vertex_tolerance:
        ox, oy = _inward(vertices, edge - 1)
    elif (1.0 - parameter) * length <= vertex_tolerance:
        ox, oy = _inward(vertices, (edge + 1) % k)
    else:
        return nx, ny
    mx, my = nx + ox, ny + oy
    norm = math.hypot(mx, my)
    if norm < 1e-9:
        return nx, ny
    return mx / norm, my / norm


@njit
def first_contact_fraction(vertices, px, py, dx, dy, radius):
    """The earliest fraction s in [0, 1] of the move by (dx, dy) from (px, py) (object frame) at which a finger disk
    of ``radius`` touches the polygon, or −1 if it does not: the centre reaches the polygon grown by
    ``radius``, an edge shifted outward by ``radius`` or a circle of ``radius`` about a vertex."""
    k = vertices.shape[0]
    best = math.inf
    speed2 = dx * dx + dy * dy
    for j in range(k):
        ax, ay = vertices[j, 0], vertices[j, 1]
        ex, ey = vertices[(j + 1) % k, 0] - ax, vertices[(j + 1) % k, 1] - ay
        length = math.sqrt(ex * ex + ey * ey)
        tx, ty = ex / length, ey / length
        nx, ny = ey / length, -ex / length
        approach = nx * dx + ny * dy
        if approach < 0.0:
            s = -((px - ax) * nx + (py - ay) * ny - radius) / approach
            along = (px + s * dx - ax) * tx + (py + s * dy - ay) * ty
            if -1e-12 <= s <= 1.0 and 0.0 <= along <= length:
                best = min(best, s)
        if radius > 0.0 and speed2 > 0.0:
            ox, oy = px - ax, py - ay
            half_b = ox * dx + oy * dy
            discriminant = half_b * half_b - speed2 * (ox * ox + oy * oy - radius * radius)
            if discriminant >= 0.0:
                root = (-half_b - math.sqrt(discriminant)) / speed2
                if -1e-12 <= root <= 1.0:
                    best = min(best, root)
    return -1.0 if best == math.inf else max(0.0, best)
