"""Minimum-time planning on the discrete model: planning time and duration against the number of path points,
and the reachability planner against a generic NLP of the same problem.

Problems: the planar 2-link arm (config/planar_2link.yaml, torque limits 20 and 10 N m) from (0, 0) to
(π/2, π/4), and the 6-joint arm (config/arm_6dof.yaml, its own torque and velocity limits) from its initial
positions by (0.8, −0.5, 0.6, 0.4, −0.6, 1.0) rad. For each number of path points N: the reachability
planner's CPU time and the planned duration. Baseline: scipy's SLSQP minimising Σ Δt(k) over the time steps
(chord speeds) with the same discrete model, the same limits and the planner's own grid (min_time.
plan_min_time_nlp, finite-difference derivatives, generic start), run on the smaller grids only (its cost
grows like N³). ratio = SLSQP time / reachability time; the durations of both are reported (they agree to
the solver tolerance, the reachability one being the exact optimum). On grids without a baseline run,
ratio = planning time at N / at the smallest N (the planner's cost grows linearly in N).
"""

import time

import numpy as np

from discrete_robot.discrete.dynamic_model import DiscreteDynamicModel
from discrete_robot.model.description import load_model, package_config_path
from discrete_robot.model.dynamics import RigidBodySystem
from discrete_robot.planning.constraints import JointLimits
from discrete_robot.planning.min_time import plan_min_time, plan_min_time_nlp
from discrete_robot.planning.path import WaypointPath

NLP_BASELINE = "scipy SLSQP over the time steps, same model, limits and grid"


def _problems():
    planar = load_model(package_config_path("planar_2link.yaml"))
    arm = load_model(package_config_path("arm_6dof.yaml"))
    start = arm.initial_positions
    return [
        ("2-link", planar, JointLimits.create(planar.joint_names, [20.0, 10.0], planar.velocity_limits),
         WaypointPath([[0.0, 0.0], [np.pi / 2, np.pi / 4]]), (10, 20, 40, 80, 160, 320), (10, 20, 40)),
        ("6-joint", arm, JointLimits.from_model(arm),
         WaypointPath([start, start + np.array([0.8, -0.5, 0.6, 0.4, -0.6, 1.0])]), (10, 20, 40, 80), (10, 20)),
    ]


def run() -> list[dict]:
    entries = []
    for label, model, limits, path, grids, nlp_grids in _problems():
        discrete = DiscreteDynamicModel(RigidBodySystem(model))
        first_time = None
        for points in grids:
            started = time.process_time()
            plan = plan_min_time(discrete, path, limits, points)
            elapsed = time.process_time() - started
            first_time = first_time or elapsed
            entry = {"name": f"min-time {label} N={points}", "unit": "x", "points": points, "steps": plan.steps,
                     "planning_time_s": elapsed, "duration_s": plan.duration}
            if points in nlp_grids:
                started = time.process_time()
                nlp = plan_min_time_nlp(discrete, path, limits, nodes_s=plan.s)
                nlp_time = time.process_time() - started
                entry.update(ratio=nlp_time / elapsed, baseline=NLP_BASELINE, nlp_time_s=nlp_time,
                             nlp_duration_s=nlp.duration)
            else:
                entry.update(ratio=elapsed / first_time, baseline=f"the same planner at N={grids[0]}")
            entries.append(entry)
    return entries


if __name__ == "__main__":
    for row in run():
        print(row)
