"""Quasistatic prediction of a pushed planar object by the principle of minimum power.

A finger (point, or disk of radius R) touches the footprint outline at c with
inward unit normal n and moves over the table with velocity v_p (its centre's
velocity, which is also the velocity of its material point at the contact:
the finger translates). Let t = perp(n) be the finger's left, looking from
the finger into the object. The object's twist xi gives the object's contact
point the velocity u(xi) = v + omega perp(c). The support dissipates
P(xi) = mu_s N int p |v(r)| dA (:mod:`discrete_robot.pushing.support`).

Modes and the motions compatible with each (Peshkin & Sanderson: the object
chooses, among them, the one of least power):

- separating (v_p . n <= 0): the finger leaves; no force, object at rest.
- sticking: u(xi) = v_p. Minimum power over this line of twists
  (xi = (v_p, 0) + omega (c_y, -c_x, 1), a 1-D convex problem in omega): the
  KKT multiplier of the two velocity equalities is the finger force f, and
  stationarity in omega says the support wrench is a pure force through c.
  Valid when f lies in the contact friction cone |f . t| <= mu_c f . n.
- sliding: only the normal component is imposed, u . n = v_p . n; the finger
  force lies on one edge of the cone, f = f_n (n + s mu_c t) with s = +1
  (sliding_left: the finger slides toward its left relative to the object, so
  its friction drags the object left) or s = -1 (sliding_right). The twist
  is the least-power one among those that take a given power from the edge
  wrench W = [n + s mu_c t; c x (n + s mu_c t)]: minimise P on the plane
  W . xi = 1 (a 2-D smooth convex problem, solved by Newton's method), whose
  stationarity dP/dxi = lambda W is exactly Newton's balance with the finger
  force on the edge; the twist is then scaled to match v_p . n.

Which mode applies follows from the sticking force: inside the cone it
sticks; outside on the left (f . t > 0) the finger slides left, on the right
it slides right. (The contact-point dissipation Q(u) = min over omega of P is
convex in u, so its gradient f turns monotonically with u: that makes the
mode unique and the sliding twist's slip consistent with its side.)

Exact (non-smooth) Coulomb friction: for weighted support points, a minimum
may put the center of rotation exactly on a support point, where P has a
kink. The resting point's static friction g (|g| <= mu_s w_k N) is then
solved for so that the balance holds exactly. Near a few points bunched
within ~1e-9 of the footprint size (which can nearly pivot freely) the
minimum is resolved in a chart centred on them (:func:`_rotation_near_point`).

Center of rotation: the point p with v + omega perp(p) = 0, p = perp(v)/omega.
For (near-)translation, when p would be farther than COR_FAR_FACTOR footprint
radii from the support centroid (or omega = 0), it is reported at exactly
that distance in the limiting direction perp(v) sign(omega) (sign(0) = +1) and
``is_translation`` is true. When separating the object is at rest and the
center of rotation is NaN.
"""

import contextlib
import enum
import logging
import math
from dataclasses import dataclass

import numpy as np

from discrete_robot.errors import ConvergenceError, InputError
from discrete_robot.geometry2d import perp
from discrete_robot.pushing import compiled
from discrete_robot.pushing.object_model import PushedObject
from discrete_robot.pushing.polygon import closest_on_outline, contains, outline_normal
from discrete_robot.pushing.power_program import PowerProgram, solve_power_program
from discrete_robot.pushing.support import PointSupport, SupportFriction
from discrete_robot.validation import finite_scalar, finite_vector

log = logging.getLogger(__name__)

COR_FAR_FACTOR = 1e6
#: contact points farther than this fraction of the footprint size from the outline are rejected
OUTLINE_TOLERANCE = 1e-6
#: the solvers' tolerances (their home is the kernels' module, which compiles them in)
NEWTON_TOLERANCE, ACCEPT_TOLERANCE = compiled.NEWTON_TOLERANCE, compiled.ACCEPT_TOLERANCE
GRADIENT_ROUNDING, MAX_ITERATIONS = compiled.GRADIENT_ROUNDING, compiled.MAX_ITERATIONS


