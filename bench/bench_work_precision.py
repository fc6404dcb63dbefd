"""Work-precision: error against CPU time for our integrators and their peers on the same two robots.

The standard way to compare integrators (Hairer, Nørsett & Wanner, Solving ODEs I, §II.10): each simulator runs
the same problem at several fixed step sizes, and each run gives one point, (CPU time, error).

Problems, each over 1 s and 100 s, no torque, no damping, no joint limits:
- ``arm_6dof`` (config/arm_6dof.yaml, fixed base, gravity) from q = initial + 0.3 rad, q̇ = 0.5 … −0.5 rad/s
  (the start bench_discrete uses); conserved: T + V.
- ``ur5`` (example-robot-data's UR5 URDF, read by our URDF reader; fixed base, gravity) from the same start;
  conserved: T + V. Over 100 s at h = 1 ms its drift is that of 10⁵ steps.
- ``dual-arm space robot`` (config/space_robot_dual_arm.yaml, the paper's Table 1 robot, free floating, 6 + 12
  DOF, spherical joints) from ``random_state(rng(0), speed=2)`` (bench_space's state, 4 times as fast, so that the
  errors over 1 s stand above round-off); conserved: the momenta, of which the angular momentum about the system
  CoM is measured.

Simulators (each on the same model: MuJoCo and Pinocchio read the arm's URDF from ``to_urdf``; the space robot is
given to both from the same arrays, Pinocchio through bench_space's builder, MuJoCo as MJCF with a free joint and
ball joints):
- ours: the discrete model (Potts / Neuman–Tourassis, ``FixedStepSimulation(kind="discrete")``), its
  compositions of order 4 and 6 (``kind="discrete4"``, ``"discrete6"``) on the arm and the UR5, and the midpoint
  variational integrator (``kind="variational"``) on the arm; RKMK4 (``space.simulation.Simulator``) on the
  space robot;
- MuJoCo ``mj_step`` with its semi-implicit Euler and its RK4 integrators (contacts and limits disabled);
- Pinocchio ``aba`` with a classical RK4 written here on its configuration manifold (``pin.integrate``).

Reference: Pinocchio's ``aba`` integrated by scipy's DOP853 at rtol = atol = 1e-12, the quaternions of the
free-flyer and spherical joints integrated as q̇ = ½ q ⊗ (0, ω) and renormalised. It is independent of every
simulator compared (it shares only Pinocchio's dynamics with one peer, not its integrator), and its own error is
estimated by a second run at rtol 1e-11 (``reference_error``; errors below 10 times it are not matched). Over 100 s
both motions are chaotic: the two references end far apart, and no final state there can be checked.

Errors at the final time T:
- state error: ‖(Δq, Δv · 1 s)‖_∞ in Pinocchio's coordinates, Δq = ``pin.difference`` (rad for joints and
  attitudes, m for the base position), Δv the velocity difference (rad/s, m/s);
- drift: |E(T) − E(0)| / |E(0)| for the arm (Pinocchio's T + V); ‖L(T) − L(0)‖ / ‖L(0)‖ for the space robot
  (Pinocchio's centroidal momentum, angular part), both floored at machine epsilon.
CPU time: ``time.process_time`` around the stepping only (models built, kernels compiled and warm before), the
least of up to three runs (repeated while a run takes under 0.5 s).

Entries, per problem, horizon and integrator of ours (the discrete model's entries are named by problem and
horizon alone, its compositions' add their kind): (1) ratio = the fastest peer's CPU time / ours at a matched state
error (the
tightest resolved error both curves reach, interpolated log-log; NaN when there is none), and (2) ratio = the
smallest peer drift / ours at a matched CPU time (a peer's curve extended log-log by up to 3 times in CPU time to meet
ours). Per-peer ratios and every point are kept in the entries; a run that diverged has NaN errors.
The figure (``work_precision.png``): state error (top row) and drift (bottom row) against CPU time, one column per
problem and horizon, one curve per simulator.
"""

import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pinocchio as pin
from scipy.integrate import solve_ivp

BENCH_DIR = Path(__file__).resolve().parent
if str(BENCH_DIR) not in sys.path:     # the peers' model builders live in the sibling benchmarks
    sys.path.insert(0, str(BENCH_DIR))

from bench_discrete import _mujoco_model  # noqa: E402
from bench_space import pinocchio_model, pinocchio_state  # noqa: E402
from curves import matched  # noqa: E402

