"""The discrete dynamic robot model: energy error against RK45 at equal CPU time, and step cost against size.

1. Energy after 10⁵ steps. The discrete model runs 10⁵ steps of h = 0.05 s (5000 s, ~2400 swings) of a
   pendulum (m = 1 kg, l = 1 m, released at 1 rad); scipy's RK45 then integrates the same motion over the
   same 5000 s with its tolerance tuned to take the same CPU time (tuned on a 1/20 horizon, where its cost is
   1/20, then run once in full). ratio = RK45's relative energy error at the end / the discrete model's
   (the latter floored at machine epsilon). The pendulum is written directly as a LagrangianSystem, so that
   10⁵ implicit steps fit the benchmark's time budget; RK45 uses the same system's equations of motion.
   (On the chaotic 2-link arm, RK45 at the tolerance that matches the discrete model's CPU time is too
   loose to stay on the energy surface at all; the tests compare the two there at equal step size.)
2. One 1 kHz simulator step against MuJoCo: the arm simulator's step (FixedStepSimulation, discrete model,
   h = 1 ms, zero torque held over the steps as the simulator holds commanded efforts, from a moving state)
   on config/arm_6dof.yaml and config/planar_2link.yaml, and MuJoCo's RK4 ``mj_step`` at the same h on the same
   URDF (``to_urdf``; contacts off, gravity set from the model file, inertias bounded below by 1e-10 kg m²
   because MuJoCo rejects the thin rods' zero moment).
   ratio = mj_step / discrete step (how many times faster ours is; below 1: MuJoCo's is faster), each the least
   of five interleaved timings. Also reported: the two
   states' difference after 0.2 s (both second order or better: a check that MuJoCo simulates the same robot)
   and the discrete model's relative energy change over the timed steps.
3. T + V over 10⁵ steps of 1 ms on both arms (100 s of motion from the same start, zero torque, no joint
   limits): the largest relative change. Two round-offs set this floor until the stepper carried whole turns
   apart (q(k+1) = q(k) + Δq rounds Δq by ε|q|, and the joints wind up to hundreds of radians) and a(q) was
   summed about each composite's own CoM (about the base, the wrist's entries carried 2000 of their own ε,
   which at its 80–150 rad/s dominated): 8.9e-12 (arm) and 3.5e-12 (planar) before, about 5e-13 after.
   The same with discrete4 on the 6-joint arm and the UR5 (5·10⁵ sub-steps, a fifth of them backwards).
4. Step time against the number of joints: planar n-link chains (uniform 0.5 m, 1 kg rods) built with
   model_from_dict for n = 2 … 30, CPU time per discrete step (mean of a few steps from a bent, moving state).
   ratio = time per step at n = 30 / at n = 2; the fitted exponent p of time ∝ n^p is reported too.
"""

import time

import numpy as np
from scipy.integrate import solve_ivp

from discrete_robot.discrete.dynamic_model import DiscreteDynamicModel
from discrete_robot.discrete.simulation import FixedStepSimulation
from discrete_robot.model.description import load_model, model_from_dict, package_config_path
from discrete_robot.model.dynamics import RigidBodySystem
from discrete_robot.model.example_robots import example_robot_path
from discrete_robot.model.lagrangian import accelerations, total_energy
from discrete_robot.model.urdf import to_urdf
from discrete_robot.variational.comparison import run_rk45_for_cpu_time

EPSILON = np.finfo(float).eps
CALIBRATION_FRACTION = 20


class Pendulum:
    """Planar pendulum, q = angle from the downward vertical: M = m l², V = −m g l cos q."""

    dof = 1
    vectorized = False

    def __init__(self, m: float = 1.0, length: float = 1.0, g: float = 9.81):
        self.inertia, self.weight = m * length**2, m * g * length

    def mass_matrix(self, q):
        return np.array([[self.inertia]])

    def mass_matrix_derivatives(self, q):
        return np.zeros((1, 1, 1))

    def potential(self, q):
        return -self.weight * np.cos(q[0])

    def potential_gradient(self, q):
        return np.array([self.weight * np.sin(q[0])])


