"""The 1 kHz step on real robots: every URDF of example-robot-data that the package lists, beside MuJoCo's RK4
``mj_step`` and Pinocchio's ``aba`` + RK4 on the same robot, all measured in this run.

Ours is the simulator's held-torque run (``FixedStepSimulation.step(count, tau)``: the compiled ``held_steps``
where the model compiles, the same path ``discrete simulate`` and the node take), zero torque, no joint stops, from
the URDF's initial positions nudged by 0.1 rad with small velocities. MuJoCo steps the model as this package reads
it (``to_urdf``: fixed links lumped; MuJoCo's URDF importer leaves mimic tags out, so its fingers are free DOFs),
Pinocchio the URDF file itself (``buildModelFromUrdf``, mimic joints as free DOFs). Per step: the least CPU time of
interleaved repeats, each repeat long enough (``ENOUGH_S``) to be measured. ``margin`` = 1 ms / our step: how many
times over the node keeps real time at its default step.
"""

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_discrete import _mujoco_model  # noqa: E402
from bench_work_precision import pinocchio_rk4  # noqa: E402

from discrete_robot.discrete.simulation import FixedStepSimulation  # noqa: E402
from discrete_robot.model.description import load_model  # noqa: E402
from discrete_robot.model.dynamics import RigidBodySystem  # noqa: E402
from discrete_robot.model.example_robots import EXAMPLE_ROBOTS, example_robot_path  # noqa: E402

TIME_STEP = 1e-3   # s, the node's default
REPEATS = 3
ENOUGH_S = 0.3     # CPU seconds a repeat should last


def _timed_per_step(advance) -> float:
    """Least CPU seconds per step of ``advance(count)`` over REPEATS, the count grown until a repeat lasts ENOUGH_S."""
    count, best = 10, np.inf
    advance(2)                       # first calls: compilation caches, Newton guesses
    for _ in range(REPEATS):
        while True:
            start = time.process_time()
            advance(count)
            spent = time.process_time() - start
            if spent >= ENOUGH_S or count >= 1_000_000:
                break
            count = int(count * max(2.0, 1.2 * ENOUGH_S / max(spent, 1e-6)))
        best = min(best, spent / count)
    return best


def _ours(model, q0, v0) -> float:
    simulation = FixedStepSimulation(RigidBodySystem(model), "discrete", TIME_STEP, q0, v0)
    zero = np.zeros(model.dof)
    return _timed_per_step(lambda count: simulation.step(count, zero))


def _mujoco(model, q0, v0) -> float:
    import mujoco

    mj = _mujoco_model(model)
    data = mujoco.MjData(mj)
    data.qpos[:model.dof], data.qvel[:model.dof] = q0, v0

    def advance(count):
        for _ in range(count):
            mujoco.mj_step(mj, data)
    return _timed_per_step(advance)


def _pinocchio(path: Path) -> float:
    import pinocchio as pin

    model = pin.buildModelFromUrdf(str(path))
    run = pinocchio_rk4(model, pin.neutral(model), np.full(model.nv, 0.1))
    return _timed_per_step(lambda count: run(TIME_STEP, count))


def robot_entry(name: str) -> dict:
    """One robot's row: our step, the peers' steps, the ratios and the real-time margin."""
    path = example_robot_path(name)
    model = load_model(path)
    n = model.dof
    q0 = np.clip(model.initial_positions + 0.1, model.lower, model.upper)
    v0 = np.linspace(0.2, -0.2, n)
    ours, mujoco_s, pinocchio_s = _ours(model, q0, v0), _mujoco(model, q0, v0), _pinocchio(path)
    return {"name": f"1 kHz step, {name}", "ratio": mujoco_s / ours, "baseline": "MuJoCo RK4 mj_step",
            "peer": "mujoco", "unit": "times faster than the peer (its time / ours)", "robot": name,
            "dof": n, "mimic_followers": len(model.mimic), "step_s": ours, "mujoco_rk4_step_s": mujoco_s,
            "pinocchio_aba_rk4_step_s": pinocchio_s, "pinocchio_ratio": pinocchio_s / ours,
            "real_time_margin": TIME_STEP / ours}


def fingers_fixed_entry(name: str = "panda", nudged: bool = True) -> dict:
    """The cost of a gripper (issue 35: the stock Panda at most 1.5 times the Panda with its fingers fixed): our step
    on the robot as shipped and with its prismatic joints made fixed, measured in one run, from the same state:
    ``nudged``, the table's (the fingers slide apart), else the URDF's pose at rest, as ``discrete simulate``
    starts (the issue's measure: the fingers' symmetry holds them at rest)."""
    from discrete_robot.model.urdf_reader import model_from_urdf

    stock = load_model(example_robot_path(name))
    text = example_robot_path(name).read_text().replace('type="prismatic"', 'type="fixed"')
    fixed = model_from_urdf(text, name)
    if nudged:
        q0, v0 = np.clip(stock.initial_positions + 0.1, stock.lower, stock.upper), np.linspace(0.2, -0.2, stock.dof)
    else:
        q0, v0 = stock.initial_positions, np.zeros(stock.dof)
    arm = [stock.joint_names.index(joint) for joint in fixed.joint_names]
    ours, without = _ours(stock, q0, v0), _ours(fixed, q0[arm], v0[arm])
    start = "nudged" if nudged else "from the URDF's pose at rest"
    return {"name": f"1 kHz step, {name} with its fingers against fixed fingers, {start}", "ratio": ours / without,
            "unit": "times the step with the fingers fixed (target <= 1.5)", "robot": name, "step_s": ours,
            "fingers_fixed_step_s": without, "dof": stock.dof, "dof_fingers_fixed": fixed.dof}


def run() -> list[dict]:
    return [robot_entry(name) for name in EXAMPLE_ROBOTS] + [fingers_fixed_entry(nudged=nudged)
                                                             for nudged in (True, False)]


if __name__ == "__main__":
    for row in run():
        if "fingers_fixed_step_s" in row:
            print(f"{row['name']}: {row['step_s'] * 1e3:.3f} ms against {row['fingers_fixed_step_s'] * 1e3:.3f} ms, "
                  f"{row['ratio']:.2f}")
            continue
        print(f"{row['robot']:8s} dof {row['dof']:2d} mimic {row['mimic_followers']}  "
              f"ours {row['step_s'] * 1e3:7.3f} ms  MuJoCo RK4 {row['mujoco_rk4_step_s'] * 1e3:6.3f} ms  Pinocchio RK4 "
              f"{row['pinocchio_aba_rk4_step_s'] * 1e3:6.3f} ms  margin {row['real_time_margin']:6.2f}")
