"""The arm as a pusher: its fingertip over the table, and finger paths as joint trajectories.

Finger paths. A path of straight finger segments (world x, y at the finger's height) is timed segment by
segment as rest-to-rest minimum-jerk motions, s(τ) = L (10τ³ − 15τ⁴ + 6τ⁵), whose peak speed 15L/(8T) is
capped per segment: at ``max_push_speed`` while the finger may touch the object (the quasistatic model holds
only for slow pushes) and at ``reposition_speed`` otherwise. Each sample becomes joint positions by the
fingertip's inverse kinematics (:mod:`discrete_robot.model.inverse_kinematics`, the ready orientation held on
a spatial arm), and the arm follows them with the simulators' tracker (computed torque on the discrete model,
efforts saturated at the model's limits). Why not the minimum-time planner: under a finger-speed cap far below
what the motors can do, its answer is the capped profile itself, while min-jerk keeps the accelerations, and
so the torques, smooth.
"""

from dataclasses import dataclass

import numpy as np

from discrete_robot.errors import InfeasibleError, InputError
from discrete_robot.manipulation.scene import DOWNWARD, TableScene
from discrete_robot.model.description import RobotModel
from discrete_robot.model.inverse_kinematics import ToolPoint, joint_path, tool_pose
from discrete_robot.validation import finite_scalar, finite_vector, positive_step

#: the peak speed of a min-jerk segment is this times its mean speed
MIN_JERK_PEAK = 15.0 / 8.0


@dataclass(frozen=True)
class ArmFinger:
    """The arm's fingertip moving at height ``height`` (m, world z of its centre): ``rotation`` is the tool
    link's orientation held while pushing (None for a planar arm, which cannot orient its tool)."""

    model: RobotModel
    tool: ToolPoint
    radius: float
    height: float
    rotation: np.ndarray | None
    ready: np.ndarray

    @classmethod
    def in_scene(cls, model: RobotModel, scene: TableScene, radius: float = 0.0) -> "ArmFinger":
        """The arm's fingertip (of ``radius`` m, 0 = the model file's) over the scene's table; InputError when
        the model has no fingertip or a spatial arm's ready configuration does not point it down."""
        tip = model.fingertip
        if tip is None:
            raise InputError(f"model '{model.name}' has no fingertip (docs/model_format.md)")
        radius = finite_scalar(radius, "finger radius", low=0.0) or tip.radius
        ready = finite_vector(scene.arm_ready_positions, model.dof, "arm_ready_positions")
        tool = ToolPoint.on(model, tip.link, tip.offset)
        if model.dof < 6:
            return cls(model, tool, radius, scene.table.height, None, ready)
        rotation = tool_pose(model, tool, ready)[1]
        axis = rotation @ tip.offset / np.linalg.norm(tip.offset)
        if axis[2] > -DOWNWARD:
            raise InputError(f"arm_ready_positions point the fingertip along {axis.round(3).tolist()}, not down")
        return cls(model, tool, radius, scene.table.height + radius + scene.finger_clearance, rotation, ready)

    def position(self, q) -> np.ndarray:
        """The fingertip centre's world (x, y), m."""
        return tool_pose(self.model, self.tool, q)[0][:2]

    def joint_path(self, xy, q_seed) -> np.ndarray:
        """Joint positions (k, n) for finger positions ``xy`` (k, 2) at the finger's height."""
        xy = np.atleast_2d(np.asarray(xy, dtype=float))
        points = np.column_stack([xy, np.full(len(xy), self.height)])
        return joint_path(self.model, self.tool, points, q_seed, self.rotation)

    def reaches(self, xy) -> bool:
        """Whether the fingertip can be put at the world point ``xy`` (m) at the finger's height: inverse
        kinematics from the ready configuration converges."""
        try:
            self.joint_path(np.asarray(xy, dtype=float)[None, :2], self.ready)
        except InfeasibleError:
            return False
        return True


@dataclass(frozen=True)
class FingerTrajectory:
    """Times (s), joint positions and velocities (rad, rad/s), the finger positions (m, world x y) they place
    the fingertip at, and the index of the path segment each sample ends (0 for the first sample)."""

    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    finger: np.ndarray
    segment: np.ndarray


def min_jerk_times(length: float, peak_speed: float, sample_time: float) -> tuple[np.ndarray, np.ndarray]:
    """(t, s): a rest-to-rest min-jerk motion over ``length`` (m) whose peak speed is ``peak_speed`` (m/s),
    sampled every ``sample_time`` (s) or finer; t from 0, s the distance covered."""
    duration = max(MIN_JERK_PEAK * length / peak_speed, sample_time)
    tau = np.linspace(0.0, 1.0, int(np.ceil(duration / sample_time)) + 1)
    return tau * duration, length * tau ** 3 * (10.0 - 15.0 * tau + 6.0 * tau ** 2)


def finger_trajectory(arm: ArmFinger, waypoints, pushing, q_start, max_push_speed: float,
                      reposition_speed: float, sample_time: float = 0.01) -> FingerTrajectory:
    """The joint trajectory moving the finger through ``waypoints`` (k, 2), segment i at most at
    ``max_push_speed`` when ``pushing[i]`` else ``reposition_speed`` (m/s), stopping at every waypoint."""
    waypoints = np.asarray(waypoints, dtype=float)
    max_push_speed = positive_step(max_push_speed, "max_push_speed")
    reposition_speed = positive_step(reposition_speed, "reposition_speed")
    if waypoints.ndim != 2 or waypoints.shape[1] != 2 or len(waypoints) < 2 or len(pushing) != len(waypoints) - 1:
        raise InputError(f"finger path: expected k >= 2 points (k, 2) and k - 1 pushing flags, got "
                         f"{waypoints.shape} and {len(pushing)}")
    times, fingers, segments, elapsed = [np.zeros(1)], [waypoints[:1]], [np.zeros(1, dtype=int)], 0.0
    for index, (a, b, push) in enumerate(zip(waypoints[:-1], waypoints[1:], pushing, strict=True)):
        length = float(np.linalg.norm(b - a))
        if length == 0.0:
            continue
        t, s = min_jerk_times(length, max_push_speed if push else reposition_speed, sample_time)
        times.append(elapsed + t[1:])
        fingers.append(a + (s[1:] / length)[:, None] * (b - a))
        segments.append(np.full(len(t) - 1, index))
        elapsed += float(t[-1])
    t, finger = np.concatenate(times), np.vstack(fingers)
    if len(t) < 2:
        raise InputError("finger path: every segment has zero length")
    q = arm.joint_path(finger, q_start)
    qd = np.gradient(q, t, axis=0)
    # rest to rest by construction (min-jerk ends at rest): the divided difference of the last two inverse-kinematics
    # solutions is not exactly zero, and a trajectory's last point must be at rest (FollowJointTrajectory)
    qd[0] = qd[-1] = 0.0
    return FingerTrajectory(t, q, qd, finger, np.concatenate(segments))