class ContactMode(enum.Enum):
    STICKING = "sticking"
    SLIDING_LEFT = "sliding_left"
    SLIDING_RIGHT = "sliding_right"
    SEPARATING = "separating"


@dataclass(frozen=True)
class Contact:
    """Where the finger touches: a point of the outline and the unit normal into the object (object frame)."""

    point: np.ndarray
    normal: np.ndarray

    @property
    def left(self) -> np.ndarray:
        """The finger's left, looking from the finger into the object."""
        return perp(self.normal)


@dataclass(frozen=True)
class PushPrediction:
    """Instantaneous motion of a pushed object (object frame, SI units).

    ``twist`` = (v_x, v_y, omega): velocity of the object-frame origin and angular
    velocity; ``contact_force`` is the finger's force on the object;
    ``power`` = contact_force . pusher_velocity, all the power the finger
    spends (support friction plus contact sliding); ``support_power`` the part
    dissipated between object and table.
    """

    twist: np.ndarray
    center_of_rotation: np.ndarray
    mode: ContactMode
    contact_force: np.ndarray
    power: float
    support_power: float
    contact: Contact
    pusher_velocity: np.ndarray
    is_translation: bool


def _finite_vector(value, what: str) -> np.ndarray:
    """A planar vector from [x, y] or [x, y, z] (z ignored), finite."""
    array = np.asarray(value, dtype=float).ravel()
    if array.size not in (2, 3):
        raise InputError(f"{what}: expected [x, y], got {array.size} values")
    return finite_vector(array, array.size, what)[:2]


def contact_on_outline(obj: PushedObject, contact_point, pusher_radius: float = 0.0) -> Contact:
    """The contact at a point of the outline, with its inward normal; InputError if the point is off the outline
    or a finger of ``pusher_radius`` touching there would overlap the footprint elsewhere."""
    point = _finite_vector(contact_point, "contact_point")
    radius = finite_scalar(pusher_radius, "pusher_radius", low=0.0)
    size = obj.size
    closest, distance, edge, parameter = closest_on_outline(obj.footprint, point)
    if distance > OUTLINE_TOLERANCE * size:
        raise InputError(f"contact_point {point.tolist()} is {distance:.3g} m off the footprint outline "
                         f"(tolerance {OUTLINE_TOLERANCE * size:.2g} m): it must lie on the outline")
    normal = np.array(outline_normal(obj.footprint, edge, parameter, 1e-9 * size))
    if radius > 0.0:
        centre = closest - radius * normal
        clearance = closest_on_outline(obj.footprint, centre)[1]
        if contains(obj.footprint, centre[None])[0] or clearance < radius * (1.0 - 1e-6) - 1e-9 * size:
            raise InputError(f"a finger of radius {radius} m touching at {closest.tolist()} would overlap the "
                             "footprint elsewhere (the contact is inside a notch or at a concave corner)")
    return Contact(point=closest, normal=normal)


def predict_push(obj: PushedObject, contact_point, pusher_velocity, contact_friction: float,
                 pusher_radius: float = 0.0) -> PushPrediction:
    """Predict the object's motion when a finger touching at ``contact_point`` moves with ``pusher_velocity``.

    Raises InputError for a contact point off the outline, a zero or
    non-finite velocity, negative friction or radius.
    """
    velocity = _finite_vector(pusher_velocity, "pusher_velocity")
    if not velocity.any():
        raise InputError("pusher_velocity is zero: a quasistatic push needs a moving finger")
    mu = finite_scalar(contact_friction, "contact_friction", low=0.0)
    contact = contact_on_outline(obj, contact_point, pusher_radius)
    return predict_at_contact(obj, contact, velocity, mu)


