"""Quasistatic push simulation: the object's pose while a finger follows a path.

Quasistatic motion depends on the finger's displacement, not on time: a
finger move from a to b (straight, over the table) moves the object by the
exponential of the predicted object-frame twist for the finger "velocity"
b - a over unit time. Moves longer than MAX_MOVE_FRACTION of the footprint
size are split, so that the twist (computed at the start of each piece) stays
accurate to first order.

Contact is geometric: the finger (a disk of radius R, or a point) touches the
footprint when its centre is at distance R from the outline. A free finger
moves until the first contact along its move (the footprint grown by R, see
:func:`~discrete_robot.pushing.polygon.first_contact_fraction`) and pushes for
the rest of the move; the contact point is the outline point nearest to the
finger centre and the normal points from the finger centre to it. A first-
order step can leave the finger slightly inside the footprint (the object
rotates under the finger): the object is then translated along the contact
normal until the finger touches it again. Contact is lost as the geometry
dictates: a finger moving away, or sliding past a corner, separates.

Poses are (x, y, theta) of the object frame in the world frame (m, rad). The pieces of a move run in the
compiled kernels of :mod:`.push_kernels` (one call per move: a physics step of the arm's scene takes one).
"""

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from discrete_robot import budget
from discrete_robot.errors import InputError
from discrete_robot.geometry2d import to_object, to_world
from discrete_robot.pushing.object_model import PushedObject
from discrete_robot.pushing.prediction import Contact, ContactMode, PushPrediction, predict_at_contact, to_object_frame
from discrete_robot.pushing.push_kernels import (
    CONTACT_TOLERANCE,
    DONE,
    finish_piece,
    gap,
    push_pieces,
    waypoint,
)
from discrete_robot.validation import bounded_count, finite_scalar, positive_step

MAX_MOVE_FRACTION = 0.02
MAX_STEPS = 200_000
#: at most this many short finger moves (MAX_MOVE_FRACTION of the object's size each) per request: bounded work
#: (a 1 m finger jump on a 1 micrometre object would otherwise be 5e7 moves)
MAX_MOVES = 100_000


@dataclass(frozen=True)
class PushStep:
    """The state after one finger move: object pose (world), finger centre (world), the contact mode of the move's
    last push (SEPARATING if it did not push) and that push's prediction (None if it did not push)."""

    pose: np.ndarray
    finger: np.ndarray
    mode: ContactMode
    prediction: PushPrediction | None


@dataclass(frozen=True)
class PushTrajectory:
    """Samples of a simulated push: times (s), object poses (m, 3) in the world, finger centres (m, 2), the contact
    mode of the step ending at each time (the first entry: that of the first step) and the center of rotation in
    the world (NaN when not pushing)."""

    times: np.ndarray
    poses: np.ndarray
    finger_positions: np.ndarray
    modes: list[ContactMode]
    centers_of_rotation: np.ndarray


def _geometry(obj: PushedObject) -> tuple[np.ndarray, float, float]:
    """The footprint as the kernels take it (C-ordered float (k, 2)), its size and scale (m)."""
    return np.ascontiguousarray(obj.footprint, dtype=float), float(obj.size), float(obj.scale)


def clearance(obj: PushedObject, pose, finger_world, radius: float) -> float:
    """Signed gap (m) between a finger disk of ``radius`` centred at ``finger_world`` and the object at ``pose``:
    negative when the finger penetrates the footprint."""
    finger = to_object(np.asarray(pose, dtype=float), np.asarray(finger_world, dtype=float)[:2])
    return float(gap(_geometry(obj)[0], float(finger[0]), float(finger[1]), float(radius))[0])


