"""The experiments a sweep runs: each a pure function ``(inputs, seed) -> metrics`` of the core (no ROS).

- ``push-to-pose``: the closed chain in process (:mod:`discrete_robot.manipulation.chain`): pushes planned on
  what the planner assumes (``planner_*``: support friction, finger friction and pressure distribution;
  default the world's), the finger motion tracked by the arm simulated at ``time_step``, the world's object
  (its own frictions and pressure: ``uniform``, ``rim`` or ``three_point`` random legs drawn from the case
  seed) following the actual fingertip; open loop, as the manipulation node executes a plan. A goal missed
  is a result (``success`` false); a goal the planner cannot plan for fails the case with its reason.
- ``predict-push``: one minimum-power prediction at a point of an edge (``contact_edge``, ``contact_fraction``
  along it from its first vertex) with the finger moving at ``pusher_angle`` from the edge's inward normal
  (counter-clockwise positive): twist, contact mode, centre of rotation and rotation sense.
- ``min-time``: a minimum-time plan with the model's torque limits scaled by ``torque_scale``: duration and
  solve time.
- ``simulate``: the unforced model from (q0, qd0) with an integrator at step ``dt`` for ``duration``: the
  largest energy drift and the final state.

Inputs are named as the command-line options of ``experiment push-to-pose``, ``push predict``, ``plan
min-time`` and ``discrete simulate`` (``_`` for ``-``). Everything a case builds from its inputs alone (the
arm, a plan, a pushed object without random legs) is kept per worker process, so a worker pays for it once.
"""

import functools
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from discrete_robot.discrete import IntegratorKind
from discrete_robot.errors import DiscreteRobotError, InputError
from discrete_robot.pushing.support import PRESSURES
from discrete_robot.sweep.spec import REQUIRED, Input

SQUARE = [-0.05, -0.05, 0.05, -0.05, 0.05, 0.05, -0.05, 0.05]
MAX_STEPS = 10_000_000
#: times a simulate case compares T + V with its start
ENERGY_SAMPLES = 1000


@dataclass(frozen=True)
class Metric:
    """One result column: ``kind`` number, integer, boolean, text or vector; ``timing`` when it measures this
    machine (wall or CPU time), not the computation's outcome."""

    name: str
    kind: str
    help: str = ""
    timing: bool = False


def metrics(table: str) -> tuple[Metric, ...]:
    """The metrics of a text table, one a line: name, kind (followed by ``timing`` when it measures the machine)
    and help. A table rather than one ``Metric(...)`` call a line: each experiment lists its columns once."""
    rows = []
    for line in table.strip().splitlines():
        name, kind, help_text = line.split(maxsplit=2)
        timing = help_text.startswith("timing ")
        rows.append(Metric(name, kind, help_text.removeprefix("timing ").lstrip(), timing))
    return tuple(rows)


@dataclass(frozen=True)
class Experiment:
    """What a sweep needs of an experiment: its inputs and metrics, ``resolve`` (fills the defaults that depend
    on other inputs and checks inputs together; InputError starting with the input's name), the pure
    ``function(inputs, seed) -> metrics``, and how many cases make one Ray task at most (``batch``)."""

    name: str
    summary: str
    inputs: tuple[Input, ...]
    metrics: tuple[Metric, ...]
    function: Callable[[dict, int], dict]
    resolve: Callable[[dict], dict] = field(default=lambda inputs: inputs)
    batch: int = 1


def _model_path(name: str) -> Path:
    from discrete_robot.model.description import package_config_path

    return Path(name) if Path(name).exists() else package_config_path(name)


@functools.lru_cache(maxsize=16)
def _model(name: str):
    from discrete_robot.model.description import load_model

    try:
        return load_model(_model_path(name))
    except DiscreteRobotError as error:
        raise InputError(f"model: {error}") from None


@functools.lru_cache(maxsize=16)
def _arm_scene(model_name: str, radius: float):
    """The arm's finger over its shipped scene (config/table_scene_<model name>.yaml)."""
    from discrete_robot.manipulation.arm import ArmFinger
    from discrete_robot.manipulation.scene import load_scene, scene_path_for

    model = _model(model_name)
    try:
        scene = load_scene(scene_path_for(model.name))
        return ArmFinger.in_scene(model, scene, radius), scene
    except DiscreteRobotError as error:
        raise InputError(f"model: {error}") from None


@functools.lru_cache(maxsize=256)
def _footprint(values: tuple, what: str) -> np.ndarray:
    from discrete_robot.pushing.polygon import as_footprint

    if len(values) < 6 or len(values) % 2:
        raise InputError(f"{what}: expected x, y pairs of at least 3 points, got {len(values)} values")
    return as_footprint(np.reshape(values, (-1, 2)), what)


