"""The closed pushing chain: the object responds to the actual fingertip.

Every move of the fingertip, from where it was to where it is, moves the object by the minimum-power model
(:func:`discrete_robot.pushing.simulation.push_step`): contact is made and lost as the geometry says.
:class:`PushedObjectState` is that object side, used by :func:`execute_pushes` (the arm simulated in the core,
every simulator step) and by the manipulation node (the live arm's joint states).
"""

from dataclasses import dataclass

import numpy as np

from discrete_robot import budget
from discrete_robot.control.computed_torque import tracking_torques
from discrete_robot.control.trajectory import TrajectoryReference
from discrete_robot.discrete.dissipation import Dissipation
from discrete_robot.discrete.simulation import FixedStepSimulation
from discrete_robot.manipulation.arm import ArmFinger, FingerTrajectory
from discrete_robot.manipulation.scene import TableScene
from discrete_robot.model.dynamics import RigidBodySystem
from discrete_robot.pushing.object_model import PushedObject
from discrete_robot.pushing.simulation import clearance, push_step


class PushedObjectState:
    """The object's pose (x, y, θ) and the last fingertip centre (m, world), advanced by :meth:`follow`;
    ``penetration`` is the deepest the finger has sunk into the object (m, ≥ 0)."""

    def __init__(self, obj: PushedObject, pose, finger, radius: float, contact_friction: float):
        self.obj, self.radius, self.contact_friction = obj, float(radius), float(contact_friction)
        self.pose = np.asarray(pose, dtype=float)
        self.finger = np.asarray(finger, dtype=float)[:2]
        self.penetration = max(0.0, -clearance(obj, self.pose, self.finger, self.radius))

    def follow(self, finger) -> np.ndarray:
        """Move the fingertip to ``finger`` (world x, y) and the object with it; the new pose."""
        finger = np.asarray(finger, dtype=float)[:2]
        self.pose = push_step(self.obj, self.pose, self.finger, finger, self.contact_friction, self.radius).pose
        self.finger = finger
        self.penetration = max(self.penetration, -clearance(self.obj, self.pose, finger, self.radius))
        return self.pose


@dataclass(frozen=True)
class ExecutedPush:
    """The closed chain, sampled every simulator step: times (s), joint positions (rad), applied efforts
    (N m), fingertip centres (m, world x y) and object poses (x, y, θ); the deepest penetration of the finger
    into the object (m, ≥ 0)."""

    t: np.ndarray
    q: np.ndarray
    effort: np.ndarray
    finger: np.ndarray
    poses: np.ndarray
    penetration: float


def execute_pushes(arm: ArmFinger, scene: TableScene, trajectory: FingerTrajectory, pose, time_step: float = 1e-3,
                   settle: float = 0.5, kp: float = 400.0, kd: float = 40.0) -> ExecutedPush:
    """Simulate the arm tracking ``trajectory`` (then ``settle`` s holding its end) at ``time_step``, the object
    at ``pose`` responding to the actual fingertip (module docstring). Bounded work: :func:`budget.check` every
    step."""
    model = arm.model
    system = RigidBodySystem(model)
    simulation = FixedStepSimulation(system, "discrete", time_step, trajectory.q[0], np.zeros(model.dof),
                                     model.lower, model.upper, Dissipation.from_model(model), model.joint_names)
    reference = TrajectoryReference(trajectory.t, trajectory.q, trajectory.qd)
    steps = int(np.ceil((trajectory.t[-1] + settle) / time_step))
    state = PushedObjectState(scene.obj, pose, arm.position(simulation.q), arm.radius, scene.contact_friction)
    record = {"t": [0.0], "q": [simulation.q], "effort": [np.zeros(model.dof)], "finger": [state.finger],
              "poses": [state.pose]}
    for _ in range(steps):
        budget.check()
        tau = tracking_torques(system, simulation.q, simulation.qd, reference.sample(simulation.time), kp, kd,
                               model.effort_limits)
        simulation.step(1, lambda t, q, qd, tau=tau: tau)
        state.follow(arm.position(simulation.q))
        for key, value in (("t", simulation.time), ("q", simulation.q), ("effort", tau), ("finger", state.finger),
                           ("poses", state.pose)):
            record[key].append(value)
    return ExecutedPush(*(np.array(record[key]) for key in ("t", "q", "effort", "finger", "poses")),
                        state.penetration)
