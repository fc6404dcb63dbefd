"""Executing joint trajectories as ros2_controllers' joint_trajectory_controller (JTC, ``kilted``) does.

The node around it is thin: it hands this module trajectory messages (anything shaped like
trajectory_msgs/JointTrajectory and control_msgs' JointTolerance; no ROS import here), the simulated time and
the robot's state, and reports what comes back. Upstream lines cited below are those of
``joint_trajectory_controller/src/joint_trajectory_controller.cpp`` (cpp), ``include/.../tolerances.hpp``
(hpp) and ``src/trajectory.cpp`` on ros2_controllers' ``kilted`` branch (commit 0f8eb14e1); docs/jtc.md
compares the two point by point.

- **Goal acceptance** (:func:`validate_trajectory`, cpp 1667-1812): a goal that does not name every joint
  (unless ``allow_partial_joints_goal``), names none, has no points, names an unknown joint, ends with a
  non-zero velocity (unless ``allow_nonzero_velocity_at_trajectory_end``), is stamped and already over, has
  times that do not strictly increase or points whose fields do not match the joint names is refused with
  the reason, before it is accepted. Sizes are checked before any per-point work.
- **Tolerances** (:func:`goal_tolerances`, hpp 95-288): per joint, in the path and at the goal, for position,
  velocity and acceleration; 0 = unchecked. The defaults come from the parameters (``constraints.<joint>.
  trajectory`` and ``.goal``, ``constraints.stopped_velocity_tolerance`` for the goal velocity,
  ``constraints.goal_time``, 0 = wait without limit). A goal's tolerance > 0 replaces the default, 0 keeps
  it, −1 removes it; any other value, or a tolerance for an unknown joint, is reported and the goal runs
  with the defaults.
- **The update** (:meth:`JointTrajectoryController.update`, cpp 239-589): each tick the reference is sampled
  and compared with the state. Before the last point (and on the first tick) a path tolerance violated
  aborts the goal (PATH_TOLERANCE_VIOLATED) and the robot holds where it is; after the last point, within
  the goal tolerances the goal succeeds and the robot holds the last point; still outside them
  ``goal_time`` after the last point it aborts (GOAL_TOLERANCE_VIOLATED) and holds where it is.
- **Which joints** (:func:`controller_joints`): JTC's ``joints`` parameter when set, else the joints a URDF's
  ``<ros2_control>`` tags give a command interface, else every joint; the rest are held at rest where they
  were (discrete_robot.control.computed_torque's ``embed_reference`` makes the reference of every joint from the
  controller's).
- **Continuous joints** (``ControllerSettings.wraparound``, :func:`continuous_joints`): a joint's position error
  is the shortest angle (cpp 1488-1500) and a motion starts from its position moved by whole turns to within π
  of the first point (trajectory.cpp 78-96), so it goes the short way.
- A ``~/joint_trajectory`` message replaces the trajectory only (:meth:`JointTrajectoryController.follow_message`,
  cpp 1381-1395): a running goal stays active with its tolerances.
- A new goal preempts the running one (aborted, INVALID_GOAL, cpp 1820-1833); a cancel holds where the robot
  is (cpp 1419-1449). Result strings begin with JTC's and add the numbers.

The acceleration error is zero, as in JTC with an effort command interface (cpp 1512: it is computed only with
an acceleration command interface), so acceleration tolerances never trip.
"""

import enum
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from discrete_robot.control.trajectory import (
    MAX_KNOT_VALUE,
    MAX_POINTS,
    Interpolation,
    JointNamesError,
    Reference,
    TrajectoryReference,
)
from discrete_robot.errors import InputError
from discrete_robot.geometry2d import wrap_angle
from discrete_robot.model.description import JointType

#: JTC compares velocities and the −1 of a tolerance with float's epsilon (cpp 1717, hpp 139)
FLOAT_EPSILON = float(np.finfo(np.float32).eps)

#: JTC's result strings (cpp 478, 506, 520, 1827); ours append the numbers after them
SUCCEEDED = "Goal successfully reached!"
PATH_VIOLATED = "Aborted due to path tolerance violation"
GOAL_TIME_EXCEEDED = "Aborted due to goal_time_tolerance exceeding by {:f} seconds"
PREEMPTED = "Current goal preempted by new incoming action."


class ErrorCode(enum.IntEnum):
    """control_msgs/action/FollowJointTrajectory's result codes (same values)."""

    SUCCESSFUL = 0
    INVALID_GOAL = -1
    INVALID_JOINTS = -2
    OLD_HEADER_TIMESTAMP = -3
    PATH_TOLERANCE_VIOLATED = -4
    GOAL_TOLERANCE_VIOLATED = -5


