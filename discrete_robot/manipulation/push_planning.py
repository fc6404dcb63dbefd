"""Push planning: a sequence of pushes that brings a pushed object to a goal pose on the table.

Model-predictive pushing on the minimum-power predictor (in the spirit of the push planners of Lynch & Mason,
"Stable Pushing: Mechanics, Controllability, and Planning", but choosing among predicted pushes instead of
stable ones): from the current pose, every candidate push is simulated exactly as ``simulate_push`` does
(Peshkin & Sanderson's minimum-power model, contact made and lost as the geometry says), and the push whose
predicted end pose is closest to the goal is taken; repeat until the object is within tolerance of the
goal, or no candidate brings it closer, or the budget of pushes is spent. Distance to the goal is measured in
tolerances, |p − g| / position_tolerance + |θ − θ_g| / angle_tolerance, so 1 cm weighs as 5° by default.

Candidates: on every edge of the footprint, contact points at CONTACT_FRACTIONS of its length; push
directions into the object along the edge's inward normal turned by DIRECTION_ANGLES (within and beyond the
finger's friction cone: sliding pushes rotate the object the other way); every length up to the remaining
distance to the goal (at least MIN_REACH, at most MAX_PUSH): a quasistatic push's prefix is the shorter push,
so one simulation per contact and direction scores every length at once (at the simulation's samples). A push
starts STANDOFF before the contact, with the finger clear of the object.

Repositioning between pushes never touches the object (which does not move meanwhile): the finger leaves
radially (from the footprint's centroid) to a circle enclosing the object with CLEARANCE to spare, follows
the circle, and comes radially in to the next push's start. For a footprint that is star-shaped about its
centroid (every convex one) the radial legs stay clear; every repositioning point is checked anyway.

Failures are reported, not raised: the goal outside the table, a goal or finger point the arm cannot reach
(``reachable``), no push that brings the object closer, or the budget spent.
"""

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from discrete_robot import budget
from discrete_robot.geometry2d import rotation2d, to_world, wrap_angle
from discrete_robot.pushing.object_model import PushedObject
from discrete_robot.pushing.polygon import centroid
from discrete_robot.pushing.simulation import clearance, simulate_push
from discrete_robot.validation import finite_vector

CONTACT_FRACTIONS = (0.2, 0.5, 0.8)
DIRECTION_ANGLES = np.radians((-20.0, 0.0, 20.0))
MIN_REACH = 0.06                    # m, the shortest candidate push (its prefixes are candidates too)
MAX_PUSH = 0.15                     # m, the longest push
STANDOFF = 0.01                     # m, finger travel before the contact
CLEARANCE = 0.02                    # m, the repositioning circle's margin beyond the object and the finger
ARC_STEP = np.radians(20.0)         # rad between repositioning waypoints on the circle
PLAN_SPEED = 0.05                   # m/s, the simulated pushes' finger speed (quasistatic: only sampling)
PLAN_STEP = 0.05                    # s, the simulated pushes' output sampling
#: m: a finger this little inside the outline still only touches it (a push ends in contact, to round-off)
TOUCH = 1e-6


@dataclass(frozen=True)
class Push:
    """One push: the contact aimed at (object frame, m), the repositioning waypoints that lead to its start
    (world, m), the finger path while pushing (world, m) and the object poses predicted along it."""

    contact: np.ndarray
    approach: np.ndarray
    path: np.ndarray
    predicted_poses: np.ndarray


@dataclass(frozen=True)
class PushPlan:
    """The pushes, every predicted object pose in order (start first), the whole finger path (world, m) with the
    push each of its segments makes (−1: repositioning), and the final (position m, angle rad) error to the
    goal."""

    success: bool
    message: str
    pushes: tuple[Push, ...]
    poses: np.ndarray
    finger_path: np.ndarray
    segment_push: np.ndarray
    final_error: tuple[float, float]


def _cost(pose, goal, position_tolerance: float, angle_tolerance: float) -> float:
    return (float(np.linalg.norm(pose[:2] - goal[:2])) / position_tolerance
            + abs(wrap_angle(pose[2] - goal[2])) / angle_tolerance)


def _error(pose, goal) -> tuple[float, float]:
    return float(np.linalg.norm(pose[:2] - goal[:2])), wrap_angle(pose[2] - goal[2])


def _candidates(obj: PushedObject, pose, remaining: float, radius: float):
    """(contact (object frame), finger path (2, 2) world) of every candidate push from ``pose``, each as long
    as any push of its contact and direction may be (shorter ones are its prefixes)."""
    vertices = obj.footprint
    length = float(np.clip(remaining + STANDOFF, MIN_REACH, MAX_PUSH))
    R = rotation2d(pose[2])
    for a, b in zip(vertices, np.roll(vertices, -1, axis=0), strict=True):
        edge = b - a
        outward = np.array([edge[1], -edge[0]]) / np.linalg.norm(edge)   # counter-clockwise footprint
        for fraction in CONTACT_FRACTIONS:
            contact = a + fraction * edge
            for angle in DIRECTION_ANGLES:
                direction = R @ (rotation2d(angle) @ -outward)
                start = to_world(pose, (contact + radius * outward)[None])[0] - STANDOFF * direction
                yield contact, np.array([start, start + (STANDOFF + length) * direction])


def _circle(obj: PushedObject, pose, radius: float) -> tuple[np.ndarray, float]:
    """Centre (world) and radius (m) of the repositioning circle around the object at ``pose``."""
    centre = centroid(obj.footprint)
    reach = float(np.max(np.linalg.norm(obj.footprint - centre, axis=1)))
    return to_world(pose, centre[None])[0], reach + radius + CLEARANCE


