"""Robot models from URDF: agreement with Pinocchio on the same files, and the time to load a URDF.

1. Pinocchio (``pin``, bench-only) builds each example robot (discrete_robot.model.example_robots: UR5, Panda,
   xArm7, Unitree Z1, Kinova, Baxter) from the same URDF file; at five random configurations inside the limits
   its M(q) (``crba``) and g(q) (``computeGeneralizedGravity``) are compared with RigidBodySystem's. Pinocchio is
   built without mimic support, the followers as free joints, and projected by hand (Sᵀ M S, Sᵀ g at
   q̄ = S q + c, docs/model_format.md), so the mimic fold is checked too. Continuous joints are Pinocchio's
   (cos θ, sin θ) pairs. Entry: the largest relative difference, ‖ΔM‖_max / ‖M‖_max and ‖Δg‖_max / ‖g‖_max
   (target ≤ 1e-8); ratio = that difference / 1e-8.
2. Load time of the UR5 URDF, parsing and validation and compiling the model into the kernel's arrays
   (``load_model`` + ``RigidBodySystem``), the least of ten runs in this warm process, against Pinocchio's
   ``buildModelFromUrdf`` + ``createData`` of the same file. ratio = ours / 0.2 s (the target); Pinocchio's time
   is reported beside it.
3. The UR5 from its URDF at 1 ms: one discrete-model simulator step (FixedStepSimulation, zero torque held, from a
   moving state), the least of five interleaved runs of 1000 steps, against the shipped config/arm_6dof.yaml's
   step in the same run (the arm whose node keeps real time in the README's figures). ratio = UR5 / arm_6dof; the
   step in µs is reported (real time at 1 ms needs well under 1000 µs with the node's publishing).
"""

import time

import numpy as np

from discrete_robot.discrete.simulation import FixedStepSimulation
from discrete_robot.model.description import load_model, package_config_path
from discrete_robot.model.dynamics import RigidBodySystem
from discrete_robot.model.example_robots import EXAMPLE_ROBOTS, example_robot_path
from discrete_robot.model.mimic import expanded

TOLERANCE = 1e-8
LOAD_TARGET = 0.2   # s


def _pinocchio_configuration(pin, pin_model, names, q_full):
    """Pinocchio's q (continuous joints as cos, sin) for the expanded coordinates ``q_full`` named ``names``."""
    q = pin.neutral(pin_model)
    v_index = []
    for name, value in zip(names, q_full, strict=True):
        joint = pin_model.joints[pin_model.getJointId(name)]
        if joint.nq == 2:
            q[joint.idx_q], q[joint.idx_q + 1] = np.cos(value), np.sin(value)
        else:
            q[joint.idx_q] = value
        v_index.append(joint.idx_v)
    return q, np.array(v_index)


def agreement(name: str, samples: int = 5, seed: int = 0) -> dict:
    """Largest relative differences of M(q) and g(q) against Pinocchio on example robot ``name``."""
    import pinocchio as pin

    path = example_robot_path(name)
    model = load_model(path)
    system = RigidBodySystem(model)
    full, S, c = expanded(model)
    pin_model = pin.buildModelFromUrdf(str(path))
    pin_data = pin_model.createData()
    rng = np.random.default_rng(seed)
    lower, upper = np.maximum(model.lower, -np.pi), np.minimum(model.upper, np.pi)
    worst_M = worst_g = 0.0
    for _ in range(samples):
        q = lower + (upper - lower) * rng.uniform(size=model.dof)
        M, _ = system.mass_matrix_and_potential(q)
        g = system.potential_gradient(q)
        pin_q, v = _pinocchio_configuration(pin, pin_model, full.joint_names, S @ q + c)
        pin_M = pin.crba(pin_model, pin_data, pin_q)
        pin_M = np.triu(pin_M) + np.triu(pin_M, 1).T
        pin_g = pin.computeGeneralizedGravity(pin_model, pin_data, pin_q)
        reference_M = S.T @ pin_M[np.ix_(v, v)] @ S
        reference_g = S.T @ pin_g[v]
        worst_M = max(worst_M, float(np.abs(M - reference_M).max() / np.abs(reference_M).max()))
        worst_g = max(worst_g, float(np.abs(g - reference_g).max() / max(np.abs(reference_g).max(), 1e-300)))
    worst = max(worst_M, worst_g)
    return {"name": f"model {name}: M(q), g(q) vs Pinocchio", "ratio": worst / TOLERANCE,
            "baseline": f"Pinocchio {pin.__version__} crba/computeGeneralizedGravity, relative 1e-8",
            "peer": "pinocchio", "unit": "largest relative difference / 1e-8 (the target is <= 1)",
            "dof": model.dof, "mimic": len(model.mimic), "relative_difference_M": worst_M,
            "relative_difference_g": worst_g, "samples": samples}


def load_time(name: str = "ur5", repeats: int = 10) -> dict:
    """Least wall time of load_model + RigidBodySystem (ours) and buildModelFromUrdf + createData (Pinocchio)."""
    import pinocchio as pin

    path = example_robot_path(name)

    def ours():
        return RigidBodySystem(load_model(path)).compiled

    def theirs():
        return pin.buildModelFromUrdf(str(path)).createData()

    times = {}
    for label, call in (("ours", ours), ("pinocchio", theirs)):
        best = np.inf
        for _ in range(repeats):
            start = time.perf_counter()
            call()
            best = min(best, time.perf_counter() - start)
        times[label] = best
    return {"name": f"model {name}: load URDF + compile to arrays", "ratio": times["ours"] / LOAD_TARGET,
            "baseline": "0.2 s target", "unit": "fraction of the 0.2 s target", "seconds": times["ours"],
            "pinocchio_seconds": times["pinocchio"],
            "repeats": repeats}


def step_time(steps: int = 1000, repeats: int = 5) -> dict:
    """Least time per 1 ms discrete step of the UR5 (URDF) and of arm_6dof (YAML), interleaved."""
    simulations = {}
    for label, path in (("ur5", example_robot_path("ur5")), ("arm_6dof", package_config_path("arm_6dof.yaml"))):
        model = load_model(path)
        simulations[label] = FixedStepSimulation(RigidBodySystem(model), "discrete", 1e-3,
                                                 model.initial_positions + 0.3, np.linspace(1.0, -1.0, model.dof))
        simulations[label].step(100, np.zeros(model.dof))      # compiled and warm
    best = dict.fromkeys(simulations, np.inf)
    for _ in range(repeats):
        for label, simulation in simulations.items():
            start = time.perf_counter()
            simulation.step(steps, np.zeros(simulation.q.size))
            best[label] = min(best[label], (time.perf_counter() - start) / steps)
    return {"name": "model ur5 (URDF): 1 ms discrete step", "ratio": best["ur5"] / best["arm_6dof"],
            "baseline": "config/arm_6dof.yaml's step, same run", "unit": "time ratio UR5 / arm_6dof",
            "ur5_step_us": best["ur5"] * 1e6,
            "arm_6dof_step_us": best["arm_6dof"] * 1e6}


def run() -> list[dict]:
    return [agreement(name) for name in EXAMPLE_ROBOTS] + [load_time(), step_time()]


if __name__ == "__main__":
    for entry in run():
        print(entry)
