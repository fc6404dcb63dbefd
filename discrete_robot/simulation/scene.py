"""The table scene inside the arm's simulator, without ROS: objects pushed by the fingertip, their load on the arm.

At every physics step (:meth:`SceneWorld.step`):

1. the arm takes its step under τ + τ_ext, where τ_ext = J(q)ᵀ f is the load of the contact forces ``f`` found
   in the previous step (J: the fingertip centre's translational Jacobian in the world frame at the step's
   start state, by the compiled kernel of :mod:`discrete_robot.simulation.fingertip`; f: the force the objects
   exert on the finger, in the table plane, z = 0);
2. the fingertip centre moves from where forward kinematics put it before the step to where it puts it after,
   and each object it touches moves by the minimum-power model (:func:`discrete_robot.pushing.simulation.push_step`,
   the push core's quasistatic solution); the force of that solution, minus the finger's force on the object
   (:attr:`~discrete_robot.pushing.prediction.PushPrediction.contact_force`, N: μ_s N times the support's
   normalised force), turned into the world frame by the object's orientation in which it was predicted, is the
   load of the next step.

The coupling is explicit at the step boundary: the force a step finds acts over the next one (a lag of one step
in a quasistatic force, which depends on the finger's direction, not its speed). Objects do not touch each
other or the table's edges; the finger reaches them in the table plane (the planar projection the push core
works in). The world is a function of its inputs: the same start state, torques and steps give the same bits,
however the steps are chunked, since every step is taken alone, in order, by the same arithmetic.
"""

from dataclasses import dataclass

import numpy as np

from discrete_robot import budget
from discrete_robot.errors import InputError
from discrete_robot.geometry2d import rotation2d
from discrete_robot.model.inverse_kinematics import ToolPoint
from discrete_robot.pushing.object_model import PushedObject
from discrete_robot.pushing.simulation import push_step
from discrete_robot.simulation.fingertip import Fingertip
from discrete_robot.validation import finite_vector


@dataclass(frozen=True)
class SceneObject:
    """An object of the scene: its ``name`` (the frame ``objects/<name>``), the pushed object (footprint,
    support pressure and friction), the finger-object friction coefficient and its start pose (x, y, θ; m, rad,
    world)."""

    name: str
    obj: PushedObject
    contact_friction: float
    start_pose: np.ndarray


class SceneWorld:
    """The objects of a scene pushed by the fingertip (a sphere of ``radius`` m centred at ``tool``) of the arm
    ``model`` (a RobotModel), and the force they exert on it. ``poses`` (name -> (x, y, θ)) are the objects'
    poses; ``force`` the total force on the finger (N, world x y) that the next step applies to the arm."""

    def __init__(self, model, tool: ToolPoint, radius: float, objects: list[SceneObject], q):
        self.model, self.tool, self.radius, self.objects = model, tool, float(radius), list(objects)
        self._fingertip = Fingertip(model, tool)
        self.reset(q)

    @classmethod
    def from_scene(cls, arm, scene, q) -> "SceneWorld":
        """The object of a table scene (discrete_robot.manipulation.scene, named ``object``) pushed by ``arm``'s
        fingertip (discrete_robot.manipulation.arm.ArmFinger), the arm at joint positions q."""
        objects = [SceneObject("object", scene.obj, scene.contact_friction, scene.start_pose)]
        return cls(arm.model, arm.tool, arm.radius, objects, q)

    def reset(self, q) -> None:
        """The arm at joint positions q and the objects where they start; no force on the finger."""
        self.poses = {item.name: np.array(item.start_pose, dtype=float) for item in self.objects}
        self.force = np.zeros(2)
        self._place(q)

    def checked_poses(self, poses: dict) -> dict:
        """``poses`` (name -> (x, y, θ)) as float vectors; InputError for a name the scene does not have or a pose
        that is not three finite numbers."""
        unknown = sorted(set(poses) - set(self.poses))
        if unknown:
            raise InputError(f"object poses: the scene has no object named {unknown} (it has {sorted(self.poses)})")
        return {name: finite_vector(pose, 3, f"pose of object {name!r}") for name, pose in poses.items()}

    def set_state(self, q, poses: dict) -> None:
        """The arm at joint positions q and the objects named in ``poses`` (name -> (x, y, θ)) there, the others
        where they are; no force on the finger. InputError as :meth:`checked_poses` says, and nothing changes."""
        self.poses = {**self.poses, **self.checked_poses(poses)}
        self.force = np.zeros(2)
        self._place(q)

    def _place(self, q) -> None:
        """The fingertip centre (world x y) at joint positions q, and those positions."""
        self._q = np.array(q, dtype=float)
        self.finger = self._fingertip.position(self._q)[:2].copy()

    def load(self, q) -> np.ndarray:
        """τ_ext = J(q)ᵀ f (N m): the joint torques of the force ``f`` on the finger at joint positions q."""
        if not self.force.any():
            return np.zeros(self.model.dof)
        jacobian = self._fingertip.jacobian(np.ascontiguousarray(q, dtype=float))
        return jacobian[:2].T @ self.force

    def step(self, simulation, count: int, torques) -> None:
        """Advance ``simulation`` (a FixedStepSimulation of the same arm) by ``count`` steps, each under
        ``torques`` (a function of (t, q, q̇), or efforts held over the steps) plus the scene's load, the objects
        following the fingertip. A state set on the simulation since the last step is taken as it is (the
        fingertip placed there; the objects stay). Bounded work: :func:`budget.check` every step."""
        for _ in range(count):
            budget.check()
            q = simulation.q
            if not np.array_equal(q, self._q):
                self._place(q)
            tau = torques(simulation.time, q, simulation.qd) if callable(torques) else torques
            simulation.step(1, np.asarray(tau, dtype=float) + self.load(q))
            self._follow(simulation.q)

    def _follow(self, q) -> None:
        """The fingertip from where it was to its place at q: each object it touches moves, and the force of
        their minimum-power solutions becomes the force on the finger."""
        start = self.finger
        self._place(q)
        force = np.zeros(2)
        for item in self.objects:
            pushed = push_step(item.obj, self.poses[item.name], start, self.finger, item.contact_friction,
                               self.radius)
            self.poses[item.name] = pushed.pose
            if pushed.prediction is not None:
                # predicted in the object's orientation at the last piece's start: the step's end less its turn
                angle = pushed.pose[2] - pushed.prediction.twist[2]
                force -= rotation2d(angle) @ pushed.prediction.contact_force
        self.force = force
