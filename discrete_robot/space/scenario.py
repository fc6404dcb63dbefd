"""A simulation run as the CLI and the figures see it: model file, loads, output times, results.

The default scenario is the paper's (section 4): the robot starts from rest, constant forces
[1, −1, 1] N and [2, −2, −2] N act at the tips of the last links of arms 1 and 2, in those links' frames.
"""

import logging
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from discrete_robot.errors import InputError
from discrete_robot.geometry3d import quaternion_multiply
from discrete_robot.model.description import load_model, package_config_path
from discrete_robot.plotting import new_figure, save_figure
from discrete_robot.space.loads import ExternalLoad, LoadFrame, paper_loads, validate_loads
from discrete_robot.space.robot import SpaceRobot
from discrete_robot.space.simulation import Sample, simulate
from discrete_robot.space.state import rest_state

LOGGER = logging.getLogger(__name__)

DEFAULT_MODEL = "space_robot_dual_arm.yaml"


def load_space_robot(path=None) -> SpaceRobot:
    """The space robot of a model file (default: the shipped Table 1 dual-arm robot)."""
    return SpaceRobot.from_model(load_model(package_config_path(DEFAULT_MODEL) if path is None else Path(path)))


def parse_force(text: str, robot: SpaceRobot) -> ExternalLoad:
    """``BODY:X,Y,Z:FX,FY,FZ:FRAME`` → a constant force on BODY at point (X, Y, Z) of BODY's frame (m),
    components (N) in FRAME = ``body`` or ``world``."""
    parts = text.split(":")
    if len(parts) != 4:
        raise InputError(f"--force {text!r}: expected BODY:X,Y,Z:FX,FY,FZ:FRAME (4 fields separated by ':')")
    body, point, force, frame = parts
    robot.body_index(body)
    try:
        frame = LoadFrame(frame.strip().lower())
    except ValueError:
        raise InputError(f"--force {text!r}: FRAME must be 'body' or 'world', got {frame!r}") from None
    return ExternalLoad(body=body, point=_triple(point, "point", text), force=_triple(force, "force", text),
                        frame=frame)


def _triple(text: str, what: str, whole: str) -> np.ndarray:
    try:
        values = np.array([float(v) for v in text.split(",")])
    except ValueError:
        raise InputError(f"--force {whole!r}: {what} must be three numbers separated by ',', got {text!r}") from None
    if values.shape != (3,) or not np.all(np.isfinite(values)):
        raise InputError(f"--force {whole!r}: {what} must be three finite numbers, got {text!r}")
    return values


def parse_times(text: str) -> np.ndarray:
    """``t1,t2,...`` (s) → array; InputError on anything that is not a finite number."""
    try:
        times = np.array([float(v) for v in text.split(",") if v.strip()])
    except ValueError:
        raise InputError(f"--times {text!r}: expected numbers separated by ','") from None
    if times.size == 0 or not np.all(np.isfinite(times)):
        raise InputError(f"--times {text!r}: expected finite numbers separated by ','")
    return times


@dataclass(frozen=True, eq=False)
class ScenarioResult:
    robot: SpaceRobot
    loads: tuple[ExternalLoad, ...]
    samples: list[Sample]


def run_scenario(robot: SpaceRobot, duration: float, dt: float, times, loads=None) -> ScenarioResult:
    """Simulate from rest (joints at the model's ``initial`` values) under ``loads`` (None: the paper's)."""
    loads = paper_loads(robot) if loads is None else validate_loads(robot, loads)
    samples = simulate(robot, rest_state(robot), duration, dt, times, loads)
    return ScenarioResult(robot, tuple(loads), samples)


def sample_record(robot: SpaceRobot, sample: Sample) -> dict:
    """The CLI's output at one time: t, bodies {name: {position, orientation}}, joints, momentum, energy."""
    return {
        "t": sample.time,
        "bodies": {name: {"position": sample.body_positions[b], "orientation": sample.body_orientations[b]}
                   for b, name in enumerate(robot.body_names)},
        "joints": dict(zip(robot.dof_names, sample.joint_positions.tolist(), strict=True)),
        "momentum": {"linear": sample.momentum.linear, "angular": sample.momentum.angular},
        "kinetic_energy": sample.momentum.kinetic_energy,
    }


def load_record(load: ExternalLoad) -> dict:
    return {"body": load.body, "point": load.point, "force": load.force, "frame": load.frame.value}


def attitude_change(orientations: np.ndarray) -> np.ndarray:
    """Quaternions [w, x, y, z] of R(t) R(0)ᵀ, each body's attitude change since the start (world frame).

    Plotted instead of angles: any three-angle curve has a singularity or a jump somewhere (Euler angles
    at gimbal lock, a rotation vector at a full turn), the quaternion has neither. Of ±q the sign nearest
    the previous sample is kept, so the curves are continuous.
    """
    start = orientations[0] * np.array([1.0, -1.0, -1.0, -1.0])
    changes = [np.array([1.0, 0.0, 0.0, 0.0])]
    for quaternion in orientations[1:]:
        change = quaternion_multiply(quaternion, start)
        changes.append(change if change @ changes[-1] >= 0.0 else -change)
    return np.array(changes)


def plot_scenario(result: ScenarioResult, output_dir: Path) -> list[Path]:
    """The paper's figures 3–11: CoM displacement and attitude change of every body over time."""
    robot, samples = result.robot, result.samples
    t = np.array([s.time for s in samples])
    positions = np.array([s.body_positions for s in samples])
    orientations = np.array([s.body_orientations for s in samples])
    paths = []
    count = robot.body_count
    for name, ylabel, values in (
            ("space_com_displacement", "CoM displacement [m]", lambda b: positions[:, b] - positions[0, b]),
            ("space_attitude", "q(t) q(0)⁻¹ vector part", lambda b: attitude_change(orientations[:, b])[:, 1:])):
        fig, axes = new_figure(count, 1, sharex=True, figsize=(7.0, 2.2 * count))
        for b, axis in enumerate(np.atleast_1d(axes)):
            curves = values(b)
            for k, component in enumerate("xyz"):
                axis.plot(t, curves[:, k], label=component)
            axis.set(ylabel=ylabel, title=robot.body_names[b])
            axis.grid(True, alpha=0.3)
            axis.legend(fontsize=8, loc="upper left")
        np.atleast_1d(axes)[-1].set(xlabel="t [s]")
        paths.append(save_figure(fig, output_dir, name))
    LOGGER.info("figures written to %s", output_dir)
    return paths