@functools.lru_cache(maxsize=256)
def _uniform_or_rim(footprint: tuple, support_friction: float, normal_force: float, pressure: str,
                    rim_points: int):
    return _pushed_object(np.reshape(footprint, (-1, 2)), support_friction, normal_force, pressure, rim_points,
                          None)


def _pushed_object(footprint: np.ndarray, support_friction: float, normal_force: float, pressure: str,
                   rim_points: int, rng):
    from discrete_robot.pushing.object_model import make_pushed_object
    from discrete_robot.pushing.support import pressure_points

    support = pressure_points(footprint, pressure, rng, rim_points)
    points, weights = support if support is not None else (None, None)
    return make_pushed_object(footprint, support_friction, normal_force, support_points=points,
                              support_weights=weights)


def pushed_object(footprint: np.ndarray, support_friction: float, normal_force: float, pressure: str,
                  rim_points: int, legs_seed: int):
    """The object on ``pressure``: built once per worker unless it stands on legs drawn from ``legs_seed``."""
    if pressure == "three_point":
        return _pushed_object(footprint, support_friction, normal_force, pressure, rim_points,
                              np.random.default_rng(legs_seed))
    return _uniform_or_rim(tuple(footprint.ravel().tolist()), support_friction, normal_force, pressure,
                           rim_points)


# ---------------------------------------------------------------------------------------------- push-to-pose

PUSH_TO_POSE_INPUTS = (
    Input("model", "text", "arm_6dof.yaml", "arm model file (config/ name or path) with a fingertip; its scene is "
          "config/table_scene_<model name>.yaml"),
    Input("goal", "vector", REQUIRED, "object goal pose x, y, theta (world: m, m, rad)", size=3),
    Input("start", "vector", None, "object start pose x, y, theta (default: the scene's)", size=3),
    Input("object_footprint", "vector", None, "x0, y0, x1, y1, ... counter-clockwise, m (default: the scene's)"),
    Input("normal_force", "number", None, "N (default: the scene's)", low=0.0),
    Input("support_friction", "number", None, "object-table, as the world has it (default: the scene's)",
          low=0.0),
    Input("contact_friction", "number", None, "finger-object, as the world has it (default: the scene's)",
          low=0.0),
    Input("pressure", "choice", "uniform", "the world's support: uniform, rim (on the outline) or three_point "
          "(random legs from the case seed)", choices=PRESSURES),
    Input("rim_points", "integer", 32, "support points along the outline of a rim", low=3, high=10_000),
    Input("finger_radius", "number", None, "m (default: the model file's)", low=0.0, high=1.0),
    Input("time_step", "number", 0.001, "the arm simulation's step, s", low=1e-5, high=0.02),
    Input("max_push_speed", "number", 0.05, "fingertip speed while it may touch the object, m/s", low=1e-4,
          high=10.0),
    Input("reposition_speed", "number", 0.2, "fingertip speed between pushes, m/s", low=1e-4, high=10.0),
    Input("position_tolerance", "number", 0.01, "goal tolerance, m", low=1e-5, high=1.0),
    Input("angle_tolerance", "number", 0.0873, "goal tolerance, rad", low=1e-5, high=math.pi),
    Input("planner_support_friction", "number", None, "what the planner assumes (default: support_friction)",
          low=0.0),
    Input("planner_contact_friction", "number", None, "what the planner assumes (default: contact_friction)",
          low=0.0),
    Input("planner_pressure", "choice", None, "what the planner assumes (default: pressure; three_point = the "
          "world's legs)", choices=PRESSURES),
)


def resolve_push_to_pose(inputs: dict) -> dict:
    """The scene's values where the spec gives none; the planner's where it gives none are the world's."""
    arm, scene = _arm_scene(inputs["model"], 0.0)
    defaults = {"start": scene.start_pose.tolist(), "object_footprint": scene.obj.footprint.ravel().tolist(),
                "normal_force": scene.obj.normal_force, "support_friction": scene.obj.support_friction,
                "contact_friction": scene.contact_friction, "finger_radius": arm.radius}
    inputs = {**inputs, **{k: float(v) if np.isscalar(v) else v for k, v in defaults.items() if inputs[k] is None}}
    _footprint(tuple(inputs["object_footprint"]), "object_footprint")
    for name in ("support_friction", "contact_friction", "pressure"):
        if inputs[f"planner_{name}"] is None:
            inputs[f"planner_{name}"] = inputs[name]
    return inputs