def _rk45(system, q0, qd0, duration: float, rtol: float) -> np.ndarray:
    n = system.dof
    zero = np.zeros(n)

    def rhs(t, y):
        return np.concatenate([y[n:], accelerations(system, y[:n], y[n:], zero)])

    y = solve_ivp(rhs, (0.0, duration), np.concatenate([q0, qd0]), method="RK45", rtol=rtol, atol=rtol).y[:, -1]
    return y[:n], y[n:]


def _energy_comparison(name: str, system, q0, qd0, h: float, steps: int) -> dict:
    q0, qd0 = np.asarray(q0, dtype=float), np.asarray(qd0, dtype=float)
    e0 = total_energy(system, q0, qd0)
    start = time.process_time()
    trajectory = DiscreteDynamicModel(system).simulate(q0, qd0, h, steps)
    discrete_cpu = time.process_time() - start
    discrete_error = max(abs(trajectory.energy[-1] - e0) / abs(e0), EPSILON)
    duration = h * steps
    short = duration / CALIBRATION_FRACTION
    calibration = run_rk45_for_cpu_time(lambda rtol: _rk45(system, q0, qd0, short, rtol),
                                        discrete_cpu / CALIBRATION_FRACTION, first_rtol=1e-6)
    start = time.process_time()
    q, qd = _rk45(system, q0, qd0, duration, calibration.rtol)
    rk45_cpu = time.process_time() - start
    rk45_error = abs(total_energy(system, q, qd) - e0) / abs(e0)
    return {"name": name, "ratio": rk45_error / discrete_error,
            "baseline": "scipy RK45, tolerance tuned to the discrete model's CPU time",
            "unit": "relative energy error ratio RK45/discrete", "steps": steps, "time_step": h,
            "duration": duration, "discrete_energy_error": discrete_error, "rk45_energy_error": rk45_error,
            "rk45_rtol": calibration.rtol, "discrete_cpu_seconds": discrete_cpu, "rk45_cpu_seconds": rk45_cpu,
            "cpu_ratio": rk45_cpu / discrete_cpu, "mean_newton_iterations": float(trajectory.iterations.mean())}


def planar_chain(n: int) -> dict:
    """A planar n-link chain of uniform 0.5 m, 1 kg rods about z, gravity along −y (a model file as a dict)."""
    rod = {"mass": 1.0, "com": [0.25, 0.0, 0.0], "inertia": [0.0, 1.0 / 48.0, 1.0 / 48.0], "tip": [0.5, 0.0, 0.0]}
    links = [{"name": f"link{i + 1}", "parent": f"link{i}" if i else "base",
              "joint": {"name": f"joint{i + 1}", "type": "revolute", "axis": [0.0, 0.0, 1.0]}, **rod}
             for i in range(n)]
    return {"name": f"planar_{n}link", "gravity": [0.0, -9.81, 0.0], "base": {"name": "base"}, "links": links}


def _step_time(n: int, steps: int) -> float:
    system = RigidBodySystem(model_from_dict(planar_chain(n)))
    model = DiscreteDynamicModel(system)
    q, qd = np.full(n, -1.0 / n), np.full(n, 0.2)
    warm_up = model.step(q, qd, np.zeros(n), 0.01)   # first call: caches and allocations
    q, qd = warm_up.q, warm_up.qd
    start = time.process_time()
    for _ in range(steps):
        result = model.step(q, qd, np.zeros(n), 0.01)
        q, qd = result.q, result.qd
    return (time.process_time() - start) / steps


def _scaling() -> dict:
    sizes = [2, 4, 6, 10, 15, 20, 30]
    seconds = [_step_time(n, 20 if n <= 10 else 5) for n in sizes]
    exponent = float(np.polyfit(np.log(sizes[2:]), np.log(seconds[2:]), 1)[0])
    return {"name": "discrete step time, 30 joints vs 2", "ratio": seconds[-1] / seconds[0],
            "baseline": "the same step for a 2-joint chain", "unit": "time ratio (growth)",
            "joints": sizes, "seconds_per_step": seconds, "fitted_exponent_n6_to_n30": exponent}


