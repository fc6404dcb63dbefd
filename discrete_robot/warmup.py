"""Compile every numba kernel into the on-disk cache (run by ``make setup``; ``python -m discrete_robot.warmup``).

One group per compiled capability (the planner's two methods are two) runs that capability's public entry points
once on small models (simulators, predictions, planners: the calls a node or CLI makes), so each kernel compiles
with the argument types the package passes it, and a node or CLI started afterwards loads compiled code instead
of compiling (the cache: ``jit.py``, not named here as a module, so that editing this file leaves the kernels'
cache version as it is). The kernel modules know nothing of this: warm-up calls them, they never call it. A
capability that adds a kernel reaches it from its group here, through the public call that uses it.

The groups compile in parallel processes, one per core (numba compiles in one thread, and each module's kernels
are cached in files of their own), in the order of :data:`GROUPS`.
"""

import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor

import numpy as np

#: a small URDF with a prismatic joint and a mimic follower (folded into the compiled terms, model.mimic)
MIMIC_PRISMATIC_URDF = """<robot name="warm_up">
  <link name="base"/>
  <joint name="shoulder" type="revolute"><parent link="base"/><child link="upper"/><axis xyz="0 0 1"/>
    <limit lower="-3" upper="3" effort="10" velocity="2"/></joint>
  <link name="upper">{inertial}</link>
  <joint name="slide" type="prismatic"><parent link="upper"/><child link="left"/><axis xyz="1 0 0"/>
    <limit lower="-0.5" upper="0.5" effort="10" velocity="1"/></joint>
  <link name="left">{inertial}</link>
  <joint name="follower" type="prismatic"><parent link="upper"/><child link="right"/><axis xyz="0 1 0"/>
    <limit lower="-0.5" upper="0.5" effort="10" velocity="1"/><mimic joint="slide" multiplier="-1"/></joint>
  <link name="right">{inertial}</link>
</robot>""".format(inertial='<inertial><origin xyz="0.5 0 0"/><mass value="1"/>'
                             '<inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>')


def space() -> None:
    """The space robot's simulator on the mixed-joint 2x3 tree, under a load and joint torques: one step, an
    advance of several, a sample (geometry3d's attitude conversions); the node's TF of the sampled state and, under
    loads, the efforts it publishes (the recursive equation terms) and the forward dynamics."""
    from discrete_robot.model.description import model_from_dict
    from discrete_robot.model.urdf import joint_transforms
    from discrete_robot.space.generated import multi_arm_model_data
    from discrete_robot.space.loads import ExternalLoad
    from discrete_robot.space.recursive import equation_terms, forward_dynamics
    from discrete_robot.space.robot import SpaceRobot
    from discrete_robot.space.simulation import Simulator
    from discrete_robot.space.state import random_state

    model = model_from_dict(multi_arm_model_data(2, 3, mixed_joints=True))
    robot = SpaceRobot.from_model(model)
    for loads, torques in (((), None), ([ExternalLoad(robot.body_names[-1], force=np.array([0.1, 0.0, 0.0]))],
                                        np.full(robot.dof, 0.01))):
        simulator = Simulator(robot, random_state(robot, np.random.default_rng(0), speed=0.1), loads, torques)
        simulator.step(1e-3)
        simulator.advance(1e-3, 2)
        sample = simulator.sample()
        joint_transforms(model, sample.joint_positions)
        equation_terms(robot, sample.state, simulator.loads, simulator.joint_torques)
        forward_dynamics(robot, sample.state, simulator.loads, simulator.joint_torques)


def discrete() -> None:
    """The discrete-mechanics simulator as the nodes and CLIs run it: on the planar arm, the 6-joint arm and a
    mimic/prismatic model, a run under held forces and steps one by one, with joint stops and dissipation; a long
    step; the other integrators; the inverse dynamics of the nodes' feedforward; the nodes' TF; a step with the
    table scene."""
    from discrete_robot.discrete.dissipation import Dissipation
    from discrete_robot.discrete.simulation import FixedStepSimulation
    from discrete_robot.manipulation.arm import ArmFinger
    from discrete_robot.manipulation.scene import load_scene
    from discrete_robot.model.description import load_model, package_config_path
    from discrete_robot.model.dynamics import RigidBodySystem
    from discrete_robot.model.lagrangian import generalized_forces
    from discrete_robot.model.urdf import fixed_transforms, joint_transforms
    from discrete_robot.model.urdf_reader import model_from_urdf
    from discrete_robot.simulation.scene import SceneWorld

    models = [load_model(package_config_path(name)) for name in ("planar_2link.yaml", "arm_6dof.yaml")]
    for model in [*models, model_from_urdf(MIMIC_PRISMATIC_URDF)]:
        system, n = RigidBodySystem(model), model.dof
        q, qd, tau = np.zeros(n), np.ones(n), np.zeros(n)
        generalized_forces(system, q, qd, qd)
        joint_transforms(model, q)
        fixed_transforms(model)
        simulation = FixedStepSimulation(system, "discrete", 1e-3, q, qd, lower=np.full(n, -0.002),
                                         upper=np.full(n, 0.002), dissipation=Dissipation(qd, 0.1 * qd))
        simulation.step(3, tau)
        simulation.step(2, lambda t, q, qd, tau=tau: tau)
    planar = RigidBodySystem(models[0])
    for kind, dt in (("discrete", 0.1), ("discrete4", 1e-3), ("variational", 1e-3), ("rk45", 1e-3)):
        FixedStepSimulation(planar, kind, dt, np.zeros(2), np.ones(2)).step(2, np.zeros(2))
    # the scene's fingertip kernel (simulation/fingertip.py), as a simulator with a scene_file steps
    scene = load_scene(package_config_path("table_scene_planar_2link.yaml"))
    ready = np.asarray(scene.arm_ready_positions, dtype=float)
    world = SceneWorld.from_scene(ArmFinger.in_scene(models[0], scene), scene, ready)
    world.step(FixedStepSimulation(planar, "discrete", 1e-3, ready, np.zeros(2)), 2, np.zeros(2))


