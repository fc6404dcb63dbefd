"""Space robot forward dynamics: the paper's recursive algorithm against Newton–Euler and a dense Lagrangian.

Time per forward-dynamics call (best of several, same random state and loads) for the Table 1 dual-arm
robot and for robots of 2–8 arms × 2–10 links with 3-DOF joints (:mod:`discrete_robot.space.generated`).
Baselines, measured in the same run:
- Newton–Euler in generalised coordinates, M = Jᵀ diag(m, I) J with geometric Jacobians (all bodies);
- a dense Lagrangian, Christoffel terms by central differences of M(q) (2n + 1 mass matrices per call;
  only the smaller robots, it takes seconds per call beyond ~10 bodies).
Times are CPU seconds per call. The cost exponents are least-squares slopes of log(time) against
log(bodies), log(arms) at 10 links and log(links) at 8 arms: 1.0 means linear.
"""

import time

import numpy as np

from discrete_robot.model.description import load_model, model_from_dict, package_config_path
from discrete_robot.space import dense_lagrangian, newton_euler, recursive
from discrete_robot.space.generated import multi_arm_model_data
from discrete_robot.space.loads import paper_loads
from discrete_robot.space.robot import SpaceRobot
from discrete_robot.space.state import random_state

ARMS = (2, 4, 6, 8)
LINKS = (2, 4, 6, 8, 10)
DENSE_MAX_BODIES = 9
UNIT = "CPU time per forward-dynamics call, baseline / recursive"


def seconds_per_call(function, robot, state, loads, budget: float = 0.5, repeats: int = 9) -> float:
    """Least CPU time of up to ``repeats`` calls, stopping once ``budget`` seconds are spent (at least 2 calls).

    CPU time (all threads of this process) rather than wall time: the machine is shared, and BLAS may
    spread a larger matrix product over several cores, which wall time would hide.
    """
    best, spent, calls = np.inf, 0.0, 0
    while calls < 2 or (calls < repeats and spent < budget):
        start = time.process_time()
        function(robot, state, loads)
        elapsed = time.process_time() - start
        best, spent, calls = min(best, elapsed), spent + elapsed, calls + 1
    return best


def _measure(robot: SpaceRobot, dense: bool) -> dict:
    state = random_state(robot, np.random.default_rng(0), speed=0.5)
    loads = paper_loads(robot)
    result = {"bodies": robot.body_count, "dof": 6 + robot.dof,
              "recursive_s": seconds_per_call(recursive.forward_dynamics, robot, state, loads),
              "newton_euler_s": seconds_per_call(newton_euler.forward_dynamics, robot, state, loads)}
    if dense:
        result["dense_lagrangian_s"] = seconds_per_call(dense_lagrangian.forward_dynamics, robot, state, loads,
                                                        budget=1.0, repeats=2)
    return result


def _entries(label: str, timing: dict) -> list[dict]:
    entries = [{"name": f"{label}: recursive vs Newton-Euler",
                "ratio": timing["newton_euler_s"] / timing["recursive_s"],
                "baseline": "Newton-Euler M = J^T diag(m, I) J", "unit": UNIT, **timing}]
    if "dense_lagrangian_s" in timing:
        entries.append({"name": f"{label}: recursive vs dense Lagrangian",
                        "ratio": timing["dense_lagrangian_s"] / timing["recursive_s"],
                        "baseline": "Lagrange, Christoffel terms by finite differences of M(q)",
                        "unit": UNIT, **timing})
    return entries


def _slope(x, y) -> float:
    return float(np.polyfit(np.log(x), np.log(y), 1)[0])


def run() -> list[dict]:
    dual_arm = SpaceRobot.from_model(load_model(package_config_path("space_robot_dual_arm.yaml")))
    entries = _entries("dual-arm robot (Table 1)", _measure(dual_arm, dense=True))
    grid = {}
    for arms in ARMS:
        for links in LINKS:
            robot = SpaceRobot.from_model(model_from_dict(multi_arm_model_data(arms, links)))
            grid[arms, links] = _measure(robot, dense=robot.body_count <= DENSE_MAX_BODIES)
            entries += _entries(f"{arms} arms x {links} links", grid[arms, links])
    bodies = [t["bodies"] for t in grid.values()]
    for formulation in ("recursive", "newton_euler"):
        key = f"{formulation}_s"
        entries.append({
            "name": f"{formulation} cost exponent in the number of bodies", "unit": "log-log slope",
            "ratio": _slope(bodies, [t[key] for t in grid.values()]), "baseline": "1.0 = linear",
            "exponent_in_arms_at_10_links": _slope(ARMS, [grid[a, 10][key] for a in ARMS]),
            "exponent_in_links_at_8_arms": _slope(LINKS, [grid[8, n][key] for n in LINKS]),
            "seconds_per_body_largest": grid[ARMS[-1], LINKS[-1]][key] / grid[ARMS[-1], LINKS[-1]]["bodies"]})
    return entries


if __name__ == "__main__":
    for entry in run():
        print(f"{entry['name']:55s} {entry['ratio']:8.3g}  vs {entry['baseline']}")