def _mujoco_model(model):
    import mujoco

    # inertiafromgeom false: the massless fingertip link would get its sphere's mass (4 g at 1000 kg/m³)
    urdf = to_urdf(model).replace('<link name="world"', '<mujoco><compiler boundinertia="1e-10" inertiafromgeom='
                                  '"false" discardvisual="true"/></mujoco>\n  <link name="world"', 1)
    mj = mujoco.MjModel.from_xml_string(urdf)
    mj.opt.integrator = mujoco.mjtIntegrator.mjINT_RK4
    mj.opt.timestep = 1e-3
    mj.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONTACT
    mj.opt.gravity[:] = model.gravity
    return mj


REPEATS = 5


def _mujoco_comparison(filename: str, steps: int = 200) -> dict:
    import mujoco

    model = load_model(package_config_path(filename))
    n = model.dof
    q0, qd0 = model.initial_positions + 0.3, np.linspace(0.5, -0.5, n)
    simulation = FixedStepSimulation(RigidBodySystem(model), "discrete", 1e-3, q0, qd0)
    zero = np.zeros(n)
    simulation.step(3, zero)   # first calls: caches
    e0 = simulation.energy()
    mj = _mujoco_model(model)
    data = mujoco.MjData(mj)
    data.qpos[:], data.qvel[:] = simulation.q, simulation.qd
    ours = theirs = np.inf
    # interleaved, least of each: this machine's speed drifts by up to 2x over minutes
    for _ in range(REPEATS):
        start = time.process_time()
        simulation.step(steps, zero)
        ours = min(ours, (time.process_time() - start) / steps)
        start = time.process_time()
        for _ in range(20 * steps):
            mujoco.mj_step(mj, data)
        theirs = min(theirs, (time.process_time() - start) / (20 * steps))
    energy_change = abs(simulation.energy() - e0) / abs(e0)
    reference = FixedStepSimulation(RigidBodySystem(model), "discrete", 1e-3, q0, qd0)
    reference.step(200, zero)
    data = mujoco.MjData(mj)
    data.qpos[:], data.qvel[:] = q0, qd0
    for _ in range(200):
        mujoco.mj_step(mj, data)
    return {"name": f"one 1 kHz step, {model.name}", "ratio": theirs / ours, "baseline": "MuJoCo RK4 mj_step",
            "peer": "mujoco", "unit": "times faster than the peer (its time / ours)", "discrete_step_s": ours,
            "mujoco_step_s": theirs,
            "state_difference_after_0.2s_rad": float(np.max(np.abs(reference.q - data.qpos))),
            "relative_energy_change_over_timed_steps": energy_change, "timed_steps": REPEATS * steps}


def _long_run_energy(model, kind: str = "discrete", steps: int = 100_000) -> dict:
    """T + V over 10⁵ steps of 1 ms (100 s) of the integrator ``kind`` from the 1 kHz comparison's start, zero
    torque: the largest relative change seen (checked every 1000 steps) and at the end, and the Newton iterations
    per step."""
    n = model.dof
    simulation = FixedStepSimulation(RigidBodySystem(model), kind, 1e-3, model.initial_positions + 0.3,
                                     np.linspace(0.5, -0.5, n))
    zero = np.zeros(n)
    e0 = simulation.energy()
    largest = 0.0
    for _ in range(steps // 1000):
        simulation.step(1000, zero)
        largest = max(largest, abs(simulation.energy() - e0) / abs(e0))
    label = "" if kind == "discrete" else f", {kind}"
    return {"name": f"T + V over 1e5 steps of 1 ms, {model.name}{label}", "ratio": largest,
            "unit": "relative energy change", "baseline": "T + V at the start",
            "final_relative_change": abs(simulation.energy() - e0) / abs(e0),
            "newton_iterations_per_step": simulation.newton_iterations / steps, "steps": steps}


def run() -> list[dict]:
    arm = load_model(package_config_path("arm_6dof.yaml"))
    return [
        _energy_comparison("pendulum energy error after 1e5 steps at equal CPU time", Pendulum(), [1.0], [0.0],
                           0.05, 100_000),
        _mujoco_comparison("arm_6dof.yaml"),
        _mujoco_comparison("planar_2link.yaml"),
        _long_run_energy(arm),
        _long_run_energy(load_model(package_config_path("planar_2link.yaml"))),
        _long_run_energy(arm, "discrete4"),
        _long_run_energy(load_model(example_robot_path("ur5")), "discrete4"),
        _scaling(),
    ]


if __name__ == "__main__":
    for entry in run():
        print(entry)
