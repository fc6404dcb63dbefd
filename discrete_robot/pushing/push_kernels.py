"""The push simulation's finger moves as numba kernels: contact geometry, separation and the minimum-power step.

:func:`discrete_robot.pushing.simulation.push_step` splits a finger move into pieces of 2 % of the object's size
and, for each, finds the contact, predicts the push and moves the object (the mechanics are in
:mod:`.simulation`'s docstring). In numpy each piece cost ~100 µs of small-array calls around the compiled
prediction; :func:`push_pieces` does the pieces in one call: the outline point nearest to the finger and whether
the finger is inside (:mod:`.polygon`'s compiled ``_nearest_on_outline`` and ``inside``), the contact normal
(:func:`contact_normal`), the first contact along a move (``polygon.first_contact_fraction``), the prediction
(:func:`discrete_robot.pushing.compiled.predict` on the support's own Binding) and the SE(2) step
(:func:`discrete_robot.geometry2d.se2_exp_step`). A prediction the kernel does not finish (a sliding Newton solve
stalled at a kink of P, or a failure) is handed back to Python (:func:`.prediction.predict_at_contact`, which
resolves the kink or raises the error).

Poses (x, y, θ): world, m, rad; finger points: world (m) unless "object frame" is said.
"""

import math

from discrete_robot.geometry2d import se2_exp_step, to_object
from discrete_robot.jit import njit
from discrete_robot.pushing.compiled import OK, predict
from discrete_robot.pushing.polygon import _nearest_on_outline, first_contact_fraction, inside, outline_normal

#: the finger touches when its gap to the outline is below this fraction of the footprint size
CONTACT_TOLERANCE = 1e-7
#: :func:`push_pieces`' answers: every piece done; stopped at a piece whose prediction Python must make
DONE, RESOLVE = 0, 1


@njit
def gap(vertices, px, py, radius):
    """The signed clearance (m) between a finger disk of ``radius`` at (px, py) (object frame) and the footprint
    (negative: overlap), and the outline point nearest to the centre: (gap, x, y, distance, edge, parameter,
    inside)."""
    x, y, distance, edge, parameter = _nearest_on_outline(vertices, px, py)
    within = inside(vertices, px, py)
    return (-distance if within else distance) - radius, x, y, distance, edge, parameter, within


@njit
def contact_normal(vertices, size, px, py, x, y, distance, edge, parameter, within):
    """The unit normal into the object at the contact of a finger centred at (px, py) whose nearest outline point
    is (x, y): from the centre to that point, or the outline's own normal when the centre is on or inside the
    outline (object frame)."""
    if not within and distance > 1e-9 * size:
        return (x - px) / distance, (y - py) / distance
    return outline_normal(vertices, edge, parameter, 1e-9 * size)


@njit
def separate(vertices, size, scale, pose, wx, wy, radius):
    """Translate the object at ``pose`` (in place) along the contact normal so that a finger disk centred at the
    world point (wx, wy) and overlapping it just touches it."""
    px, py = to_object(pose, (wx, wy))
    clearance, x, y, distance, edge, parameter, within = gap(vertices, px, py, radius)
    if clearance >= -CONTACT_TOLERANCE * scale:
        return
    nx, ny = contact_normal(vertices, size, px, py, x, y, distance, edge, parameter, within)
    sx, sy = px + radius * nx - x, py + radius * ny - y
    c, s = math.cos(pose[2]), math.sin(pose[2])
    pose[0] += c * sx - s * sy
    pose[1] += s * sx + c * sy


@njit
def waypoint(start, target, pieces, i):
    """The finger at the start of piece i of ``pieces`` (i = pieces: the target): start + i/pieces (target −
    start), as np.linspace spaces them."""
    s = 1.0 if i == pieces else i * (1.0 / pieces)
    return start[0] + s * (target[0] - start[0]), start[1] + s * (target[1] - start[1])