@dataclass(frozen=True)
class Outcome:
    """How a goal ended: the code and a readable reason."""

    code: ErrorCode
    message: str


@dataclass(frozen=True)
class StateTolerances:
    """Per-joint limits on |error| (model joint order; rad or m, /s, /s²); 0 = unchecked."""

    position: np.ndarray
    velocity: np.ndarray
    acceleration: np.ndarray


@dataclass(frozen=True)
class Tolerances:
    """Path and goal tolerances and the goal time tolerance (s after the last point; 0 = no limit)."""

    path: StateTolerances
    goal: StateTolerances
    goal_time: float


@dataclass(frozen=True)
class ControllerSettings:
    """JTC's parameters that shape execution (joint_trajectory_controller_parameters.yaml, same names).

    ``trajectory`` and ``goal`` are ``constraints.<joint>.trajectory`` and ``.goal`` in ``joints`` order."""

    joints: tuple[str, ...]
    trajectory: np.ndarray
    goal: np.ndarray
    goal_time: float = 0.0
    stopped_velocity_tolerance: float = 0.01
    allow_partial_joints_goal: bool = False
    allow_nonzero_velocity_at_trajectory_end: bool = False
    interpolation: Interpolation = Interpolation.SPLINES
    allow_integration_in_goal_trajectories: bool = False
    #: s after the last point before a trajectory is given up for holding where the robot is; 0 = never (JTC's
    #: cmd_timeout as it takes effect: only when above constraints.goal_time, :func:`effective_cmd_timeout`)
    cmd_timeout: float = 0.0
    #: per joint, the deceleration of a stop instead of holding where the robot is (JTC's decelerate_on_cancel as
    #: it takes effect, :func:`effective_deceleration`), rad/s² or m/s²; None = hold
    deceleration: np.ndarray | None = None
    #: s between the controller's updates: the stop's points are this far apart (JTC's update_period_)
    update_period: float = 0.01
    #: per joint, whether its position error is the shortest angle (JTC's joints_angle_wraparound_: the URDF's
    #: continuous joints, cpp 90-116); None = no joint
    wraparound: np.ndarray | None = None

    def default_tolerances(self) -> Tolerances:
        """The tolerances of a goal that gives none (hpp 95-127): path position ``trajectory``, goal position
        ``goal`` and goal velocity ``stopped_velocity_tolerance``; the rest unchecked."""
        zero = np.zeros(len(self.joints))
        return Tolerances(StateTolerances(self.trajectory.copy(), zero, zero),
                          StateTolerances(self.goal.copy(), np.full_like(zero, self.stopped_velocity_tolerance), zero),
                          self.goal_time)


def effective_cmd_timeout(cmd_timeout: float, goal_time: float) -> tuple[float, str | None]:
    """JTC's ``cmd_timeout`` as it takes effect at activation (cpp 1227-1246): itself when above
    ``constraints.goal_time``, else 0 (off) with the reason; s."""
    if cmd_timeout <= 0.0:
        return 0.0, None
    if cmd_timeout > goal_time:
        return cmd_timeout, None
    return 0.0, (f"cmd_timeout must be higher than constraints.goal_time ({cmd_timeout:f} vs. {goal_time:f}); the "
                 f"command timeout is off")


def effective_deceleration(decelerate_on_cancel: bool, max_deceleration: np.ndarray,
                           velocity_limits: np.ndarray | None, joints: Sequence[str]) -> tuple[np.ndarray | None,
                                                                                            str | None]:
    """JTC's ``constraints.decelerate_on_cancel`` as it takes effect (cpp 136-172): each joint's
    ``max_deceleration_on_cancel`` when every one is > 0 and every joint has a velocity limit > 0 (the URDF's; a
    model's infinite limit is an absent one), else None (hold where the robot is) with the reason."""
    if not decelerate_on_cancel:
        return None, None
    for i, joint in enumerate(joints):
        if not max_deceleration[i] > 0.0:
            return None, (f"joint [{joint}] invalid max_deceleration_on_cancel [{max_deceleration[i]:.1f}]; "
                          f"falling back to hold position on cancel")
        if velocity_limits is None or not 0.0 < velocity_limits[i] < math.inf:
            return None, (f"joint [{joint}] has no velocity limit in the URDF; falling back to hold position on "
                          f"cancel")
    return np.asarray(max_deceleration, dtype=float), None