def predict_at_contact(obj: PushedObject, contact: Contact, pusher_velocity: np.ndarray,
                       contact_friction: float) -> PushPrediction:
    """:func:`predict_push` for an already validated contact (the simulation's inner call): one call of the kernel
    :func:`.compiled.predict` in the local frame, and the Python minimum finders when its sliding Newton solve
    stalls at a kink of P (:func:`_kink_minimum`)."""
    velocity = np.asarray(pusher_velocity, dtype=float)[:2]
    speed = math.hypot(velocity[0], velocity[1])
    normal = contact.normal
    if velocity @ normal <= 1e-12 * speed:
        zero = np.zeros(2)
        return PushPrediction(np.zeros(3), np.full(2, np.nan), ContactMode.SEPARATING, zero, 0.0, 0.0, contact,
                              velocity, False)
    support = obj.support
    c, direction = (contact.point - obj.origin) / obj.scale, velocity / speed     # the support's local frame
    status, side, value, data = support.predictor(c, normal, direction, contact_friction)
    if status == compiled.STALLED:
        least, load = _kink_minimum(support, data.wrench.copy(), data.least.copy())
        status, value = compiled.sliding_motion(least, load, c, normal, data.left, direction, side, data.edge,
                                                data.twist, data.force)
    mode = ContactMode.STICKING if side == 0.0 else ContactMode.SLIDING_LEFT if side > 0.0 else \
        ContactMode.SLIDING_RIGHT
    if status != compiled.OK:
        raise ConvergenceError(_FAILURES[status].format(value=value, mode=mode.value))
    return to_object_frame(obj, contact, velocity, speed, data.twist, data.force, mode, value)


#: :func:`.compiled.predict`'s failures, with the failing quantity ``value``
_FAILURES = {
    compiled.NO_ROOT: "root of the power's slope not found",
    compiled.NO_STICKING_MINIMUM: "sticking minimum not found (moment residual {value:.3g})",
    compiled.PIVOT_AT_CONTACT: "the sticking motion rotates about a support point at the contact point",
    compiled.PIVOT_UNBALANCED: "sticking about support point {value:.0f}: its static friction cannot balance the "
                               "moment",
    compiled.NO_APPROACH: "sliding solution does not approach the contact (u.n = {value:.3g})",
    compiled.WRONG_SLIP: "{mode}: slip {value:.3g} has the wrong sign for its friction",
}


def to_object_frame(obj, contact, velocity, speed, local_twist, local_force, mode, local_power) -> PushPrediction:
    """Undo the local scaling: local twist and support power per unit local finger speed -> object-frame SI (in
    scalars: this runs once per prediction, where numpy's small-array calls cost more than the arithmetic)."""
    vx, vy = speed * float(local_twist[0]), speed * float(local_twist[1])     # the centroid's velocity, m/s
    omega = speed / obj.scale * float(local_twist[2])
    ox, oy = float(obj.origin[0]), float(obj.origin[1])
    far = COR_FAR_FACTOR * obj.scale
    centroid_speed = math.hypot(vx, vy)
    is_translation = centroid_speed >= far * abs(omega)
    if is_translation:
        reach = far * (1.0 if omega >= 0.0 else -1.0) / centroid_speed
        cor = np.array([ox - reach * vy, oy + reach * vx])
    else:
        cor = np.array([ox - vy / omega, oy + vx / omega])
    force = obj.friction_load * local_force
    return PushPrediction(twist=np.array([vx + omega * oy, vy - omega * ox, omega]), center_of_rotation=cor,
                          mode=mode, contact_force=force, power=float(force @ velocity),
                          support_power=float(obj.friction_load * speed * local_power), contact=contact,
                          pusher_velocity=velocity, is_translation=bool(is_translation))