@functools.lru_cache(maxsize=64)
def _motion(model: str, radius: float, footprint: tuple, support_friction: float, normal_force: float,
            pressure: str, rim_points: int, legs_seed: int, start: tuple, goal: tuple, contact_friction: float,
            speeds: tuple, tolerances: tuple):
    """The planned pushes and finger motion (kept: every case of a sweep whose planner assumes the same plans
    the same)."""
    from discrete_robot.manipulation.push_to_pose import PushGoal, plan_push_motion

    arm, scene = _arm_scene(model, radius)
    obj = pushed_object(np.reshape(footprint, (-1, 2)), support_friction, normal_force, pressure, rim_points,
                        legs_seed)
    request = PushGoal(obj, np.array(start), np.array(goal), contact_friction)
    return plan_push_motion(arm, scene, request, arm.ready, *speeds, *tolerances)


def push_to_pose(inputs: dict, seed: int) -> dict:
    """Plan on the planner's assumptions, execute with the arm on the world's object (module docstring)."""
    import dataclasses

    from discrete_robot.manipulation.chain import execute_pushes
    from discrete_robot.manipulation.push_to_pose import pose_error

    position, angle = pose_error(inputs["start"], inputs["goal"])
    if position <= inputs["position_tolerance"] and abs(angle) <= inputs["angle_tolerance"]:
        # a start that meets the goal: nothing to plan or push, as manipulation_node answers such a goal at once
        return {"success": True, "position_error_m": position, "angle_error_rad": angle, "pushes": 0,
                "simulated_s": 0.0, "penetration_m": 0.0, "final_pose": [float(v) for v in inputs["start"]]}
    arm, scene = _arm_scene(inputs["model"], inputs["finger_radius"])
    footprint = _footprint(tuple(inputs["object_footprint"]), "object_footprint")
    # the planner on legs assumes the world's legs (drawn from the same seed)
    legs_seed = seed if "three_point" in (inputs["pressure"], inputs["planner_pressure"]) else 0
    motion = _motion(inputs["model"], inputs["finger_radius"], tuple(footprint.ravel().tolist()),
                     inputs["planner_support_friction"], inputs["normal_force"], inputs["planner_pressure"],
                     inputs["rim_points"], legs_seed, tuple(inputs["start"]), tuple(inputs["goal"]),
                     inputs["planner_contact_friction"], (inputs["max_push_speed"], inputs["reposition_speed"]),
                     (inputs["position_tolerance"], inputs["angle_tolerance"]))
    world = pushed_object(footprint, inputs["support_friction"], inputs["normal_force"], inputs["pressure"],
                          inputs["rim_points"], legs_seed)
    executed = execute_pushes(arm, dataclasses.replace(scene, obj=world, contact_friction=inputs["contact_friction"]),
                              motion.trajectory, np.array(inputs["start"]), time_step=inputs["time_step"])
    position, angle = pose_error(executed.poses[-1], inputs["goal"])
    return {"success": bool(position <= inputs["position_tolerance"] and abs(angle) <= inputs["angle_tolerance"]),
            "position_error_m": position, "angle_error_rad": angle, "pushes": len(motion.plan.pushes),
            "simulated_s": float(executed.t[-1]), "penetration_m": float(executed.penetration),
            "final_pose": executed.poses[-1].tolist()}


PUSH_TO_POSE_METRICS = metrics("""
    success           boolean  the object ended within the goal tolerances
    position_error_m  number   final distance from the goal, m
    angle_error_rad   number   final angle from the goal's, rad in (-pi, pi]
    pushes            integer  pushes planned
    simulated_s       number   simulated time of the execution (with 0.5 s settling), s
    penetration_m     number   deepest the finger sank into the object, m
    final_pose        vector   the object's final x, y, theta (m, rad)
""")

# ---------------------------------------------------------------------------------------------- predict-push

PREDICT_PUSH_INPUTS = (
    Input("footprint", "vector", SQUARE, "x0, y0, x1, y1, ... counter-clockwise, m (default: a 10 cm square)"),
    Input("normal_force", "number", 2.0, "N", low=0.0),
    Input("support_friction", "number", 0.4, "object-table", low=0.0),
    Input("contact_friction", "number", 0.3, "finger-object", low=0.0),
    Input("pusher_radius", "number", 0.0, "m", low=0.0, high=1.0),
    Input("pressure", "choice", "uniform", "uniform, rim or three_point (legs from the case seed)",
          choices=PRESSURES),
    Input("rim_points", "integer", 32, "support points along the outline of a rim", low=3, high=10_000),
    Input("contact_edge", "integer", 0, "edge touched: from vertex k to k + 1", low=0, high=10_000),
    Input("contact_fraction", "number", 0.5, "where along the edge, from its first vertex", low=0.0, high=1.0),
    Input("pusher_angle", "number", 0.0, "finger direction from the edge's inward normal, rad, counter-clockwise",
          low=-math.pi, high=math.pi),
    Input("pusher_speed", "number", 0.05, "m/s (quasistatic: scales the twist only)", low=1e-6, high=1e3),
)