def stop_points(q: np.ndarray, qd: np.ndarray, deceleration: np.ndarray, period: float):
    """The ramp to rest from (q, q̇) at constant deceleration a per joint (decelerate_to_hold_position, cpp
    1847-1933): times k·period (s, from 0) up to the last joint's stop time t_s = |q̇|/a; before its t_s a joint is
    at q + q̇ t − s a t²/2 with velocity q̇ − s a t (not past 0) and acceleration −s a (s the sign of q̇, + for 0),
    after it at rest at q + s q̇²/(2a). Returns (times, positions, velocities, accelerations), (points, n)."""
    direction = np.where(qd >= 0.0, 1.0, -1.0)
    stop_time = np.abs(qd) / deceleration
    held = q + direction * qd ** 2 / (2.0 * deceleration)
    times = np.arange(int(math.ceil(stop_time.max() / period)) + 1) * period
    t = times[:, None]
    moving = (t < stop_time) & (np.abs(qd) > FLOAT_EPSILON)
    velocities = np.where(moving, qd - direction * deceleration * t, 0.0)
    velocities = np.where(velocities * direction < 0.0, 0.0, velocities)
    positions = np.where(moving, q + qd * t - 0.5 * direction * deceleration * t ** 2, held)
    accelerations = np.where(moving, -direction * deceleration, 0.0)
    return times, positions, velocities, accelerations


def controller_joints(dof_names: Sequence[str], command_interfaces: Sequence[tuple[str, Sequence[str]]] = (),
                      requested: Sequence[str] = ()) -> tuple[str, ...]:
    """The joints the controller drives, in its order: ``requested`` (JTC's ``joints`` parameter, yaml 2-11:
    unique names) when given; else the degrees of freedom ``command_interfaces`` (a URDF's ``<ros2_control>``
    ``<joint>``s, ``RobotModel.command_interfaces``) gives at least one command interface, in model order; else
    every degree of freedom. A mimic follower in the tags is not a degree of freedom (it moves with its leader)
    and is skipped. InputError when ``requested`` names a joint twice or one that is not a degree of freedom,
    or when the tags give no degree of freedom a command interface."""
    dofs = list(dof_names)
    if requested:
        names = list(requested)
        unknown = [name for name in names if name not in dofs]
        if unknown:
            raise InputError(f"joints: {unknown} are not joints of the robot (its joints: {dofs})")
        if len(set(names)) != len(names):
            raise InputError(f"joints: names a joint twice: {names}")
        return tuple(names)
    if not command_interfaces:
        return tuple(dofs)
    commanded = {joint for joint, interfaces in command_interfaces if interfaces}
    names = tuple(name for name in dofs if name in commanded)
    if not names:
        raise InputError(f"<ros2_control>: no joint of the robot {dofs} has a <command_interface>; name the "
                         f"controller's joints with the joints parameter")
    return names


def continuous_joints(model, joints: Sequence[str]) -> np.ndarray:
    """Per joint of ``joints``, whether it is continuous: a revolute joint of ``model`` (a RobotModel) without
    position limits, which the URDF reader reads from ``type="continuous"`` (and writes back as such)."""
    names, lower, upper = list(model.joint_names), model.lower, model.upper
    revolute = {name for link in model.links if link.joint.type is JointType.REVOLUTE
                for name in link.joint.dof_names}
    return np.array([name in revolute and np.isneginf(lower[names.index(name)])
                     and np.isposinf(upper[names.index(name)]) for name in joints], dtype=bool)


