"""A fixed-base robot's simulated world, without ROS: the live simulation, its initial state, its diagnostics."""

import numpy as np

from discrete_robot.discrete.dissipation import Dissipation
from discrete_robot.discrete.simulation import FixedStepSimulation
from discrete_robot.errors import InputError
from discrete_robot.model.dynamics import RigidBodySystem
from discrete_robot.simulation.checks import check_fixed_base_world


class FixedBaseWorld:
    """``model`` (a RobotModel) simulated by ``integrator`` at ``time_step`` s from (q0, v0), with the model's joint
    stops and dissipation (discrete_robot.discrete.simulation), and the objects of ``scene`` (a
    :class:`~discrete_robot.simulation.scene.SceneWorld`, or None) pushed by its fingertip in the same steps;
    refused at once (ModelError) when a simulator could not serve it
    (:func:`~discrete_robot.simulation.checks.check_fixed_base_world`)."""

    def __init__(self, model, integrator: str, time_step: float, q0: np.ndarray, v0: np.ndarray, scene=None):
        self.model, self.q0, self.v0, self.scene = model, q0, v0, scene
        self.system = RigidBodySystem(model)
        self.simulation = FixedStepSimulation(self.system, integrator, time_step, q0, v0, model.lower, model.upper,
                                              Dissipation.from_model(model), model.joint_names)
        self._diagnosed = (0, 0.0)  # Newton iterations and simulated time at the last diagnostics
        self.energy0 = self.simulation.energy()
        check_fixed_base_world(self.simulation, model, integrator)
        if scene is not None:
            scene.reset(self.simulation.q)

    def step(self, count: int, torques) -> None:
        """Advance by ``count`` steps under ``torques`` (a function of (t, q, q̇), or efforts held over the steps),
        the scene's objects in the same steps (:meth:`SceneWorld.step`)."""
        if self.scene is None:
            self.simulation.step(count, torques)
        else:
            self.scene.step(self.simulation, count, torques)

    def reset(self, q: np.ndarray | None = None, v: np.ndarray | None = None) -> None:
        """The state (q, v), the initial one by default, and the objects at their start poses; simulated time goes
        on. Energy drift counts from it."""
        self.simulation.reset(self.q0 if q is None else q, self.v0 if v is None else v)
        self.energy0 = self.simulation.energy()
        if self.scene is not None:
            self.scene.reset(self.simulation.q)

    def set_state(self, q: np.ndarray, v: np.ndarray, poses: dict | None = None) -> None:
        """The state (q, v) and the objects named in ``poses`` (name -> (x, y, θ)) there, the others where they
        are (InputError for an object the scene does not have); simulated time goes on. Energy drift counts from
        it."""
        if poses and self.scene is None:
            raise InputError(f"object poses {sorted(poses)}: this world has no scene")
        placed = {} if self.scene is None else self.scene.checked_poses(poses or {})   # nothing changes on a bad one
        self.simulation.reset(q, v)
        self.energy0 = self.simulation.energy()
        if self.scene is not None:
            self.scene.set_state(self.simulation.q, placed)

    def diagnostic_values(self) -> dict[str, float]:
        """Energy (J), its change since the start or the last reset, the energy the joint stops removed, the
        mean Newton iterations per step since the last call, and the model's size (DOF, mimic joints), which sets
        a step's cost."""
        sim = self.simulation
        energy = sim.energy()
        iterations, time = self._diagnosed
        steps = round((sim.time - time) / sim.time_step)
        self._diagnosed = (sim.newton_iterations, sim.time)
        return {"energy_J": energy, "energy_change_since_start_J": energy - self.energy0,
                "energy_removed_by_joint_stops_J": sim.stop_energy,
                "newton_iterations_per_step": (sim.newton_iterations - iterations) / steps if steps else 0.0,
                "dof": float(self.model.dof), "mimic_joints": float(len(self.model.mimic))}