def resolve_predict_push(inputs: dict) -> dict:
    footprint = _footprint(tuple(inputs["footprint"]), "footprint")
    if inputs["contact_edge"] >= len(footprint):
        raise InputError(f"contact_edge: the footprint has {len(footprint)} edges (0 to {len(footprint) - 1}), "
                         f"got {inputs['contact_edge']}")
    return inputs


def predict_push(inputs: dict, seed: int) -> dict:
    """One prediction (module docstring); twist and centre of rotation in the object frame (m/s, rad/s, m)."""
    from discrete_robot.geometry2d import rotation2d
    from discrete_robot.pushing.prediction import ContactMode
    from discrete_robot.pushing.prediction import predict_push as predict

    footprint = _footprint(tuple(inputs["footprint"]), "footprint")
    obj = pushed_object(footprint, inputs["support_friction"], inputs["normal_force"], inputs["pressure"],
                        inputs["rim_points"], seed)
    edge = inputs["contact_edge"]
    a, b = footprint[edge], footprint[(edge + 1) % len(footprint)]
    inward = np.array([a[1] - b[1], b[0] - a[0]]) / np.linalg.norm(b - a)
    direction = rotation2d(inputs["pusher_angle"]) @ inward
    prediction = predict(obj, a + inputs["contact_fraction"] * (b - a), inputs["pusher_speed"] * direction,
                         inputs["contact_friction"], inputs["pusher_radius"])
    vx, vy, omega = (float(v) for v in prediction.twist)
    moving = prediction.mode != ContactMode.SEPARATING and not prediction.is_translation
    return {"mode": prediction.mode.value, "vx": vx, "vy": vy, "omega": omega,
            "cor_x": float(prediction.center_of_rotation[0]), "cor_y": float(prediction.center_of_rotation[1]),
            "rotation": int(np.sign(omega)) if moving else 0}


PREDICT_PUSH_METRICS = metrics("""
    mode      text     sticking, sliding_left, sliding_right or separating
    vx        number   object-frame origin velocity x, m/s
    vy        number   object-frame origin velocity y, m/s
    omega     number   angular velocity, rad/s
    cor_x     number   centre of rotation x (object frame), m; NaN when separating
    cor_y     number   centre of rotation y (object frame), m; NaN when separating
    rotation  integer  +1 counter-clockwise, -1 clockwise, 0 translation or separating
""")

# ---------------------------------------------------------------------------------------------- min-time

MIN_TIME_INPUTS = (
    Input("model", "text", "planar_2link.yaml", "robot model file (config/ name or path)"),
    Input("waypoints", "matrix", None, "joint positions, rad; first = start, last = goal (default: as plan "
          "min-time)"),
    Input("torque_scale", "number", 1.0, "factor on the model's torque limits", low=1e-6, high=1e6),
    Input("grid_points", "integer", 100, "path nodes over the whole path", low=2, high=100_000),
)


def resolve_min_time(inputs: dict) -> dict:
    model = _model(inputs["model"])
    if inputs["waypoints"] is None:
        start = np.zeros(2) if model.dof == 2 else model.initial_positions
        goal = np.array([np.pi / 2, np.pi / 4]) if model.dof == 2 else start + 0.5
        inputs = {**inputs, "waypoints": [start.tolist(), goal.tolist()]}
    if any(len(row) != model.dof for row in inputs["waypoints"]):
        raise InputError(f"waypoints: each needs {model.dof} values ({', '.join(model.joint_names)})")
    return inputs


def min_time(inputs: dict, seed: int) -> dict:
    from discrete_robot.discrete.dynamic_model import DiscreteDynamicModel
    from discrete_robot.model.dynamics import RigidBodySystem
    from discrete_robot.planning.constraints import JointLimits
    from discrete_robot.planning.min_time import plan_min_time
    from discrete_robot.planning.path import WaypointPath

    model = _model(inputs["model"])
    limits = JointLimits.from_model(model, np.asarray(model.effort_limits) * inputs["torque_scale"])
    plan = plan_min_time(DiscreteDynamicModel(RigidBodySystem(model)), WaypointPath(np.array(inputs["waypoints"])),
                         limits, inputs["grid_points"])
    return {"duration_s": float(plan.duration), "steps": int(plan.steps), "solve_s": float(plan.planning_time),
            "max_torque_utilisation": float(np.max(plan.torque_utilisation))}


