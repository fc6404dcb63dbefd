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

Peer: toppra (TOPP-RA, continuous path dynamics, first order in the grid) on the 2-link problem with its
JointTorqueConstraint fed by Pinocchio's ``rnea`` on the arm's URDF (the setup a toppra user writes; Pinocchio's
torques agree with ours to 1e-14, checked here). Both planners are timed at equal N (N = 500) and at equal
accuracy: the same distance from the continuous optimum (planning.continuous_topp), ours on the coarsest grid
that is at least as close as toppra at N = 500 and at N = 2000. ratio = toppra time / ours (above 1: ours is
faster); best of three CPU times each.

Minimum effort (DMOC) against Crocoddyl. The issue's problem: the 6-joint arm from its initial positions to 0.5 rad
further on every joint, at rest at both ends, in 1.5 s, within the model's effort limits, minimising Σ h ½|F|².
Ours: :func:`~discrete_robot.planning.dmoc_sparse.min_effort` (IPOPT on the discrete model) with the model's
velocity limits too. Peer: Crocoddyl's SolverBoxFDDP (control bounds = the effort limits) on the arm's URDF
(model/urdf.py) in Pinocchio, Euler and RK4 integrated action models, the control cost dt ½|u|², the goal state as
a terminal cost of weight 1e6 (FDDP has no hard terminal constraint) and no velocity limit (it has no bound on
states). Both from the same two start guesses (the straight line with gravity compensation; the minimum-time plan
slowed to 1.5 s with its inverse dynamics), at h = 0.1, 0.05, 0.025. Per run: effort, terminal error on the
solver's own model, the forces replayed through the continuous equations (DOP853 at 1e-12: what the motion does
to the real arm), the largest joint speed, wall-clock solve time. ratio = Crocoddyl's time / ours.
"""

import time

import numpy as np

from discrete_robot.discrete.dynamic_model import DiscreteDynamicModel
from discrete_robot.model.description import load_model, package_config_path
from discrete_robot.model.dynamics import RigidBodySystem
from discrete_robot.model.urdf import to_urdf
from discrete_robot.planning.constraints import JointLimits
from discrete_robot.planning.continuous_topp import time_optimal_segment
from discrete_robot.planning.min_time import plan_min_time, plan_min_time_nlp
from discrete_robot.planning.path import WaypointPath

NLP_BASELINE = "scipy SLSQP over the time steps, same model, limits and grid"
TOPPRA_GRIDS = (50, 100, 200, 500, 1000, 2000)
OUR_GRIDS = (10, 20, 40, 80, 160, 320, 500)
PLANAR_EFFORT = np.array([20.0, 10.0])
PLANAR_MOVE = (np.zeros(2), np.array([np.pi / 2, np.pi / 4]))


def _problems():
    planar = load_model(package_config_path("planar_2link.yaml"))
    arm = load_model(package_config_path("arm_6dof.yaml"))
    start = arm.initial_positions
    return [
        ("2-link", planar, JointLimits.create(planar.joint_names, PLANAR_EFFORT, planar.velocity_limits),
         WaypointPath(list(PLANAR_MOVE)), (10, 20, 40, 80, 160, 320), (10, 20, 40)),
        ("6-joint", arm, JointLimits.from_model(arm),
         WaypointPath([start, start + np.array([0.8, -0.5, 0.6, 0.4, -0.6, 1.0])]), (10, 20, 40, 80), (10, 20)),
    ]


def run() -> list[dict]:
    entries = []
    for label, model, limits, path, grids, nlp_grids in _problems():
        discrete = DiscreteDynamicModel(RigidBodySystem(model))
        first_time = None
        plan_min_time(discrete, path, limits, grids[0])      # loads the compiled kernels: not part of a plan
        for points in grids:
            elapsed, plan = _best_cpu_time(lambda p=points, d=discrete, w=path, c=limits: plan_min_time(d, w, c, p))
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
    return entries + toppra_entries() + retime_entries() + dmoc_entries()


def _best_cpu_time(function, repeats: int = 3) -> tuple[float, object]:
    """(the least CPU time of ``repeats`` calls, the last call's result)."""
    times = []
    for _ in range(repeats):
        started = time.process_time()
        result = function()
        times.append(time.process_time() - started)
    return min(times), result


def toppra_entries() -> list[dict]:
    """Ours vs toppra on the 2-link move, at equal N and at equal accuracy (module docstring)."""
    import pinocchio as pin
    import toppra
    import toppra.algorithm as algorithm
    import toppra.constraint as constraint

    planar = load_model(package_config_path("planar_2link.yaml"))
    system = RigidBodySystem(planar)
    pin_model = pin.buildModelFromXML(to_urdf(planar))
    pin_model.gravity.linear = planar.gravity
    pin_data = pin_model.createData()
    state = np.random.default_rng(0).normal(size=(3, 2))
    agreement = float(np.max(np.abs(pin.rnea(pin_model, pin_data, *state) - system.inverse_dynamics(*state))))
    start, end = PLANAR_MOVE
    optimum = time_optimal_segment(system, start, end, PLANAR_EFFORT).duration
    torque = constraint.JointTorqueConstraint(lambda q, v, a: pin.rnea(pin_model, pin_data, q, v, a),
                                              np.column_stack([-PLANAR_EFFORT, PLANAR_EFFORT]), np.zeros(2))
    line = toppra.SplineInterpolator([0.0, 1.0], np.vstack([start, end]))

    def peer(points):
        solver = algorithm.TOPPRA([torque], line, gridpoints=np.linspace(0.0, 1.0, points + 1),
                                  parametrizer="ParametrizeConstAccel")
        return solver.compute_trajectory(0.0, 0.0).duration

    discrete = DiscreteDynamicModel(system)
    limits = JointLimits.create(planar.joint_names, PLANAR_EFFORT, planar.velocity_limits)
    path = WaypointPath(list(PLANAR_MOVE))
    theirs = {points: _best_cpu_time(lambda p=points: peer(p)) for points in TOPPRA_GRIDS}
    ours = {points: _best_cpu_time(lambda p=points: plan_min_time(discrete, path, limits, p).duration)
            for points in OUR_GRIDS}
    common = {"baseline": "toppra (TOPPRA, torque limits via Pinocchio rnea)", "unit": "toppra time / ours",
              "continuous_optimum_s": optimum, "pinocchio_torque_agreement_N_m": agreement,
              "toppra": {p: {"time_s": t, "duration_s": d, "error_s": d - optimum} for p, (t, d) in theirs.items()},
              "ours": {p: {"time_s": t, "duration_s": d, "error_s": d - optimum} for p, (t, d) in ours.items()}}
    entries = [{"name": "min-time 2-link vs toppra, N=500", "ratio": theirs[500][0] / ours[500][0],
                "our_time_s": ours[500][0], "toppra_time_s": theirs[500][0], **common}]
    for points in (500, 2000):
        error = abs(theirs[points][1] - optimum)
        matching = [p for p in OUR_GRIDS if abs(ours[p][1] - optimum) <= error]
        if matching:
            p = matching[0]
            entries.append({"name": f"min-time 2-link vs toppra at equal accuracy (toppra N={points})",
                            "ratio": theirs[points][0] / ours[p][0], "error_s": error, "our_points": p,
                            "our_time_s": ours[p][0], "toppra_time_s": theirs[points][0], **common})
    return entries


def _sampled_path(model, points: int, seed: int) -> np.ndarray:
    """A random smooth joint path sampled at ``points`` points, as a sampling planner returns one: from the
    model's initial positions, three random sinusoids per joint (amplitude ≤ 0.9 rad in all), inside the limits;
    prismatic joints (the Panda's fingers) held."""
    rng = np.random.default_rng(seed)
    u = np.linspace(0.0, 1.0, points)[:, None]
    revolute = np.array([name.find("finger") < 0 for name in model.joint_names], dtype=float)
    start = np.where(revolute > 0.0, np.clip(model.initial_positions, model.lower + 0.3, model.upper - 0.3),
                     0.5 * (model.lower + model.upper))
    wave = sum(rng.uniform(-0.3, 0.3, model.dof) * np.sin(np.pi * u * k + rng.uniform(0, 2 * np.pi, model.dof))
               for k in (1, 2, 3))
    return np.clip(start + revolute * (wave - wave[0]), model.lower + 0.05 * revolute, model.upper - 0.05 * revolute)


def _dense_torques(torques, path, s, v) -> np.ndarray:
    """Torques along a timing (nodes s, path speeds v, s̈ constant over each step) at ten points per step."""
    fraction = np.linspace(0.0, 1.0, 10)
    rows = []
    for k in range(s.size - 1):
        ds = s[k + 1] - s[k]
        sdd = (v[k + 1] ** 2 - v[k] ** 2) / (2.0 * ds)
        for f in fraction:
            q, dq, ddq = (d[0] for d in path.derivatives(np.array([s[k] + f * ds])))
            speed2 = v[k] ** 2 + 2.0 * sdd * f * ds
            rows.append(torques(q, dq * np.sqrt(max(speed2, 0.0)), dq * sdd + ddq * speed2))
    return np.array(rows)


def retime_entries() -> list[dict]:
    """Retiming a 50- and a 200-point joint path on the UR5 and the Panda (example-robot-data URDFs) against
    toppra on the same path (the same not-a-knot spline over a uniform parameter) with the same torque and velocity
    limits, its JointTorqueConstraint fed by Pinocchio's rnea on the same URDF (the Panda's fingers locked), on its
    default grid, on our grid (collocation, its default, and interpolation, both ends of a step as ours) and on our
    grid refined 2x and 4x. Solve time: best of three CPU times; ratio: toppra's fastest run at equal accuracy
    (recomputed peak torque within 1.01 x the limit, as ours) over ours. Peak torque: Pinocchio's rnea on the timed
    path at ten points per grid step (ours) or on toppra's returned trajectory at 1e-4 s (toppra), over the limit."""
    import pinocchio as pin
    import toppra
    import toppra.algorithm as algorithm
    import toppra.constraint as constraint

    from discrete_robot.model.example_robots import example_robot_path
    from discrete_robot.planning.path import SplinePath
    from discrete_robot.planning.retime import retime

    entries = []
    for robot in ("ur5", "panda"):
        urdf = str(example_robot_path(robot))
        model = load_model(urdf)
        full = pin.buildModelFromUrdf(urdf)
        fingers = [full.getJointId(name) for name in full.names if "finger" in name]
        pin_model = pin.buildReducedModel(full, fingers, pin.neutral(full)) if fingers else full
        pin_data = pin_model.createData()
        arm = [model.joint_names.index(name) for name in pin_model.names[1:]]
        effort, velocity = model.effort_limits[arm], model.velocity_limits[arm]
        system = RigidBodySystem(model)
        for points in (50, 200):
            path_points = _sampled_path(model, points, seed=points)
            ours = _best_cpu_time(lambda p=path_points, m=model, y=system: retime(m, m.joint_names, p, system=y))
            timed = ours[1]
            spline = SplinePath(path_points[:, arm])
            v = np.linalg.norm(timed.velocities[:, arm], axis=1) / np.maximum(
                np.linalg.norm(spline.derivatives(timed.s)[1], axis=1), 1e-300)

            def rnea(q, qd, qdd, pm=pin_model, pd=pin_data):
                return pin.rnea(pm, pd, q, qd, qdd)

            our_peak = float(np.max(np.abs(_dense_torques(rnea, spline, timed.s, v)) / effort))
            # the same spline over s = 0..1 (a uniform parameter scaled: the same path); over 0..N-1 toppra's own
            # grid and its seidel solver give no trajectory on 5 of 6 such paths
            line = toppra.SplineInterpolator(np.linspace(0.0, 1.0, points), path_points[:, arm])

            def constraints(scheme, rnea=rnea, effort=effort, velocity=velocity):
                return [constraint.JointTorqueConstraint(rnea, np.column_stack([-effort, effort]),
                                                         np.zeros(len(effort)), discretization_scheme=scheme),
                        constraint.JointVelocityConstraint(np.column_stack([-velocity, velocity]))]

            def peer(grid, limits, line=line):
                return algorithm.TOPPRA(limits, line, gridpoints=grid,
                                        parametrizer="ParametrizeConstAccel").compute_trajectory(0, 0)

            def peak(trajectory, rnea=rnea, effort=effort):
                t = np.arange(0.0, trajectory.duration, 1e-4)
                return float(np.max(np.abs([rnea(*(trajectory(ti, order) for order in (0, 1, 2))) for ti in t])
                                    / effort))

            def refined(grid, times):
                """The grid with every step split into ``times`` equal steps."""
                inner = grid[:-1, None] + np.diff(grid)[:, None] * (np.arange(times) / times)
                return np.concatenate([inner.ravel(), grid[-1:]])

            ours_grid = timed.s / timed.s[-1]
            collocation = constraints(constraint.DiscretizationType.Collocation)
            runs = {"toppra default grid": (None, collocation),
                    "toppra same grid": (ours_grid, collocation),
                    "toppra same grid, interpolation": (ours_grid,
                                                        constraints(constraint.DiscretizationType.Interpolation)),
                    "toppra 2x grid": (refined(ours_grid, 2), collocation),
                    "toppra 4x grid": (refined(ours_grid, 4), collocation)}
            peers = {}
            for label, (grid, limits) in runs.items():
                cost, trajectory = _best_cpu_time(lambda g=grid, c=limits: peer(g, c))
                peers[label] = {"grid_steps": None if grid is None else int(grid.size - 1), "time_s": cost,
                                "duration_s": trajectory.duration, "peak": peak(trajectory)}
            # equal accuracy: toppra's fastest run whose recomputed torque is within 1 % of the limit, as ours is
            accurate = [label for label, run in peers.items() if run["peak"] <= 1.01]
            equal = min(accurate, key=lambda label: peers[label]["time_s"]) if accurate else None
            entries.append({
                "name": f"retime {robot} {points} points vs toppra",
                "ratio": peers[equal]["time_s"] / ours[0] if equal else None,
                "unit": "toppra time at equal accuracy (recomputed peak <= 1.01) / ours",
                "baseline": "toppra (TOPPRA, torque via Pinocchio rnea, velocity)",
                "our_time_s": ours[0], "our_duration_s": timed.duration, "our_peak_torque_fraction": our_peak,
                "our_grid_steps": int(timed.s.size - 1), "point_deviation_rad": timed.deviation,
                "toppra_equal_accuracy": equal, "toppra": peers,
                "same_grid_ratio": peers["toppra same grid"]["time_s"] / ours[0],
                "duration_difference": timed.duration / peers[equal or "toppra same grid"]["duration_s"] - 1.0})
    return entries


if __name__ == "__main__":
    for row in run():
        print(row)


DMOC_STEPS = (0.1, 0.05, 0.025)
DMOC_DURATION = 1.5
CROCODDYL_TERMINAL_WEIGHT = 1e6


def _crocoddyl_min_effort(model, start, goal, h: float, integrator: str, xs, us) -> dict:
    """Crocoddyl's box-FDDP on the move (module docstring) from the states ``xs`` and controls ``us``."""
    import crocoddyl
    import pinocchio as pin

    pin_model = pin.buildModelFromXML(to_urdf(model))
    pin_model.gravity.linear = model.gravity
    state = crocoddyl.StateMultibody(pin_model)
    actuation = crocoddyl.ActuationModelFull(state)
    target = np.concatenate([goal, np.zeros(model.dof)])

    def action(terminal: bool, dt: float):
        costs = crocoddyl.CostModelSum(state, actuation.nu)
        if terminal:
            costs.addCost("goal", crocoddyl.CostModelResidual(
                state, crocoddyl.ResidualModelState(state, target, actuation.nu)), CROCODDYL_TERMINAL_WEIGHT)
        else:
            costs.addCost("effort", crocoddyl.CostModelResidual(
                state, crocoddyl.ResidualModelControl(state, actuation.nu)), 1.0)
        differential = crocoddyl.DifferentialActionModelFreeFwdDynamics(state, actuation, costs)
        if integrator == "rk4":
            return crocoddyl.IntegratedActionModelRK(differential, crocoddyl.RKType.four, dt)
        return crocoddyl.IntegratedActionModelEuler(differential, dt)

    running = action(False, h)
    running.u_lb, running.u_ub = -model.effort_limits, model.effort_limits
    problem = crocoddyl.ShootingProblem(np.concatenate([start, np.zeros(model.dof)]), [running] * len(us),
                                        action(True, 0.0))
    solver = crocoddyl.SolverBoxFDDP(problem)
    started = time.perf_counter()
    converged = solver.solve(list(xs), list(us), 1000, False, 1e-9)
    elapsed = time.perf_counter() - started
    states, controls = np.array(solver.xs), np.array(solver.us)
    return {"converged": bool(converged), "iterations": int(solver.iter), "solve_time_s": elapsed,
            "effort": 0.5 * h * float(np.sum(controls ** 2)),
            "terminal_error": float(np.max(np.abs(states[-1] - target))),
            "max_speed_rad_s": float(np.max(np.abs(states[:, model.dof:]))), "controls": controls}


def dmoc_entries() -> list[dict]:
    """Ours vs Crocoddyl on the 6-joint minimum-effort move (module docstring), from both guesses at each step."""
    return [dmoc_entry(guess, h) for guess in ("line", "min_time") for h in DMOC_STEPS]


def dmoc_entry(guess: str, h: float) -> dict:
    """One row of :func:`dmoc_entries`."""
    from discrete_robot.planning.continuous_replay import replay_arm
    from discrete_robot.planning.dmoc_sparse import DmocProblem, min_effort

    model = load_model(package_config_path("arm_6dof.yaml"))
    system = RigidBodySystem(model)
    discrete = DiscreteDynamicModel(system)
    limits = JointLimits.from_model(model)
    start = model.initial_positions
    goal = start + 0.5
    ours = min_effort(discrete, start, goal, DMOC_DURATION, h, limits, guess=guess)
    problem = DmocProblem(discrete, start, goal, DMOC_DURATION, h, limits.effort, limits.velocity)
    q, qd, w = problem.layout.split(problem.guess(guess, limits))
    peers = {}
    for integrator in ("rk4", "euler"):
        theirs = _crocoddyl_min_effort(model, start, goal, problem.h, integrator, np.hstack([q, qd]),
                                       w * limits.effort)
        q_end, qd_end = replay_arm(system, start, np.zeros(model.dof), problem.h, theirs.pop("controls"))
        theirs["continuous_terminal_error"] = float(max(np.max(np.abs(q_end - goal)), np.max(np.abs(qd_end))))
        peers[f"crocoddyl_{integrator}"] = theirs
    return {"name": f"min-effort 6-joint h={h} from {guess}", "guess": guess, "h": problem.h,
            "unit": "Crocoddyl time / ours", "baseline": "Crocoddyl SolverBoxFDDP (RK4), same guess",
            "ratio": peers["crocoddyl_rk4"]["solve_time_s"] / ours.outcome.solve_time,
            "ours": {"success": ours.outcome.success, "message": ours.outcome.message,
                     "iterations": ours.outcome.iterations, "solve_time_s": ours.outcome.solve_time,
                     "effort": ours.effort, "terminal_error": ours.terminal_error,
                     "equality_residual": ours.outcome.constraint_violation,
                     "continuous_terminal_error": ours.continuous_terminal_error,
                     "max_speed_rad_s": float(np.max(np.abs(ours.velocity)))},
            **peers}
