"""Push-to-pose as one request: the object (the scene's, or overridden), the pushes that bring it to the goal,
the arm's finger motion that makes them, and how far what happened lies from what was planned.

The pushes come from :func:`discrete_robot.manipulation.push_planning.plan_pushes` (the minimum-power model integrated
as ``simulate_push`` does); every finger point they need must be reachable by the arm with its fingertip at
the table height (inverse kinematics from the arm's ready configuration). The finger first moves from where
it is to the first push's approach, then through each push's approach (repositioning, fast) and push path
(slow: ``max_push_speed``).
"""

from dataclasses import dataclass

import numpy as np

from discrete_robot.errors import InfeasibleError
from discrete_robot.geometry2d import wrap_angle
from discrete_robot.manipulation.arm import ArmFinger, FingerTrajectory, finger_trajectory
from discrete_robot.manipulation.push_planning import PushPlan, plan_pushes
from discrete_robot.manipulation.scene import TableScene
from discrete_robot.pushing.object_model import PushedObject, make_pushed_object
from discrete_robot.validation import finite_scalar, finite_vector


@dataclass(frozen=True)
class PushGoal:
    """The object to push, its start and goal poses (x, y, θ: m, rad, world) and the finger friction."""

    obj: PushedObject
    start: np.ndarray
    goal: np.ndarray
    contact_friction: float


@dataclass(frozen=True)
class PushMotion:
    """A planned push-to-pose: the pushes, the finger motion making them, the push each trajectory sample
    belongs to (-1: repositioning) and the planned object poses (k, 3)."""

    plan: PushPlan
    trajectory: FingerTrajectory
    push_index: np.ndarray
    planned_poses: np.ndarray


def pose_error(pose, goal) -> tuple[float, float]:
    """(position error m, angle error rad in (−π, π]) of ``pose`` from ``goal``."""
    pose, goal = np.asarray(pose, dtype=float), np.asarray(goal, dtype=float)
    return float(np.linalg.norm(pose[:2] - goal[:2])), wrap_angle(pose[2] - goal[2])


def push_goal(scene: TableScene, goal, start, footprint=(), normal_force: float = 0.0,
              support_friction: float = 0.0, contact_friction: float = -1.0) -> PushGoal:
    """The request's object: the scene's, with any field the request gives replaced (0, or a negative finger
    friction, or an empty footprint = the scene's). InputError names the bad field."""
    goal = finite_vector(goal, 3, "goal")
    start = finite_vector(start, 3, "start")
    obj = scene.obj
    if len(footprint) or normal_force or support_friction:
        obj = make_pushed_object(footprint if len(footprint) else obj.footprint,
                                 support_friction or obj.support_friction, normal_force or obj.normal_force)
    friction = scene.contact_friction if contact_friction < 0.0 else finite_scalar(contact_friction,
                                                                                 "contact_friction", low=0.0)
    return PushGoal(obj, start, goal, friction)


def plan_push_motion(arm: ArmFinger, scene: TableScene, request: PushGoal, q_now, max_push_speed: float,
                     reposition_speed: float, position_tolerance: float, angle_tolerance: float) -> PushMotion:
    """Plan the pushes and the finger motion from the arm's state ``q_now``; InfeasibleError with the planner's
    reason (goal off the table, unreachable for the arm, no push within the search budget)."""
    table = (scene.table.x[0], scene.table.y[0], scene.table.x[1], scene.table.y[1])
    finger = arm.position(q_now)
    plan = plan_pushes(request.obj, request.start, request.goal, contact_friction=request.contact_friction,
                       finger_radius=arm.radius, finger=finger, table=table, position_tolerance=position_tolerance,
                       angle_tolerance=angle_tolerance, reachable=arm.reaches)
    if not plan.success:
        raise InfeasibleError(plan.message)
    owners = np.array([-1, *plan.segment_push])
    trajectory = finger_trajectory(arm, np.vstack([finger, plan.finger_path]), owners >= 0, q_now, max_push_speed,
                                   reposition_speed)
    return PushMotion(plan, trajectory, owners[trajectory.segment], np.asarray(plan.poses, dtype=float))


def path_difference(planned, executed) -> tuple[float, float]:
    """(m, rad): the largest distance of an executed pose from the planned path (its nearest planned pose), and
    the largest angle between an executed pose and that nearest planned pose."""
    planned, executed = np.atleast_2d(planned), np.atleast_2d(executed)
    distances = np.linalg.norm(executed[:, None, :2] - planned[None, :, :2], axis=2)
    nearest = np.argmin(distances, axis=1)
    angles = np.abs(wrap_angle(executed[:, 2] - planned[nearest, 2]))
    return float(np.max(distances[np.arange(len(executed)), nearest])), float(np.max(angles))