def push_step(obj: PushedObject, pose, finger_from, finger_to, contact_friction: float,
              pusher_radius: float = 0.0) -> PushStep:
    """Move the finger centre straight from ``finger_from`` to ``finger_to`` (world) and the object with it: the
    pieces in :func:`.push_kernels.push_pieces`, a prediction it hands back in :func:`predict_at_contact`."""
    pose = np.array(pose, dtype=float)      # a copy: the kernels move it in place
    start = np.ascontiguousarray(np.asarray(finger_from, dtype=float)[:2])
    target = np.ascontiguousarray(np.asarray(finger_to, dtype=float)[:2])
    if _segment_distance(pose[:2], start, target) > obj.circumradius + pusher_radius + CONTACT_TOLERANCE * obj.scale:
        # the finger passes outside the object's circumscribed circle: no contact, nothing to integrate
        return PushStep(pose=pose, finger=target, mode=ContactMode.SEPARATING, prediction=None)
    pieces = max(1, bounded_count(np.ceil(np.linalg.norm(target - start) / (MAX_MOVE_FRACTION * obj.scale)),
                                  MAX_MOVES, "finger move", "MAX_MOVES (moves of 2 % of the object's size)"))
    vertices, size, scale = _geometry(obj)
    radius, mu = float(pusher_radius), float(contact_friction)
    data, binding = obj.support.predictor.workspace()
    contact, work, last = np.empty(6), np.empty(7), np.zeros(5)
    prediction, first = None, 0
    while first < pieces:
        outcome, piece = push_pieces(binding, vertices, size, scale, obj.origin, pose, start, target, pieces, first,
                                     mu, radius, contact, work, last)
        if outcome == DONE:
            prediction = _kernel_prediction(obj, data, contact, last) if last[0] else None
            break
        prediction = predict_at_contact(obj, Contact(point=contact[0:2].copy(), normal=contact[2:4].copy()),
                                        contact[4:6].copy(), mu)
        finish_piece(vertices, size, scale, pose, prediction.twist, *waypoint(start, target, pieces, piece + 1),
                     radius)
        first = piece + 1
    mode = ContactMode.SEPARATING if prediction is None else prediction.mode
    return PushStep(pose=pose, finger=target, mode=mode, prediction=prediction)


def _kernel_prediction(obj: PushedObject, data, contact: np.ndarray, last: np.ndarray) -> PushPrediction:
    """The prediction of the last piece :func:`.push_kernels.push_pieces` pushed, from its contact (point,
    normal, move), ``last`` (pushed, status, side, support power, finger speed) and the predictor's results."""
    side = last[2]
    mode = ContactMode.STICKING if side == 0.0 else ContactMode.SLIDING_LEFT if side > 0.0 else \
        ContactMode.SLIDING_RIGHT
    return to_object_frame(obj, Contact(point=contact[0:2].copy(), normal=contact[2:4].copy()), contact[4:6].copy(),
                           float(last[4]), data.twist, data.force, mode, float(last[3]))


def _segment_distance(point, a, b) -> float:
    """Distance (m) from ``point`` to the segment from ``a`` to ``b``."""
    ab = b - a
    length2 = float(ab @ ab)
    s = 0.0 if length2 == 0.0 else min(1.0, max(0.0, float((point - a) @ ab) / length2))
    return float(np.hypot(*(a + s * ab - point)))


def _path(points) -> np.ndarray:
    path = np.asarray(points, dtype=float)
    if path.ndim != 2 or path.shape[0] < 2 or path.shape[1] not in (2, 3):
        raise InputError(f"pusher_path: expected at least 2 points [x, y], got shape {path.shape}")
    if not np.all(np.isfinite(path)):
        raise InputError("pusher_path must be finite (no NaN or inf)")
    return path[:, :2]