MIN_TIME_METRICS = metrics("""
    duration_s              number         planned duration, s
    steps                   integer        time steps of the plan
    max_torque_utilisation  number         largest |torque| / limit
    solve_s                 number timing  planning wall time, s
""")

# ---------------------------------------------------------------------------------------------- simulate

SIMULATE_INPUTS = (
    Input("model", "text", "planar_2link.yaml", "robot model file (config/ name or path)"),
    Input("integrator", "choice", "discrete", "integrator: " + ", ".join(kind.value for kind in IntegratorKind),
          choices=tuple(kind.value for kind in IntegratorKind)),
    Input("dt", "number", 0.01, "time step, s", low=1e-9, high=10.0),
    Input("duration", "number", 10.0, "simulated time, s", low=0.0, high=1e7),
    Input("q0", "vector", None, "initial joint positions, rad or m (default: the model's)"),
    Input("qd0", "vector", None, "initial joint velocities, rad/s or m/s (default: zero)"),
)


def resolve_simulate(inputs: dict) -> dict:
    from discrete_robot.validation import bounded_count

    model = _model(inputs["model"])
    inputs = {**inputs, "q0": inputs["q0"] if inputs["q0"] is not None else model.initial_positions.tolist(),
              "qd0": inputs["qd0"] if inputs["qd0"] is not None else [0.0] * model.dof}
    for name in ("q0", "qd0"):
        if len(inputs[name]) != model.dof:
            raise InputError(f"{name}: expected {model.dof} values ({', '.join(model.joint_names)}), got "
                             f"{len(inputs[name])}")
    bounded_count(math.ceil(inputs["duration"] / inputs["dt"] - 1e-9), MAX_STEPS, "duration",
                  "the most steps of a case")
    return inputs


def simulate(inputs: dict, seed: int) -> dict:
    """The unforced run in chunks of held (zero) torques, which the discrete model takes as compiled runs of
    steps; T + V is compared with its start after every chunk (ENERGY_SAMPLES of them)."""
    from discrete_robot import budget
    from discrete_robot.discrete.simulation import FixedStepSimulation
    from discrete_robot.model.dynamics import RigidBodySystem

    model = _model(inputs["model"])
    dt = inputs["dt"]
    steps = max(1, math.ceil(inputs["duration"] / dt - 1e-9))
    simulation = FixedStepSimulation(RigidBodySystem(model), inputs["integrator"], dt, np.array(inputs["q0"]),
                                     np.array(inputs["qd0"]))
    tau = np.zeros(model.dof)
    initial = simulation.energy()
    drift, started, left = 0.0, time.process_time(), steps
    while left:
        budget.check()
        chunk = min(left, math.ceil(steps / ENERGY_SAMPLES))
        simulation.step(chunk, tau)
        left -= chunk
        drift = max(drift, abs(simulation.energy() - initial))
    return {"energy_initial": initial, "energy_drift": drift, "steps": steps, "final_q": simulation.q.tolist(),
            "final_qd": simulation.qd.tolist(), "cpu_s": time.process_time() - started}


SIMULATE_METRICS = metrics("""
    energy_initial  number         T + V at the start, J
    energy_drift    number         largest |T + V - E0| at ENERGY_SAMPLES evenly spaced times of the run, J
    steps           integer        steps taken
    final_q         vector         final joint positions
    final_qd        vector         final joint velocities
    cpu_s           number timing  CPU time of the steps, s
""")

EXPERIMENTS = {e.name: e for e in (
    Experiment("push-to-pose", "the arm pushes the object to a goal pose, planner and world apart",
               PUSH_TO_POSE_INPUTS, PUSH_TO_POSE_METRICS, push_to_pose, resolve_push_to_pose, batch=1),
    Experiment("predict-push", "one minimum-power push prediction at a point of an edge", PREDICT_PUSH_INPUTS,
               PREDICT_PUSH_METRICS, predict_push, resolve_predict_push, batch=10_000),
    Experiment("min-time", "minimum-time plan under scaled torque limits", MIN_TIME_INPUTS, MIN_TIME_METRICS,
               min_time, resolve_min_time, batch=8),
    Experiment("simulate", "unforced simulation: energy drift and final state", SIMULATE_INPUTS, SIMULATE_METRICS,
               simulate, resolve_simulate, batch=1),
)}