def pushing() -> None:
    """Push predictions on a square (exact uniform pressure and support points; a sticking and a sliding
    contact; on three legs, a sliding push whose minimum at a kink the kernel leaves to Python's finders, which
    call kernels of their own) and a simulated push along a path."""
    from discrete_robot.pushing.object_model import make_pushed_object
    from discrete_robot.pushing.prediction import predict_push
    from discrete_robot.pushing.simulation import simulate_push

    square = np.array([[-0.1, -0.1], [0.1, -0.1], [0.1, 0.1], [-0.1, 0.1]])
    for points, weights in ((None, None), (0.5 * square, np.ones(4))):
        obj = make_pushed_object(square, 0.5, 1.0, support_points=points, support_weights=weights)
        for point, friction in (([-0.1, 0.0], 0.5), ([-0.1, 0.05], 0.05)):
            predict_push(obj, point, [1.0, 0.2], friction)
        simulate_push(obj, np.zeros(3), np.array([[-0.15, 0.03], [0.1, 0.03]]), 0.05, 0.05, 0.3, 0.01)
    legs = make_pushed_object(square, 0.5, 1.0, support_points=[[-0.05, -0.05], [0.05, -0.05], [0.0, 0.05]],
                              support_weights=np.ones(3))
    predict_push(legs, [-0.07, -0.1], [np.sin(-1.4), np.cos(-1.4)], 0.05)


def _planar_planner():
    from discrete_robot.model.description import load_model, package_config_path
    from discrete_robot.planning.planner import PlannerSettings, TrajectoryPlanner

    planner = TrajectoryPlanner(load_model(package_config_path("planar_2link.yaml")), PlannerSettings(grid_points=10))
    return planner, [[0.0, 0.0], [np.pi / 2, np.pi / 4]]


def min_time() -> None:
    """The trajectory planner's minimum-time plan and a retimed path on the planar arm (the reachability passes,
    general and in squared speeds)."""
    planner, waypoints = _planar_planner()
    planner.plan(waypoints)
    planner.retime(np.linspace(*waypoints, 5), effort_scale=1.0)


def min_effort() -> None:
    """The trajectory planner's short minimum-effort DMOC plan on the planar arm (the step Jacobians)."""
    planner, waypoints = _planar_planner()
    planner.plan(waypoints, method="min_effort", duration=1.5, time_step_hint=0.05)


#: one group per compiled capability, the longest to compile first, with the planner's two methods apart: planning
#: after discrete in one process (49 + 59 s) left the other idle for the last 40 s of a 108 s warm-up. Minimum
#: time compiles what the two share, so it follows discrete, and minimum effort comes last: its own kernels only
#: remain by then. Each group goes to whichever process is free first: 92 s on the same 2 cores.
GROUPS = {"space": space, "discrete": discrete, "min_time": min_time, "pushing": pushing, "min_effort": min_effort}


def warm_up(name: str) -> float:
    """Compile one group's kernels; the seconds it took."""
    start = time.perf_counter()
    GROUPS[name]()
    return time.perf_counter() - start


def main(workers: int | None = None) -> int:
    workers = workers or min(len(GROUPS), os.cpu_count() or 1)
    start = time.perf_counter()
    if workers > 1:
        with ProcessPoolExecutor(workers) as pool:
            seconds = list(pool.map(warm_up, GROUPS))
    else:
        seconds = [warm_up(name) for name in GROUPS]
    each = ", ".join(f"{name} {s:.0f} s" for name, s in zip(GROUPS, seconds, strict=True))
    print(f"warmup: the kernels of {len(GROUPS)} groups ready in {time.perf_counter() - start:.1f} s "
          f"({workers} processes: {each})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(int(sys.argv[1]) if len(sys.argv) > 1 else None))