def iter_push_simulation(obj: PushedObject, initial_pose, pusher_path, pusher_speed: float, time_step: float,
                         contact_friction: float, pusher_radius: float = 0.0) -> Iterator[tuple[float, PushStep]]:
    """Yield (time, state) at t = 0, dt, 2 dt, ... while the finger follows ``pusher_path`` at ``pusher_speed``.

    Raises InputError for a bad path, speed, time step, friction or radius, a push needing more than
    :data:`MAX_STEPS` steps or :data:`MAX_MOVES` finger moves, or a finger that starts overlapping the
    object; BudgetExceededError when the active budget (:mod:`discrete_robot.budget`) runs out (checked every
    step).
    """
    path = _path(pusher_path)
    pose = np.asarray(initial_pose, dtype=float)
    if pose.shape != (3,) or not np.all(np.isfinite(pose)):
        raise InputError(f"object_pose: expected finite (x, y, theta), got {np.asarray(initial_pose).tolist()}")
    pusher_speed = positive_step(pusher_speed, "pusher_speed", smallest=1e-9)
    time_step = positive_step(time_step, "time_step", smallest=1e-9)
    for value, what in ((contact_friction, "contact_friction"), (pusher_radius, "pusher_radius")):
        finite_scalar(value, what, low=0.0)
    arc = np.concatenate([[0.0], np.cumsum(np.linalg.norm(np.diff(path, axis=0), axis=1))])
    if not np.isfinite(arc[-1]):
        raise InputError("pusher_path: its length overflows (coordinates too large)")
    if arc[-1] <= 0.0:
        raise InputError("pusher_path has zero length: the finger would not move")
    bounded_count(np.ceil(arc[-1] / (MAX_MOVE_FRACTION * obj.scale)), MAX_MOVES, "pusher_path",
                  "MAX_MOVES (moves of 2 % of the object's size)")
    duration = arc[-1] / pusher_speed
    steps = bounded_count(np.ceil(duration / time_step - 1e-9), MAX_STEPS, f"a push of {duration:.3g} s in "
                          f"time_step {time_step:g} s", "MAX_STEPS", hint="increase time_step")
    if clearance(obj, pose, path[0], pusher_radius) < -CONTACT_TOLERANCE * obj.scale:
        raise InputError(f"the finger starts overlapping the object at {path[0].tolist()}")
    yield 0.0, PushStep(pose=pose, finger=path[0], mode=ContactMode.SEPARATING, prediction=None)
    distance = 0.0
    for k in range(1, steps + 1):
        budget.check()
        time = min(k * time_step, duration)
        reached = time * pusher_speed if k < steps else arc[-1]
        corners = [i for i in range(1, len(path) - 1) if distance < arc[i] < reached]
        stations = [distance, *arc[corners], reached]
        finger_points = [np.array([np.interp(s, arc, path[:, 0]), np.interp(s, arc, path[:, 1])]) for s in stations]
        state = None
        for a, b in zip(finger_points[:-1], finger_points[1:], strict=True):
            state = push_step(obj, pose, a, b, contact_friction, pusher_radius)
            pose = state.pose
        distance = reached
        yield time, state


def simulate_push(obj: PushedObject, initial_pose, pusher_path, pusher_speed: float, time_step: float,
                  contact_friction: float, pusher_radius: float = 0.0) -> PushTrajectory:
    """The whole simulated push (see :func:`iter_push_simulation`)."""
    times, poses, fingers, states, centres = [], [], [], [], []
    for time, state in iter_push_simulation(obj, initial_pose, pusher_path, pusher_speed, time_step,
                                            contact_friction, pusher_radius):
        times.append(time)
        poses.append(state.pose)
        fingers.append(state.finger)
        states.append(state)
        cor = state.prediction.center_of_rotation if state.prediction is not None else np.full(2, np.nan)
        centres.append(to_world(state.pose, cor[None])[0] if np.all(np.isfinite(cor)) else np.full(2, np.nan))
    return PushTrajectory(times=np.array(times), poses=np.array(poses), finger_positions=np.array(fingers),
                          modes=step_modes(states), centers_of_rotation=np.array(centres))


def step_modes(steps: list[PushStep]) -> list[ContactMode]:
    """The contact mode of the step ending at each sample of :func:`iter_push_simulation`; the first sample (the
    start, which no step ends) takes that of the first step."""
    modes = [step.mode for step in steps]
    if len(modes) > 1:
        modes[0] = modes[1]
    return modes