def _kink_minimum(support: SupportFriction, wrench: np.ndarray, twist: np.ndarray):
    """min P on the plane wrench . xi = 1 where the kernel's damped Newton (:func:`.compiled.newton_on_plane`,
    from the ellipsoidal limit surface) stalled at ``twist`` and no rest on the slowest support point k balances
    (the kernel checked that first); returns (twist, dP/dxi).

    P of weighted points is not differentiable where the center of rotation meets a support point, and varies
    on the scale of their spacing near a cluster of close points. When Newton stalls near support point k and
    the minimum does not rest on k (whose static friction would complete the balance), it rotates about a
    point near k, which :func:`_rotation_near_point` resolves; failing that, the interior-point solver of
    :mod:`~discrete_robot.pushing.power_program` finds the minimum and the same checks, then Newton, finish it.
    A uniform polygon's P is smooth: a stall there is a failure.
    """
    if not isinstance(support, PointSupport):
        raise ConvergenceError(f"no twist found for the edge wrench {wrench.tolist()}")
    polished, gradient, converged = _rotation_near_point(support, wrench, twist,
                                                         compiled.slowest_point(support.model, twist))
    if converged:
        return polished, gradient
    twist = _power_program_minimum(support, wrench)
    k = compiled.slowest_point(support.model, twist)
    with contextlib.suppress(ConvergenceError):  # a rest on k: cheap to check first
        return _resting_point_twist(support, wrench, k)
    polished, gradient, converged = _rotation_near_point(support, wrench, twist, k)
    if converged:
        return polished, gradient
    polished, gradient, converged = _newton_on_plane(support, wrench, twist)
    if converged:
        return polished, gradient
    raise ConvergenceError(f"no twist found for the edge wrench {wrench.tolist()} near a support point")


def _power_program_minimum(support: PointSupport, wrench: np.ndarray) -> np.ndarray:
    """min P on wrench . xi = 1 by the interior-point cone program (slow, insensitive to kinks)."""
    points = support.points
    count = len(points)
    matrices = np.zeros((count, 2, 3))
    matrices[:, 0, 0] = matrices[:, 1, 1] = 1.0
    matrices[:, 0, 2] = -points[:, 1]
    matrices[:, 1, 2] = points[:, 0]
    program = PowerProgram(linear=np.zeros(3), norm_matrices=matrices, norm_offsets=np.zeros((count, 2)),
                           norm_weights=support.weights, equality_matrix=wrench[None, :],
                           equality_values=np.array([1.0]))
    return solve_power_program(program).x


def _twist_about(twist: np.ndarray, origin: np.ndarray) -> np.ndarray:
    """The same motion described in a frame at ``origin``: (velocity of origin, omega)."""
    return np.array([twist[0] - twist[2] * origin[1], twist[1] + twist[2] * origin[0], twist[2]])


def _wrench_about(wrench: np.ndarray, origin: np.ndarray) -> np.ndarray:
    """The same wrench with its moment taken about ``origin``."""
    return np.array([wrench[0], wrench[1], wrench[2] - perp(origin) @ wrench[:2]])


def _balanced(gradient: np.ndarray, wrench: np.ndarray, tolerance: float) -> bool:
    """Whether some multiple of ``wrench`` balances dP/dxi to ``tolerance`` (:func:`.compiled.balanced`)."""
    return bool(compiled.balanced(gradient, wrench, tolerance, GRADIENT_ROUNDING))


def _newton_on_plane(support: SupportFriction, wrench: np.ndarray, start: np.ndarray):
    """Damped Newton for min P on wrench . xi = 1 from ``start`` (:func:`.compiled.newton_on_plane`); returns
    (twist, dP/dxi, converged)."""
    twist, gradient = np.empty(3), np.empty(3)
    data, _ = support.predictor.workspace()
    converged = compiled.newton_on_plane(support.model, data, wrench, np.asarray(start, dtype=float), MAX_ITERATIONS,
                                         NEWTON_TOLERANCE, ACCEPT_TOLERANCE, GRADIENT_ROUNDING, twist, gradient)
    return twist, gradient, bool(converged)