@njit
def _contact_of_piece(vertices, size, scale, pose, ax, ay, bx, by, radius, contact):
    """The start of a piece from (ax, ay) to (bx, by): the object separated from the finger, and the contact of
    the push if the finger reaches the object: contact[0:2] its point, [2:4] the inward normal, [4:6] the
    finger's remaining move (object frame). Returns whether the finger pushes (touches and approaches)."""
    separate(vertices, size, scale, pose, ax, ay, radius)
    px, py = to_object(pose, (ax, ay))
    c, s = math.cos(pose[2]), math.sin(pose[2])
    mx, my = c * (bx - ax) + s * (by - ay), -s * (bx - ax) + c * (by - ay)
    clearance = gap(vertices, px, py, radius)[0]
    if clearance > CONTACT_TOLERANCE * scale:
        fraction = first_contact_fraction(vertices, px, py, mx, my, radius)
        if fraction < 0.0 or fraction >= 1.0:
            return False
        px, py = px + fraction * mx, py + fraction * my
        mx, my = (1.0 - fraction) * mx, (1.0 - fraction) * my
    _, x, y, distance, edge, parameter, within = gap(vertices, px, py, radius)
    nx, ny = contact_normal(vertices, size, px, py, x, y, distance, edge, parameter, within)
    contact[0], contact[1], contact[2], contact[3], contact[4], contact[5] = x, y, nx, ny, mx, my
    return mx * nx + my * ny > 1e-12 * math.hypot(mx, my)


@njit
def finish_piece(vertices, size, scale, pose, twist, bx, by, radius):
    """The end of a piece: the object at ``pose`` (in place) moved for unit time by the object-frame ``twist``
    (:func:`discrete_robot.geometry2d.se2_exp_step`), then separated from the finger at (bx, by)."""
    pose[0], pose[1], pose[2] = se2_exp_step(pose, twist)
    separate(vertices, size, scale, pose, bx, by, radius)


@njit
def push_pieces(binding, vertices, size, scale, origin, pose, start, target, pieces, first, mu, radius, contact,
                work, last):
    """Pieces ``first``.. ``pieces`` − 1 of the finger's move from ``start`` to ``target`` (piece i from
    :func:`waypoint` i to i + 1), the object at ``pose`` moving in place; ``binding`` the
    support's prediction Binding (:class:`.compiled.Predictor`), ``origin`` and ``scale`` its local frame.

    Per piece: the contact (:func:`_contact_of_piece`, written to ``contact``), the prediction in the support's
    local frame (c = (point − origin) / scale, unit direction), its object-frame twist (speed · local twist,
    ω = speed / scale · local ω, about the object frame's origin) into work[0:3] and :func:`finish_piece`.
    ``last`` [pushed, status, side, value, speed] describes the last piece done. Returns (RESOLVE, i) at the
    first piece i whose prediction did not come back OK (contact written, ``pose`` separated for it), else
    (DONE, pieces)."""
    c, direction = work[3:5], work[5:7]
    for i in range(first, pieces):
        ax, ay = waypoint(start, target, pieces, i)
        bx, by = waypoint(start, target, pieces, i + 1)
        last[0] = 0.0
        if not _contact_of_piece(vertices, size, scale, pose, ax, ay, bx, by, radius, contact):
            continue
        speed = math.hypot(contact[4], contact[5])
        c[0], c[1] = (contact[0] - origin[0]) / scale, (contact[1] - origin[1]) / scale
        direction[0], direction[1] = contact[4] / speed, contact[5] / speed
        status, side, value = predict(binding, c, contact[2:4], direction, mu)
        if status != OK:
            return RESOLVE, i
        local = binding.data.twist
        vx, vy, omega = speed * local[0], speed * local[1], speed / scale * local[2]
        work[0], work[1], work[2] = vx + omega * origin[1], vy - omega * origin[0], omega
        finish_piece(vertices, size, scale, pose, work[0:3], bx, by, radius)
        last[0], last[1], last[2], last[3], last[4] = 1.0, status, side, value, speed
    return DONE, pieces
