"""The table scene in the arm's step (discrete_robot.simulation.scene): what a step with the object costs.

Each arm of a shipped scene (planar_2link, arm_6dof, and the UR5 of example-robot-data with its fingertip at
tool0, as bringup runs it with ``--tip-link tool0``) pushes its object 3 cm, 2 cm off the centre line, at 5 cm/s
(min-jerk), tracking the finger path with computed torque at 1 ms. Timed: the steps of that run with the scene
(:meth:`SceneWorld.step`) and the same steps of the arm alone under the same torques (FixedStepSimulation.step,
one step at a time). The scene's cost is the difference per step, over the whole run and over its steps in
contact. ratio = the step with the scene / the arm's step alone.
"""

import time

import numpy as np

from discrete_robot.control.computed_torque import tracking_torques
from discrete_robot.control.trajectory import TrajectoryReference
from discrete_robot.discrete.dissipation import Dissipation
from discrete_robot.discrete.simulation import FixedStepSimulation
from discrete_robot.manipulation.arm import ArmFinger, finger_trajectory
from discrete_robot.manipulation.scene import load_scene
from discrete_robot.model.description import load_model, package_config_path
from discrete_robot.model.dynamics import RigidBodySystem
from discrete_robot.model.example_robots import example_robot_path
from discrete_robot.model.sources import with_fingertip
from discrete_robot.simulation.scene import SceneWorld

TIME_STEP = 1e-3


def _timed_run(arm, scene, trajectory, with_scene: bool) -> tuple[np.ndarray, np.ndarray]:
    """Per-step wall times (s) of the tracked push, and whether the finger pushed in each step."""
    model = arm.model
    system = RigidBodySystem(model)
    reference = TrajectoryReference(trajectory.t, trajectory.q, trajectory.qd)
    simulation = FixedStepSimulation(system, "discrete", TIME_STEP, trajectory.q[0], np.zeros(model.dof),
                                     model.lower, model.upper, Dissipation.from_model(model), model.joint_names)
    world = SceneWorld.from_scene(arm, scene, simulation.q)
    steps = int(np.ceil(trajectory.t[-1] / TIME_STEP))
    times, pushing = np.empty(steps), np.zeros(steps, bool)
    for k in range(steps):
        tau = tracking_torques(system, simulation.q, simulation.qd, reference.sample(simulation.time), 400.0, 40.0,
                               model.effort_limits)
        start = time.perf_counter()
        if with_scene:
            world.step(simulation, 1, tau)
        else:
            simulation.step(1, tau)
        times[k] = time.perf_counter() - start
        pushing[k] = world.force.any()
    return times, pushing


def run() -> list[dict]:
    entries = []
    for name in ("planar_2link", "arm_6dof", "ur5"):
        model = with_fingertip(load_model(example_robot_path("ur5")), "tool0") if name == "ur5" else \
            load_model(package_config_path(f"{name}.yaml"))
        scene = load_scene(package_config_path(f"table_scene_{name}.yaml"))
        arm = ArmFinger.in_scene(model, scene)
        x0, y0, _ = scene.start_pose
        face = x0 + scene.obj.footprint[:, 0].min() - arm.radius
        path = np.array([[face - 0.01, y0 + 0.02], [face + 0.03, y0 + 0.02]])
        trajectory = finger_trajectory(arm, path, [True], scene.arm_ready_positions, 0.05, 0.2)
        _timed_run(arm, scene, trajectory, True)      # warm-up: compiled kernels loaded
        with_scene, pushing = _timed_run(arm, scene, trajectory, True)
        alone, _ = _timed_run(arm, scene, trajectory, False)
        entries.append({
            "name": f"scene step, {name} pushing its object", "ratio": float(np.median(with_scene) / np.median(alone)),
            "baseline": "the arm's step alone under the same torques", "unit": "ms",
            "scene_ms_per_step": 1e3 * float(np.median(with_scene) - np.median(alone)),
            "scene_ms_per_step_in_contact": 1e3 * float(np.median(with_scene[pushing]) - np.median(alone[pushing])),
            "step_with_scene_ms": 1e3 * float(np.median(with_scene)), "arm_step_ms": 1e3 * float(np.median(alone)),
            "steps": len(alone), "steps_in_contact": int(pushing.sum())})
    return entries


if __name__ == "__main__":
    for entry in run():
        print(entry)