def reposition(obj: PushedObject, pose, finger, target, radius: float) -> np.ndarray:
    """Waypoints (k, 2) from ``finger`` to ``target`` (world) around the object at ``pose``: out to the circle,
    along it the short way, in to the target (the module docstring)."""
    centre, circle = _circle(obj, pose, radius)

    def angle_of(point):
        offset = point - centre
        return float(np.arctan2(offset[1], offset[0]))

    a0, a1 = angle_of(finger), angle_of(target)
    sweep = wrap_angle(a1 - a0)
    steps = max(1, int(np.ceil(abs(sweep) / ARC_STEP)))
    arc = [centre + circle * np.array([np.cos(a), np.sin(a)]) for a in a0 + np.linspace(0.0, sweep, steps + 1)]
    return np.array([finger, *arc, target])


def _clear(obj: PushedObject, pose, points, radius: float) -> bool:
    """True when the finger keeps clear of the object along the polyline ``points`` (checked every mm)."""
    for a, b in zip(points[:-1], points[1:], strict=True):
        count = max(2, int(np.ceil(np.linalg.norm(b - a) / 1e-3)) + 1)
        for point in a + np.linspace(0.0, 1.0, count)[:, None] * (b - a):
            if clearance(obj, pose, point, radius) < -TOUCH:
                return False
    return True


def plan_pushes(obj: PushedObject, start, goal, *, contact_friction: float, finger_radius: float, finger=None,
                table=None, position_tolerance: float = 0.01, angle_tolerance: float = np.radians(5.0),
                max_pushes: int = 12, reachable: Callable[[np.ndarray], bool] | None = None) -> PushPlan:
    """Plan pushes from pose ``start`` to ``goal`` (x, y, θ; m, rad, world) with a finger of ``finger_radius``
    starting at ``finger`` (world x y; None = at the first push's start). ``table``: (x_min, y_min, x_max,
    y_max) the object must stay on; ``reachable(point)``: whether the arm can put its finger there."""
    start, goal = finite_vector(start, 3, "start"), finite_vector(goal, 3, "goal")
    reachable = reachable or (lambda point: True)
    pose, poses, pushes = start.copy(), [start.copy()], []

    def on_table(p) -> bool:
        if table is None:
            return True
        corners = to_world(p, obj.footprint)
        return bool(np.all((corners >= table[:2]) & (corners <= table[2:])))

    def result(success: bool, message: str) -> PushPlan:
        path, owners = [], []
        for index, push in enumerate(pushes):
            for part, owner in ((push.approach, -1), (push.path, index)):
                for point in part:
                    if path:
                        owners.append(owner)
                    path.append(point)
        return PushPlan(success, message, tuple(pushes), np.array(poses), np.array(path).reshape(-1, 2),
                        np.array(owners, dtype=int), _error(pose, goal))

    def within(p) -> bool:
        return bool(np.linalg.norm(p[:2] - goal[:2]) <= position_tolerance
                    and abs(wrap_angle(p[2] - goal[2])) <= angle_tolerance)

    if table is not None and not on_table(goal):
        return result(False, f"goal {goal.round(4).tolist()} puts the object outside the table (x "
                             f"{table[0]:g} to {table[2]:g} m, y {table[1]:g} to {table[3]:g} m)")
    if not reachable(goal[:2]):
        return result(False, f"goal {goal.round(4).tolist()} is unreachable for the arm")
    for _ in range(max_pushes):
        if within(pose):
            return result(True, f"{len(pushes)} push(es) bring the object within tolerance of the goal")
        best = None
        current = _cost(pose, goal, position_tolerance, angle_tolerance)
        remaining = float(np.linalg.norm(pose[:2] - goal[:2]))
        for contact, path in _candidates(obj, pose, remaining, finger_radius):
            budget.check()
            if clearance(obj, pose, path[0], finger_radius) < -TOUCH or not all(map(reachable, path)):
                continue
            simulated = simulate_push(obj, pose, path, PLAN_SPEED, PLAN_STEP, contact_friction, finger_radius)
            for k in range(1, len(simulated.poses)):
                if not on_table(simulated.poses[k]):
                    break
                cost = _cost(simulated.poses[k], goal, position_tolerance, angle_tolerance)
                if best is None or cost < best[0]:
                    best = (cost, contact, np.array([path[0], simulated.finger_positions[k]]),
                            simulated.poses[:k + 1])
        if best is None or best[0] >= current - 1e-3:
            return result(False, f"no push found within the search budget that brings the object closer to the "
                                 f"goal (after {len(pushes)} push(es), {_error(pose, goal)[0]:.4f} m and "
                                 f"{np.degrees(abs(_error(pose, goal)[1])):.1f} deg off)")
        _, contact, path, predicted = best
        previous = pushes[-1].path[-1] if pushes else (None if finger is None else finite_vector(finger, 2,
                                                                                              "finger"))
        approach = path[:1] if previous is None else reposition(obj, pose, previous, path[0], finger_radius)
        if not (_clear(obj, pose, approach, finger_radius) and all(map(reachable, approach))):
            return result(False, f"no clear repositioning path to the push at {path[0].round(4).tolist()}")
        pushes.append(Push(contact, approach, path, predicted))
        poses.extend(predicted[1:])
        pose = predicted[-1].copy()
    if within(pose):
        return result(True, f"{len(pushes)} push(es) bring the object within tolerance of the goal")
    return result(False, f"no push sequence within the search budget ({max_pushes} pushes) reaches the goal "
                         f"({_error(pose, goal)[0]:.4f} m and {np.degrees(abs(_error(pose, goal)[1])):.1f} deg off)")