from discrete_robot.discrete.simulation import FixedStepSimulation  # noqa: E402
from discrete_robot.geometry3d import matrix_to_quaternion, quaternion_to_matrix  # noqa: E402
from discrete_robot.model.description import load_model, package_config_path  # noqa: E402
from discrete_robot.model.dynamics import RigidBodySystem  # noqa: E402
from discrete_robot.model.example_robots import example_robot_path  # noqa: E402
from discrete_robot.model.urdf import to_urdf  # noqa: E402
from discrete_robot.plotting import new_figure, save_figure  # noqa: E402
from discrete_robot.space.robot import SpaceRobot  # noqa: E402
from discrete_robot.space.simulation import Simulator  # noqa: E402
from discrete_robot.space.state import random_state  # noqa: E402

EPSILON = np.finfo(float).eps
REFERENCE_RTOL = 1e-12
#: step sizes (s) per horizon (s): the 100 s runs take fewer, so the whole benchmark stays within minutes
STEP_SIZES = {1.0: (1e-4, 3e-4, 1e-3, 3e-3, 1e-2), 100.0: (1e-3, 3e-3, 1e-2)}
#: the step sizes over 100 s of the variational integrator (its Python Newton loop costs ~0.4 ms a step) and of
#: discrete6 (nine sub-steps a step; its 100 s figure is its drift)
LONG_RUN_STEPS_100S = {"ours: variational": (1e-2,), "ours: discrete6": (1e-2,)}
#: state errors below this multiple of the reference's own error are not resolved (left out of the matching)
RESOLVED = 10.0
#: how far (factor in CPU time) a peer's drift curve is extrapolated log-log beyond its runs to meet ours
REACH = 3.0
#: the space robot's start: bench_space's random state, 4 times as fast (rates ~2 rad/s), so that its integrators'
#: errors over 1 s stand above round-off
SPACE_SPEED = 2.0
#: ours per problem, each with its entries: the first names them by problem and horizon, the others add their kind
DISCRETE = {"ours: discrete model": "discrete", "ours: discrete4": "discrete4", "ours: discrete6": "discrete6"}
OURS = {"arm_6dof": tuple(DISCRETE), "ur5": tuple(DISCRETE), "dual-arm space robot": ("ours: RKMK4",)}
PEERS = ("MuJoCo Euler", "MuJoCo RK4", "Pinocchio RK4")
#: one colour per simulator across the panels (ours: blue, orange, brown, pink; the peers: green, red, purple)
COLORS = {"ours: discrete model": "C0", "ours: RKMK4": "C0", "ours: variational": "C1", "ours: discrete4": "C5",
          "ours: discrete6": "C6", "MuJoCo Euler": "C2", "MuJoCo RK4": "C3", "Pinocchio RK4": "C4"}
FIGURE_DIRS = (BENCH_DIR.parent / "docs" / "work_precision", BENCH_DIR.parent / "results")


@dataclass
class Problem:
    """One robot from one start: Pinocchio's model and (q0, v0), what it conserves, and the simulators, each a
    function (h, steps) -> (q, v) at the end in Pinocchio's coordinates, its state set up before the clock."""

    name: str
    model: pin.Model
    q0: np.ndarray
    v0: np.ndarray
    conserved: callable
    simulators: dict


# ---------------------------------------------------------------------------------------------- Pinocchio
def quaternion_rate(quaternion: np.ndarray, omega: np.ndarray) -> np.ndarray:
    """q̇ = ½ q ⊗ (0, ω) for Pinocchio's [x, y, z, w] and the body-frame angular velocity ω (rad/s)."""
    u, w = quaternion[:3], quaternion[3]
    return np.concatenate([0.5 * (w * omega + np.cross(u, omega)), [-0.5 * u @ omega]])