def _rotation_near_point(support: PointSupport, wrench: np.ndarray, start: np.ndarray, k: int):
    """Newton for a minimum of P on wrench . xi = 1 that rotates about a point near support point k, from
    ``start``; returns (twist, dP/dxi, converged).

    Two things defeat :func:`_newton_on_plane` there. Precision: its chart
    fixes a point's velocity only to ~1e-16 |xi| (a difference of O(|xi|)
    numbers), so when k and a few points ~1e-9 apart move slowly their
    directions, and the reduced gradient, stall at rounding noise. Conditioning:
    when the wrench's line passes that close to the cluster, rotations about it
    receive almost no power (W . xi ~ 1e-9 |xi|), the plane W . xi = 1 is nearly
    parallel to the minimiser's ray and Newton's step along it is meaningless.
    Here, in a frame at r_k, the variable is u, the velocity of r_k per unit
    rotation rate (xi' = (u, +-1); the center of rotation is r_k - perp(u)), and
    the objective is the power ratio R(u) = P(xi') / (W' . xi'), homogeneous of
    degree 0, whose stationary points are those of P on the plane (grad P =
    R W'): small velocities are the variables themselves, and near the minimum
    the Hessian of R is that of P over W' . xi' (its other terms cancel when
    grad P = R W'), well conditioned on this chart. Newton uses that Hessian
    (positive semi-definite everywhere) with an Armijo search on R.
    """
    origin = support.points[k]
    local = support.shifted(origin)
    frame_wrench = _wrench_about(wrench, origin)
    start_frame = _twist_about(start, origin)
    if start_frame[2] == 0.0:
        return start, support.dissipation(start)[1], False
    sense = math.copysign(1.0, start_frame[2])
    force = frame_wrench[:2]

    def evaluate(u):
        twist = np.array([u[0], u[1], sense])
        received = frame_wrench @ twist
        if received <= 0.0:  # outside the half-space where the wrench drives the motion
            return np.inf, None, None, twist, None
        power, gradient, hessian = local.dissipation(twist, hessian=True)
        ratio = power / received
        return ratio, (gradient[:2] - ratio * force) / received, hessian[:2, :2] / received, twist, gradient

    u = start_frame[:2] / abs(start_frame[2])
    ratio, slope, curvature, twist, gradient = evaluate(u)
    for _ in range(MAX_ITERATIONS):
        if gradient is None or _balanced(gradient, frame_wrench, NEWTON_TOLERANCE):
            break
        curvature = curvature + 1e-14 * np.trace(curvature) * np.eye(2)
        step = -np.linalg.solve(curvature, slope)
        decrease = slope @ step
        resolvable = -decrease > 1e-11 * ratio  # as in _newton_on_plane: below that, trust the slope
        length = 1.0
        while True:
            trial = evaluate(u + length * step)
            armijo = trial[0] <= ratio + 1e-4 * length * decrease
            if armijo or (not resolvable and trial[0] < np.inf) or length < 1e-12:
                break
            length *= 0.5
        if length < 1e-12 or not np.isfinite(trial[0]):
            break
        u = u + length * step
        ratio, slope, curvature, twist, gradient = trial
    if gradient is None:
        return start, support.dissipation(start)[1], False
    scale = 1.0 / (frame_wrench @ twist)
    converged = _balanced(gradient, frame_wrench, ACCEPT_TOLERANCE)
    return _twist_about(scale * twist, -origin), _wrench_about(gradient, -origin), converged


def _resting_point_twist(support: PointSupport, wrench: np.ndarray, k: int):
    """Rotation about support point k at rest, balanced by its static friction (:func:`.compiled.resting_point_twist`);
    returns (twist, lambda wrench)."""
    data, _ = support.predictor.workspace()
    twist, load = np.empty(3), np.empty(3)
    if compiled.resting_point_twist(support.model, data, wrench, k, twist, load):
        return twist, load
    raise ConvergenceError(f"no twist found for the edge wrench {wrench.tolist()} at a support-point kink")