def shortest_angle(start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """end − start wrapped into [−π, π), rad (angles::shortest_angular_distance: normalize_angle(end − start)):
    wrap_angle's (−π, π] turned over, 0 − wrap_angle(start − end): the same arithmetic to the bit (0 − rather than
    a negation, which would make a zero distance −0)."""
    return 0.0 - wrap_angle(start - end)


def unwrap_start(q: np.ndarray, first: np.ndarray, wraparound: np.ndarray) -> np.ndarray:
    """The robot's positions ``q`` as the point a motion to ``first`` starts from: each wraparound joint moved by
    whole turns to within π of ``first`` (trajectory.cpp's wraparound_joint, 78-96: first − shortest angle; at
    exactly ±π, within 1e-9, the distance takes the sign of first − q), the others unchanged."""
    distance = shortest_angle(q, first)
    half_turn = np.abs(np.abs(distance) - np.pi) < 1e-9
    distance = np.where(half_turn, np.where(first > q, np.abs(distance), -np.abs(distance)), distance)
    return np.where(wraparound, first - distance, q)


def integrate_points(times: np.ndarray, positions: np.ndarray, velocities: np.ndarray,
                     accelerations: np.ndarray) -> None:
    """Fill, in place and point by point, the points without positions (NaN rows) as JTC's
    ``deduce_from_derivatives`` does per segment (trajectory.cpp 409-449, with allow_integration_in_goal_
    trajectories): over a segment of duration Δt from point k−1 to a point k without positions, point k−1's
    missing velocities and accelerations become 0, point k's missing velocities v_k = v_{k−1} + (a_{k−1} + a_k)
    Δt / 2, and its positions p_k = p_{k−1} + (v_{k−1} + v_k) Δt / 2 (trapezoidal). ``times`` (points,) s;
    the arrays (points, n); point 0 must have positions (the robot's state, prepended, where the first point
    has none)."""
    for k in np.flatnonzero(np.isnan(positions).all(axis=1)):
        dt = times[k] - times[k - 1]
        if np.isnan(velocities[k - 1]).all():
            velocities[k - 1] = 0.0
        if np.isnan(velocities[k]).all():
            if np.isnan(accelerations[k - 1]).all():
                accelerations[k - 1] = 0.0
            velocities[k] = velocities[k - 1] + (accelerations[k - 1] + accelerations[k]) * 0.5 * dt
        positions[k] = positions[k - 1] + (velocities[k - 1] + velocities[k]) * 0.5 * dt


def resolve_tolerance(default: float, given: float) -> float:
    """A goal's tolerance against the default (hpp 129-154): > 0 replaces it, 0 keeps it, −1 (to float's
    epsilon) removes it (0 = unchecked); ValueError for any other value."""
    if given > 0.0:
        return given
    if abs(given + 1.0) < FLOAT_EPSILON:
        return 0.0
    if given < 0.0 or math.isnan(given):
        raise ValueError(given)
    return default


def goal_tolerances(defaults: Tolerances, joints: Sequence[str], path_tolerance, goal_tolerance,
                    goal_time: float) -> tuple[Tolerances, str | None]:
    """The tolerances a goal asks for (hpp 165-288) and, when it asks for something invalid, the reason the
    defaults are used instead. ``path_tolerance``/``goal_tolerance``: JointTolerance-shaped (name, position,
    velocity, acceleration); ``goal_time``: the goal's goal_time_tolerance, s."""
    try:
        time_tolerance = resolve_tolerance(defaults.goal_time, goal_time)
    except ValueError:
        return defaults, f"illegal goal_time_tolerance {goal_time:g} s; using the default tolerances"
    joints = list(joints)
    resolved = []
    for what, given, default in (("path_tolerance", path_tolerance, defaults.path),
                                 ("goal_tolerance", goal_tolerance, defaults.goal)):
        values = {name: getattr(default, name).copy() for name in ("position", "velocity", "acceleration")}
        named = [tolerance.name for tolerance in given]
        twice = sorted({name for name in named if named.count(name) > 1})
        if twice:
            # JTC lets the last one win (hpp 178-288 overwrite in turn); which one the client meant is unknowable,
            # so the goal gets what JTC gives any tolerance it cannot use: the defaults, with the reason
            return defaults, (f"goal.{what} names {twice} more than once; using the default tolerances")
        for tolerance in given:
            if tolerance.name not in joints:
                return defaults, (f"joint '{tolerance.name}' in goal.{what} does not exist (the joints are "
                                  f"{joints}); using the default tolerances")
            i = joints.index(tolerance.name)
            for name, array in values.items():
                try:
                    array[i] = resolve_tolerance(array[i], float(getattr(tolerance, name)))
                except ValueError:
                    return defaults, (f"joint '{tolerance.name}' in goal.{what} has an invalid {name} tolerance "
                                      f"{getattr(tolerance, name)!r} (> 0, 0 = default or -1 = none); using the "
                                      f"default tolerances")
        resolved.append(StateTolerances(**values))
    return Tolerances(resolved[0], resolved[1], time_tolerance), None


def seconds(stamp) -> float:
    """builtin_interfaces Time or Duration (sec, nanosec) -> s."""
    return stamp.sec + stamp.nanosec * 1e-9


@dataclass(frozen=True)
class TrajectoryGoal:
    """A validated trajectory in the controller's joint order.

    ``stamp``: header stamp, s (0 = start on receipt); ``times``: time_from_start per point, s; ``positions``
    (points, n) with NaN columns for joints a partial goal leaves out (and NaN rows for points without positions,
    with ``allow_integration_in_goal_trajectories``); ``velocities``, ``accelerations``,
    ``efforts``: None (no point has them) or (points, n) with NaN rows where a point has none."""

    stamp: float
    times: np.ndarray
    positions: np.ndarray
    velocities: np.ndarray | None
    accelerations: np.ndarray | None
    efforts: np.ndarray | None


def validate_trajectory(settings: ControllerSettings, trajectory, now: float) -> TrajectoryGoal:
    """``trajectory`` (JointTrajectory-shaped) checked as JTC checks a goal or a topic message (cpp 1667-1812)
    at simulated time ``now`` (s), in the controller's joint order; InputError (JointNamesError for the names)
    says why not. The sizes are checked before any per-point work, so a huge message costs nothing."""
    joints, names, points = list(settings.joints), list(trajectory.joint_names), trajectory.points
    dof = len(joints)
    if len(points) > MAX_POINTS:
        raise InputError(f"trajectory: {len(points)} points, more than {MAX_POINTS}")
    if not settings.allow_partial_joints_goal and len(names) != dof:
        raise JointNamesError(f"trajectory: joint_names must name each of the controller's joints {joints} "
                              f"(allow_partial_joints_goal is false), got {len(names)} names")
    if not names:
        raise JointNamesError("trajectory: empty joint_names")
    if not points:
        raise InputError("trajectory: empty trajectory (no points)")
    unknown = [name for name in names if name not in joints]
    if unknown:
        raise JointNamesError(f"trajectory: unknown joint name(s) {unknown}; the controller's joints are {joints}")
    if len(set(names)) != len(names):
        raise JointNamesError(f"trajectory: joint_names names a joint twice: {names}")
    final_velocities = np.asarray(points[-1].velocities, dtype=float)
    if not settings.allow_nonzero_velocity_at_trajectory_end and final_velocities.size:
        moving = np.flatnonzero(~(np.abs(final_velocities) <= FLOAT_EPSILON))
        if moving.size:
            i = int(moving[0])
            raise InputError(f"trajectory: the velocity of the last point of joint {names[min(i, len(names) - 1)]} "
                             f"is not zero: {final_velocities[i]:.15g} (allow_nonzero_velocity_at_trajectory_end "
                             f"is false)")
    stamp = seconds(trajectory.header.stamp)
    times = np.array([seconds(p.time_from_start) for p in points])
    if stamp != 0.0 and stamp + times[-1] < now:
        raise InputError(f"trajectory.header.stamp: the trajectory starts at {stamp:.6f} s and ends at "
                         f"{stamp + times[-1]:.6f} s, in the past (now {now:.6f} s)")
    steps = np.flatnonzero(np.diff(times) <= 0.0)
    if steps.size:
        i = int(steps[0])
        raise InputError(f"trajectory: time_from_start must be strictly increasing; points {i} and {i + 1} are at "
                         f"{times[i]:g} s and {times[i + 1]:g} s")
    order = [names.index(name) if name in names else -1 for name in joints]
    integrate = settings.allow_integration_in_goal_trajectories
    if integrate:
        # each point needs one of positions, velocities, accelerations (cpp 1767-1791); the first, positions
        # (JTC would integrate from an empty vector)
        empty = [i for i, p in enumerate(points) if not (len(p.positions) or len(p.velocities)
                                                         or len(p.accelerations))]
        if empty:
            raise InputError(f"trajectory: point {empty[0]} has no positions, velocities or accelerations")
        if not len(points[0].positions) and (stamp if stamp != 0.0 else now) + times[0] <= now:
            # integrated from the state the motion starts from, which a trajectory already under way has not
            raise InputError("trajectory: point 0 has no positions and is not ahead of now; it cannot be "
                             "integrated from the robot's state (allow_integration_in_goal_trajectories)")
    positions = _field(points, "positions", len(names), order, required=not integrate)
    if positions is None:          # integrated from the robot's state
        positions = np.full((len(points), dof), np.nan)
    velocities, accelerations, efforts = (_field(points, name, len(names), order)
                                          for name in ("velocities", "accelerations", "effort"))
    return TrajectoryGoal(stamp, times, positions, velocities, accelerations, efforts)


def _field(points, name: str, count: int, order: list[int], required: bool = False) -> np.ndarray | None:
    """One field of every point as (points, n) in the controller's order (NaN for joints not named, and rows of
    NaN for points without the field), or None when no point has it; InputError for a size or value problem."""
    rows = [getattr(p, name) for p in points]
    sizes = np.array([len(row) for row in rows])
    given = sizes > 0
    if required and not given.all() or np.any(given & (sizes != count)):
        i = int(np.flatnonzero((sizes != count) if required else given & (sizes != count))[0])
        raise InputError(f"trajectory: point {i} has {sizes[i]} {name}, and the trajectory names {count} joints")
    if not given.any():
        return None
    values = np.full((len(points), count), np.nan)
    values[given] = np.array([row for row in rows if len(row)], dtype=float)
    if not np.isfinite(values[given]).all():
        raise InputError(f"trajectory: {name} must be finite (no NaN or infinity)")
    if np.abs(values[given]).max() > MAX_KNOT_VALUE:
        raise InputError(f"trajectory: {name} must lie within ±{MAX_KNOT_VALUE:g}, got up to "
                         f"{np.abs(values[given]).max():.3g}")
    ordered = np.full((len(points), len(order)), np.nan)
    for j, source in enumerate(order):
        if source >= 0:
            ordered[:, j] = values[:, source]
    if name != "positions":
        ordered[given] = np.nan_to_num(ordered[given])     # a joint a partial goal leaves out: 0 (cpp 1582-1593)
    return ordered


@dataclass(frozen=True)
class Ended:
    """A goal that ended: the caller's token for it and the outcome (``canceled`` for a cancel)."""

    goal: object
    outcome: Outcome
    canceled: bool = False


@dataclass(frozen=True)
class Update:
    """One tick: the desired state, the error (desired − actual), the index of the point ahead (in the
    message's numbering), the time since the trajectory's start, and the goal that ended on it, if any."""

    desired: Reference
    position_error: np.ndarray
    velocity_error: np.ndarray
    index: int
    time_from_start: float
    ended: Ended | None = None


def _violations(joints, tolerances: StateTolerances, position_error, velocity_error) -> str | None:
    """The joints whose errors exceed a checked (> 0) tolerance, described, or None (hpp 297-344)."""
    parts = []
    for what, error, limit in (("position", position_error, tolerances.position),
                               ("velocity", velocity_error, tolerances.velocity)):
        for i in np.flatnonzero((limit > 0.0) & (np.abs(error) > limit)):
            parts.append(f"{joints[i]} {what} error {error[i]:.4g} exceeds {limit[i]:.4g}")
    return "; ".join(parts) or None


@dataclass
class JointTrajectoryController:
    """JTC's goal life cycle around one robot: the trajectory followed, the goal it belongs to, holding.

    Times are simulated seconds; states are in ``settings.joints`` order. ``reference`` is None while the robot
    takes effort commands instead (the node's ``joint_effort_commands``)."""

    settings: ControllerSettings
    reference: TrajectoryReference | None = None
    goal: object = None
    holding: bool = True
    tolerances: Tolerances | None = None
    origin: float = 0.0            # s: the trajectory's start (its stamp, or when it was received)
    offset: int = 0                # 1 when the robot's state was prepended as the point the motion starts from
    first_sample: bool = False
    last: Update | None = field(default=None, repr=False)

    def __post_init__(self):
        self.defaults = self.settings.default_tolerances()

    def configure(self, settings: ControllerSettings) -> None:
        """New parameters (JTC re-reads them each update, cpp 263-265); a running goal keeps its tolerances."""
        self.settings, self.defaults = settings, settings.default_tolerances()

    def follow(self, trajectory: TrajectoryGoal, now: float, q: np.ndarray, qd: np.ndarray, goal: object,
               tolerances: Tolerances | None = None) -> Ended | None:
        """Follow ``trajectory`` from ``now`` for the accepted ``goal`` with ``tolerances`` (None: the defaults);
        the goal it replaces ends (preempted: INVALID_GOAL, cpp 1455-1478, 1820-1833)."""
        ended = self.stop(Outcome(ErrorCode.INVALID_GOAL, PREEMPTED))
        self._start(trajectory, now, q, qd)
        self.goal, self.tolerances = goal, self.defaults if tolerances is None else tolerances
        return ended

    def follow_message(self, trajectory: TrajectoryGoal, now: float, q: np.ndarray, qd: np.ndarray) -> None:
        """Follow ``trajectory`` from the ``~/joint_trajectory`` topic (cpp 1381-1395): it replaces the trajectory
        followed, and nothing else. A running goal stays active, keeps its tolerances (the topic callback neither
        preempts the goal nor writes active_tolerances_, which only a goal does, cpp 1478) and is checked against
        the new trajectory; its result comes from it."""
        self._start(trajectory, now, q, qd)

    def _start(self, trajectory: TrajectoryGoal, now: float, q: np.ndarray, qd: np.ndarray) -> None:
        """The reference from ``trajectory`` at ``now`` (moving again: not holding, the first sample ahead)."""
        self.origin = trajectory.stamp if trajectory.stamp != 0.0 else now
        times = self.origin + trajectory.times
        positions = trajectory.positions.copy()
        given = ~np.isnan(positions).all(axis=1)
        missing = np.isnan(positions) & given[:, None]
        positions[missing] = np.broadcast_to(q, positions.shape)[missing]     # partial goals hold the rest
        velocities, accelerations, efforts = trajectory.velocities, trajectory.accelerations, trajectory.efforts
        if not given.all():        # points to integrate: room for the velocities and accelerations it fills
            velocities, accelerations = (np.full_like(positions, np.nan) if values is None else values.copy()
                                         for values in (velocities, accelerations))
        self.offset = int(now < times[0])
        if self.offset:
            # the motion starts from the robot's state (cpp 315, trajectory.cpp 50-76): position (continuous joints
            # unwrapped to the first point), velocity, and zero acceleration where the first point has accelerations
            if self.settings.wraparound is not None and given[0]:
                q = unwrap_start(q, positions[0], self.settings.wraparound)
            times = np.concatenate([[now], times])
            positions = np.vstack([q, positions])
            velocities = None if velocities is None else np.vstack([qd, velocities])
            accelerations = None if accelerations is None else np.vstack([np.zeros_like(q), accelerations])
            efforts = None if efforts is None else np.vstack([efforts[:1], efforts])
        if not given.all():
            integrate_points(times, positions, velocities, accelerations)
        self.reference = TrajectoryReference(times, positions, velocities, efforts, accelerations,
                                             self.settings.interpolation)
        self.holding, self.first_sample = False, True

    def halt(self, now: float, q: np.ndarray, qd: np.ndarray) -> None:
        """Come to rest from (q, q̇): with ``deceleration`` along :func:`stop_points` from ``now``, else hold ``q``
        (JTC's choice between decelerate_to_hold_position and set_hold_position, cpp 365-373, 486-497, 535-545,
        554-562, 570-578, 1437-1446); the stop counts as holding (its tolerances unchecked)."""
        deceleration = self.settings.deceleration
        if deceleration is None:
            self.hold(now, q)
            return
        times, positions, velocities, accelerations = stop_points(q, qd, deceleration, self.settings.update_period)
        self.reference = TrajectoryReference(now + times, positions, velocities, None, accelerations,
                                             self.settings.interpolation)
        self.origin, self.offset, self.holding = now, 0, True

    def hold(self, now: float, q: np.ndarray) -> None:
        """Hold the positions ``q`` at rest from ``now`` (JTC's set_hold_position, cpp 1835-1845)."""
        self.reference = TrajectoryReference(np.array([now]), q[None, :].copy())
        self.origin, self.offset, self.holding = now, 0, True

    def stop(self, outcome: Outcome, canceled: bool = False) -> Ended | None:
        """End the running goal, if any, with ``outcome``; the trajectory is kept (the caller holds or replaces)."""
        if self.goal is None:
            return None
        ended, self.goal = Ended(self.goal, outcome, canceled), None
        return ended

    def release(self, outcome: Outcome) -> Ended | None:
        """Stop following any trajectory (effort commands take over); the running goal ends with ``outcome``."""
        ended = self.stop(outcome)
        self.reference, self.holding = None, True
        return ended

    def cancel(self, goal: object, now: float, q: np.ndarray, qd: np.ndarray | None = None) -> Ended | None:
        """Cancel ``goal`` if it is the running one: it ends CANCELED and the robot comes to rest from (q, q̇) (holds
        where it is without a deceleration; cpp 1419-1449)."""
        if goal is None or goal is not self.goal:
            return None
        self.halt(now, q, np.zeros_like(q) if qd is None else qd)
        how = "holding the position reached" if self.settings.deceleration is None else "decelerating to rest"
        return self.stop(Outcome(ErrorCode.SUCCESSFUL, f"canceled at t = {now:.3f} s; {how}"), canceled=True)

    def sample(self, t: float, q: np.ndarray | None = None) -> Reference | None:
        """The desired state at simulated time t, or None without a trajectory (for the control law). Given the
        measured positions ``q``, each wraparound joint's desired position is moved by whole turns to within π of
        q, so that the law's q_d − q is JTC's error, the shortest angle (cpp 1495-1500)."""
        if self.reference is None:
            return None
        desired = self.reference.sample(t)
        wraparound = self.settings.wraparound
        if q is not None and wraparound is not None and wraparound.any():
            desired.q[wraparound] = q[wraparound] + shortest_angle(q[wraparound], desired.q[wraparound])
        return desired

    def update(self, now: float, q: np.ndarray, qd: np.ndarray) -> Update | None:
        """One controller tick at ``now`` with the measured state (cpp 296-585); None without a trajectory."""
        reference = self.reference
        if reference is None:
            self.last = None
            return None
        desired = reference.sample(now)
        position_error, velocity_error = self._position_error(desired.q, q), desired.qd - qd
        index, time_from_start = max(desired.index - self.offset, 0), now - self.origin
        before_last_point = now < reference.end
        joints, tolerances = self.settings.joints, self.tolerances or self.defaults
        ended = None
        since_end = now - reference.end
        if (not self.holding and not before_last_point and self.settings.cmd_timeout > 0.0
                and since_end > self.settings.cmd_timeout):
            # JTC holds where the robot is (cpp 355-375); that tick's checks then skip the held trajectory, so a
            # running goal counts as reached and the last point is held (cpp 499-516)
            if self.goal is None:
                self.halt(now, q, qd)
            else:
                self._hold_last_point(now)
                ended = self.stop(Outcome(ErrorCode.SUCCESSFUL, f"{SUCCEEDED} (cmd_timeout: {since_end:.3f} s after "
                                                                f"the last point, the goal tolerances unchecked)"))
        if not self.holding:
            path = ((before_last_point or self.first_sample)
                    and _violations(joints, tolerances.path, position_error, velocity_error))
            outside = None if before_last_point else _violations(joints, tolerances.goal, position_error,
                                                                 velocity_error)
            if path:
                self.halt(now, q, qd)
                ended = self.stop(Outcome(ErrorCode.PATH_TOLERANCE_VIOLATED,
                                          f"{PATH_VIOLATED}: {path} at t = {now:.3f} s"))
            elif not before_last_point and outside is None:
                if self.goal is not None:
                    self._hold_last_point(now)
                    ended = self.stop(Outcome(ErrorCode.SUCCESSFUL, f"{SUCCEEDED} {since_end:.3f} s after the "
                                                                    f"last point; largest position error "
                                                                    f"{np.abs(position_error).max():.3g}"))
            elif outside is not None and tolerances.goal_time != 0.0 and since_end > tolerances.goal_time:
                self.halt(now, q, qd)
                ended = self.stop(Outcome(ErrorCode.GOAL_TOLERANCE_VIOLATED,
                                          f"{GOAL_TIME_EXCEEDED.format(since_end)}: {outside}"))
        self.first_sample = False
        self.last = Update(desired, position_error, velocity_error, index, time_from_start, ended)
        return self.last

    def _position_error(self, desired: np.ndarray, q: np.ndarray) -> np.ndarray:
        """desired − q; for a wraparound joint the shortest angle from q to desired (cpp 1488-1500)."""
        error = desired - q
        wraparound = self.settings.wraparound
        if wraparound is not None:
            error[wraparound] = shortest_angle(q[wraparound], desired[wraparound])
        return error

    def _hold_last_point(self, now: float) -> None:
        """Repeat the last point as given, velocities and efforts included (set_success_trajectory_point, cpp
        1935-1947)."""
        last = self.reference.sample(self.reference.end)
        self.reference = TrajectoryReference(np.array([now]), last.q[None, :], last.qd[None, :],
                                             None if last.effort is None else last.effort[None, :],
                                             last.qdd[None, :])
        self.origin, self.offset, self.holding = now, 0, True

    def query(self, t: float) -> tuple[str | None, Reference | None]:
        """The trajectory's desired state at simulated time t for ``~/query_state`` (cpp 755-799): (None, state),
        or (the reason, None) when there is no trajectory or t lies before its start or past its end."""
        reference = self.reference
        if reference is None:
            return "currently there is no valid trajectory instance", None
        if t < reference.start:
            return f"the requested time {t:.6f} s is before the trajectory's start ({reference.start:.6f} s)", None
        if t >= reference.end:
            return f"the requested time {t:.6f} s is at or past the trajectory's end ({reference.end:.6f} s)", None
        return None, reference.sample(t)