def configuration_rate(model: pin.Model, q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """dq/dt of Pinocchio's q for velocity v: v itself for 1-DOF joints; for a free flyer R ν (ν the local linear
    velocity) and the quaternion rate; for a spherical joint the quaternion rate."""
    rate = np.empty(model.nq)
    for joint in model.joints[1:]:
        iq, iv = joint.idx_q, joint.idx_v
        if joint.nq == joint.nv:
            rate[iq:iq + joint.nq] = v[iv:iv + joint.nv]
        elif joint.nq == 7:
            quaternion = q[iq + 3:iq + 7]
            rate[iq:iq + 3] = pin.Quaternion(quaternion).toRotationMatrix() @ v[iv:iv + 3]
            rate[iq + 3:iq + 7] = quaternion_rate(quaternion, v[iv + 3:iv + 6])
        elif joint.nq == 4:
            rate[iq:iq + 4] = quaternion_rate(q[iq:iq + 4], v[iv:iv + 3])
        else:
            raise ValueError(f"joint {joint.shortname()}: no configuration rate written for it")
    return rate


def reference(model: pin.Model, q0, v0, durations, rtol: float) -> dict:
    """{duration: (q, v)} at each of ``durations`` (one integration) by DOP853 on [q, v] with Pinocchio's aba,
    quaternions renormalised."""
    data = model.createData()
    nq, tau = model.nq, np.zeros(model.nv)

    def rhs(t, y):
        q = pin.normalize(model, y[:nq])
        v = y[nq:]
        return np.concatenate([configuration_rate(model, q, v), pin.aba(model, data, q, v, tau)])

    durations = sorted(durations)
    solution = solve_ivp(rhs, (0.0, durations[-1]), np.concatenate([q0, v0]), method="DOP853", rtol=rtol, atol=rtol,
                         t_eval=durations)
    return {duration: (pin.normalize(model, y[:nq]), y[nq:]) for duration, y in zip(durations, solution.y.T,
                                                                                   strict=True)}


def pinocchio_rk4(model: pin.Model, q0, v0):
    """Classical RK4 with ``aba``: stages on the manifold through ``pin.integrate`` (as bench_space's step)."""
    data = model.createData()
    tau = np.zeros(model.nv)

    def run(h, steps):
        q, v = q0.copy(), v0.copy()
        for _ in range(steps):
            k1 = pin.aba(model, data, q, v, tau).copy()
            v2 = v + 0.5 * h * k1
            k2 = pin.aba(model, data, pin.integrate(model, q, 0.5 * h * v), v2, tau).copy()
            v3 = v + 0.5 * h * k2
            k3 = pin.aba(model, data, pin.integrate(model, q, 0.5 * h * v2), v3, tau).copy()
            v4 = v + h * k3
            k4 = pin.aba(model, data, pin.integrate(model, q, h * v3), v4, tau).copy()
            q = pin.integrate(model, q, h / 6.0 * (v + 2.0 * v2 + 2.0 * v3 + v4))
            v = v + h / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
        return q, v
    return run


# ------------------------------------------------------------------------------------------------- MuJoCo
def mujoco_run(mj, integrator: str, q0, v0, to_pinocchio):
    """``mj_step`` with ``integrator`` ("Euler" or "RK4") from MuJoCo's (qpos0, qvel0); the end state converted by
    ``to_pinocchio(qpos, qvel)``, NaN if MuJoCo found its accelerations non-finite on the way (it then resets the
    state and goes on, mujoco engine_forward.c ``mj_checkAcc``: the end state would mean nothing)."""
    import mujoco

    mj.opt.integrator = getattr(mujoco.mjtIntegrator, f"mjINT_{integrator.upper()}")
    mj.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONTACT | mujoco.mjtDisableBit.mjDSBL_LIMIT
    data = mujoco.MjData(mj)

    def run(h, steps):
        mj.opt.timestep = h
        mujoco.mj_resetData(mj, data)
        data.qpos[:], data.qvel[:] = q0, v0
        step = mujoco.mj_step
        for _ in range(steps):
            step(mj, data)
        if data.warning[mujoco.mjtWarning.mjWARN_BADQACC].number:
            return np.full(q0.size, np.nan), np.full(v0.size, np.nan)
        return to_pinocchio(data.qpos, data.qvel)
    return run


def space_robot_mjcf(robot: SpaceRobot) -> str:
    """The space robot as MJCF: a free joint at the base frame, a ball joint per link at its frame (placed at the
    parent's CoM + offset, turned by ``fixed_rotation``), inertias about each CoM; no gravity, no geometry."""
    def numbers(values):
        return " ".join(f"{float(x):.17g}" for x in values)

    def inertial(mass, com, inertia):
        full = (inertia[0, 0], inertia[1, 1], inertia[2, 2], inertia[0, 1], inertia[0, 2], inertia[1, 2])
        return f'<inertial pos="{numbers(com)}" mass="{float(mass):.17g}" fullinertia="{numbers(full)}"/>'

    def body(index: int) -> str:
        link = robot.links[index - 1]
        parent_com = robot.base_com if link.parent == 0 else robot.links[link.parent - 1].com
        children = "".join(body(b) for b, child in enumerate(robot.links, start=1) if child.parent == index)
        quaternion = matrix_to_quaternion(link.fixed_rotation)
        return (f'<body name="{link.name}" pos="{numbers(parent_com + link.offset)}" quat="{numbers(quaternion)}">'
                f'<joint name="{link.joint_name}" type="ball"/>'
                f'{inertial(link.mass, link.com, link.inertia)}{children}</body>')

    arms = "".join(body(b) for b, link in enumerate(robot.links, start=1) if link.parent == 0)
    return (f'<mujoco model="{robot.name}"><option gravity="0 0 0"/><worldbody><body name="{robot.base_name}">'
            f'<freejoint/>{inertial(robot.base_mass, robot.base_com, robot.base_inertia)}{arms}</body>'
            '</worldbody></mujoco>')


def mujoco_free_state(q: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """MuJoCo's (qpos, qvel) from Pinocchio's (free flyer first, then spherical joints): quaternions [x, y, z, w]
    -> [w, x, y, z]; the base's linear velocity from its frame to the world. ``pinocchio_free_state`` inverts it."""
    qpos, qvel = q.copy(), v.copy()
    for start in range(3, q.size, 4):
        qpos[start:start + 4] = np.roll(q[start:start + 4], 1)
    qvel[:3] = quaternion_to_matrix(qpos[3:7]) @ v[:3]
    return qpos, qvel


def pinocchio_free_state(qpos: np.ndarray, qvel: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Pinocchio's (q, v) from MuJoCo's (the inverse of :func:`mujoco_free_state`)."""
    q, v = np.array(qpos), np.array(qvel)
    for start in range(3, q.size, 4):
        q[start:start + 4] = np.roll(qpos[start:start + 4], -1)
    v[:3] = quaternion_to_matrix(qpos[3:7]).T @ qvel[:3]
    return q, v


# ----------------------------------------------------------------------------------------------- problems
def fixed_base_problem(name: str, description) -> Problem:
    """A fixed-base arm (``description``, a model) from bench_discrete's start; ours (the discrete model and its
    compositions; the variational integrator on the arm), MuJoCo, Pinocchio."""
    system = RigidBodySystem(description)
    q0, v0 = description.initial_positions + 0.3, np.linspace(0.5, -0.5, description.dof)
    model = pin.buildModelFromXML(to_urdf(description))
    model.gravity.linear[:] = description.gravity
    if list(model.names)[1:] != list(description.joint_names):
        raise AssertionError(f"Pinocchio orders the joints of {name} differently")
    data = model.createData()

    def energy(q, v):
        return pin.computeKineticEnergy(model, data, q, v) + pin.computePotentialEnergy(model, data, q)

    def ours(kind):
        def run(h, steps):
            simulation = FixedStepSimulation(system, kind, h, q0, v0)
            simulation.step(steps, np.zeros(description.dof))
            return simulation.q, simulation.qd
        return run

    same = lambda qpos, qvel: (np.array(qpos), np.array(qvel))  # noqa: E731 (the arm's coordinates agree)
    simulators = {label: ours(kind) for label, kind in DISCRETE.items()}
    if name == "arm_6dof":
        simulators["ours: variational"] = ours("variational")
    simulators.update({"MuJoCo Euler": mujoco_run(_mujoco_model(description), "Euler", q0, v0, same),
                       "MuJoCo RK4": mujoco_run(_mujoco_model(description), "RK4", q0, v0, same),
                       "Pinocchio RK4": pinocchio_rk4(model, q0, v0)})
    return Problem(name, model, q0, v0, lambda q, v: np.array([energy(q, v)]), simulators)


def space_problem() -> Problem:
    """The Table 1 dual-arm robot from bench_space's random state; ours (RKMK4), MuJoCo, Pinocchio."""
    import mujoco

    robot = SpaceRobot.from_model(load_model(package_config_path("space_robot_dual_arm.yaml")))
    state = random_state(robot, np.random.default_rng(0), speed=SPACE_SPEED)
    model = pinocchio_model(robot)
    model.gravity = pin.Motion.Zero()      # pin.Model() starts with gravity along −z; the robot floats free
    data = model.createData()
    q0, v0 = pinocchio_state(robot, state)

    def angular_momentum(q, v):
        return pin.computeCentroidalMomentum(model, data, q, v).angular.copy()

    def ours(h, steps):
        simulator = Simulator(robot, state)
        simulator.advance(h, steps)
        return pinocchio_state(robot, simulator.state)

    qpos0, qvel0 = mujoco_free_state(q0, v0)
    simulators = {OURS["dual-arm space robot"][0]: ours}
    for integrator in ("Euler", "RK4"):
        mj = mujoco.MjModel.from_xml_string(space_robot_mjcf(robot))
        simulators[f"MuJoCo {integrator}"] = mujoco_run(mj, integrator, qpos0, qvel0, pinocchio_free_state)
    simulators["Pinocchio RK4"] = pinocchio_rk4(model, q0, v0)
    return Problem("dual-arm space robot", model, q0, v0, angular_momentum, simulators)


# ------------------------------------------------------------------------------------------------ measure
def state_error(model: pin.Model, q, v, q_ref, v_ref) -> float:
    """‖(Δq, Δv · 1 s)‖_∞: Δq = pin.difference (rad, m), Δv in rad/s, m/s."""
    return float(max(np.abs(pin.difference(model, q_ref, q)).max(), np.abs(np.asarray(v) - v_ref).max()))


def drift(problem: Problem, q, v) -> float:
    """‖c(q, v) − c(q0, v0)‖ / ‖c(q0, v0)‖ of the conserved quantity c, floored at machine epsilon."""
    c0 = problem.conserved(problem.q0, problem.v0)
    return float(max(np.linalg.norm(problem.conserved(q, v) - c0) / np.linalg.norm(c0), EPSILON))


def timed(run, h: float, steps: int, repeats: int = 3, enough: float = 0.5):
    """(least CPU seconds, (q, v)) of ``run(h, steps)``, repeated while a run takes under ``enough`` s."""
    best = np.inf
    for _ in range(repeats):
        start = time.process_time()
        result = run(h, steps)
        best = min(best, time.process_time() - start)
        if best >= enough:
            break
    return best, result


def measure(problem: Problem, duration: float, step_sizes, references: tuple[dict, dict], skip=None) -> dict:
    """Every simulator at every step size over ``duration`` (h rounded so that whole steps end at it): points (h,
    CPU s, state error, drift; NaN for a run that diverged), and the reference's own error estimate (the tight and
    the loose ``references``' difference). ``skip(label, h)`` leaves a run out."""
    (q_ref, v_ref), (q_loose, v_loose) = (reference[duration] for reference in references)
    curves = {}
    for label, run in problem.simulators.items():
        run(step_sizes[-1], 2)       # compiled, warm
        points = []
        for nominal in step_sizes:
            if skip is not None and skip(label, nominal):
                continue
            steps = int(round(duration / nominal))
            h = duration / steps
            cpu, (q, v) = timed(run, h, steps)
            finite = bool(np.all(np.isfinite(q)) and np.all(np.isfinite(v)))
            points.append({"time_step": h, "cpu_seconds": cpu,
                           "state_error": state_error(problem.model, q, v, q_ref, v_ref) if finite else np.nan,
                           "drift": drift(problem, q, v) if finite else np.nan})
        curves[label] = points
    return {"problem": problem.name, "duration": duration, "curves": curves,
            "reference_error": state_error(problem.model, q_loose, v_loose, q_ref, v_ref),
            "reference_drift": drift(problem, q_ref, v_ref)}


def entries(result: dict) -> list[dict]:
    """The two entries of each of ours on one problem and horizon (see the module docstring)."""
    curves = result["curves"]
    floor = RESOLVED * result["reference_error"]
    conserved = "momentum" if result["problem"] == "dual-arm space robot" else "energy"

    def best(ratios):
        finite = [r for r in ratios.values() if np.isfinite(r)]
        return min(finite) if finite else float("nan")

    listed = []
    for index, label in enumerate(OURS[result["problem"]]):
        name = f"{result['problem']}, {result['duration']:g} s" + ("" if index == 0 else f", {DISCRETE[label]}")
        ours = curves[label]
        time_ratios = {peer: matched(ours, curves[peer], "state_error", "cpu_seconds", floor) for peer in PEERS}
        drift_ratios = {peer: matched(ours, curves[peer], "cpu_seconds", "drift", reach=REACH) for peer in PEERS}
        listed += [
            {"name": f"{name}: CPU time at matched state error", "ratio": best(time_ratios),
             "baseline": "the fastest of MuJoCo Euler/RK4 and Pinocchio RK4", "peer": "mujoco, pinocchio",
             "unit": f"CPU time, peer / ours, at the tightest state error both reach above {RESOLVED:g} x the "
                     "reference's own error (NaN: none)", "ratios": time_ratios,
             "reference_error": result["reference_error"], "details": curves},
            {"name": f"{name}: {conserved} drift at matched CPU time", "ratio": best(drift_ratios),
             "baseline": "the least drift of MuJoCo Euler/RK4 and Pinocchio RK4", "peer": "mujoco, pinocchio",
             "unit": "relative drift, peer / ours, at matched CPU time (the peer's curve extended log-log by up "
                     f"to {REACH:g}x in CPU time)", "ratios": drift_ratios,
             "reference_drift": result["reference_drift"]},
        ]
    return listed


def plot(results: list[dict], output_dirs) -> list[Path]:
    """Error (top: state, bottom: drift) against CPU time, one column per problem and horizon."""
    fig, axes = new_figure(2, len(results), figsize=(4.2 * len(results), 7.0), squeeze=False)
    for column, result in enumerate(results):
        for row, (key, what) in enumerate((("state_error", "state error ‖(Δq, Δv·1 s)‖∞ (rad, m)"),
                                           ("drift", "angular momentum drift" if result["problem"] ==
                                            "dual-arm space robot" else "energy drift"))):
            ax = axes[row, column]
            for label, points in result["curves"].items():
                if points:
                    ax.loglog([p["cpu_seconds"] for p in points], [p[key] for p in points],
                              "o-" if label.startswith("ours") else "s--", color=COLORS[label], label=label,
                              markersize=4)
            ax.set_xlabel("CPU time (s)")
            ax.set_ylabel(what if key == "state_error" else f"relative {what}")
            ax.set_title(f"{result['problem']}, {result['duration']:g} s", fontsize=10)
            ax.grid(True, which="major", alpha=0.3)
            if key == "state_error":
                ax.axhline(RESOLVED * max(result["reference_error"], EPSILON), color="grey", linewidth=0.8,
                           linestyle=":", label=f"{RESOLVED:g} x the reference's own error")
                if result["reference_error"] > 1e-3:
                    ax.text(0.5, 0.5, "below the dotted line: not resolved\n(the motion is chaotic: the reference\n"
                            "itself is off by this much)", transform=ax.transAxes, ha="center", fontsize=7,
                            color="grey")
        axes[0, column].legend(fontsize=6)
    paths = [save_figure(fig, directory, "work_precision") for directory in output_dirs[:1]]
    for directory in output_dirs[1:]:
        Path(directory).mkdir(parents=True, exist_ok=True)
        target = Path(directory) / paths[0].name
        target.write_bytes(paths[0].read_bytes())
        paths.append(target)
    return paths


def run(step_sizes=None, output_dirs=FIGURE_DIRS) -> list[dict]:
    """All problems over every horizon of ``step_sizes`` ({duration: step sizes}, default STEP_SIZES)."""
    step_sizes = STEP_SIZES if step_sizes is None else step_sizes
    start = time.process_time()

    def skip(label, h):
        return label in LONG_RUN_STEPS_100S and h not in LONG_RUN_STEPS_100S[label]

    problems = (fixed_base_problem("arm_6dof", load_model(package_config_path("arm_6dof.yaml"))),
                fixed_base_problem("ur5", load_model(example_robot_path("ur5"))), space_problem())
    results = []
    for problem in problems:
        references = tuple(reference(problem.model, problem.q0, problem.v0, step_sizes, rtol)
                           for rtol in (REFERENCE_RTOL, 10.0 * REFERENCE_RTOL))
        for duration, sizes in sorted(step_sizes.items()):
            results.append(measure(problem, duration, sizes, references, skip if duration >= 100.0 else None))
    figures = plot(results, output_dirs)
    all_entries = [entry for result in results for entry in entries(result)]
    all_entries[0]["figures"] = [str(path) for path in figures]
    all_entries[0]["benchmark_cpu_seconds"] = time.process_time() - start
    return all_entries


if __name__ == "__main__":
    for entry in run():
        print(f"{entry['name']:60s} {entry['ratio']:8.3g}  {entry['ratios']}")
