"""The table-top pushing scene: a rectangular table, an object on it and the clearance of the arm's finger.

Loaded from a YAML file, one per arm (config/table_scene_<model name>.yaml: the table in front of that arm,
and the arm's ready configuration; docs/manipulation.md says how to write one), or, for an arm without one,
derived from the arm's reach (:func:`default_scene`): poses are (x, y, θ) of the object frame in the world
frame (REP 103: z up; m, rad), the table is axis-aligned in the world, and the object is the same
description the push services take (footprint counter-clockwise in the object frame, weight, support and
finger friction, pressure model).
"""

import contextlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from discrete_robot.config_files import load_yaml
from discrete_robot.errors import InputError, ModelError
from discrete_robot.geometry2d import to_world
from discrete_robot.pushing.object_model import PushedObject, make_pushed_object
from discrete_robot.validation import finite_scalar, finite_vector

#: a spatial arm's fingertip axis must point this close to straight down (cosine) in its ready configuration
DOWNWARD = 0.99


@dataclass(frozen=True)
class Table:
    """An axis-aligned table top: x and y extents (m) at height ``height`` (m, world z)."""

    x: tuple[float, float]
    y: tuple[float, float]
    height: float

    def contains(self, points) -> bool:
        """True when every point (k, 2) lies on the table top (edges included)."""
        points = np.atleast_2d(np.asarray(points, dtype=float))
        return bool(np.all((points[:, 0] >= self.x[0]) & (points[:, 0] <= self.x[1])
                           & (points[:, 1] >= self.y[0]) & (points[:, 1] <= self.y[1])))


@dataclass(frozen=True)
class TableScene:
    """The table, the pushed object, its start pose (x, y, θ), the finger-object friction coefficient, the
    gap (m) kept between the fingertip sphere and the table top, and the arm's ready configuration (rad or m:
    the seed of its inverse kinematics and, for a spatial arm, the fingertip orientation held while pushing)."""

    table: Table
    obj: PushedObject
    start_pose: np.ndarray
    contact_friction: float
    finger_clearance: float
    arm_ready_positions: np.ndarray

    def footprint_on_table(self, pose) -> bool:
        """True when the object's footprint at ``pose`` lies wholly on the table."""
        return self.table.contains(to_world(np.asarray(pose, dtype=float), self.obj.footprint))


def _pairs(values, what: str) -> np.ndarray:
    array = np.asarray(values, dtype=float)
    if array.ndim != 1 or array.size < 6 or array.size % 2:
        raise InputError(f"{what}: expected x, y pairs of at least 3 points, got {array.size} values")
    return array.reshape(-1, 2)


def _extent(raw, what: str) -> tuple[float, float]:
    low, high = finite_vector(raw, 2, what)
    if not low < high:
        raise InputError(f"{what}: expected [low, high] with low < high, got {[low, high]}")
    return float(low), float(high)


def scene_from_dict(data: dict, source: str = "<dict>") -> TableScene:
    """Build and validate a scene (InputError naming the field)."""
    try:
        table, obj = data["table"], data["object"]
        table = Table(_extent(table["x"], "table.x"), _extent(table["y"], "table.y"),
                      finite_scalar(table.get("height", 0.0), "table.height"))
        grid = obj.get("pressure_model", "exact")
        if grid not in ("exact", "grid"):
            raise InputError(f"object.pressure_model: expected exact or grid, got {grid!r}")
        pushed = make_pushed_object(_pairs(obj["footprint"], "object.footprint"), obj["support_friction"],
                                    obj["normal_force"], grid_points=obj.get("grid_points", 200) if grid == "grid"
                                    else 0)
        scene = TableScene(table, pushed, finite_vector(obj["start_pose"], 3, "object.start_pose"),
                           finite_scalar(obj["contact_friction"], "object.contact_friction", low=0.0),
                           finite_scalar(data.get("finger_clearance", 0.0), "finger_clearance", low=0.0),
                           np.asarray(data["arm_ready_positions"], dtype=float))
    except KeyError as error:
        raise InputError(f"{source}: missing field {error}") from None
    if not scene.footprint_on_table(scene.start_pose):
        raise InputError(f"{source}: object.start_pose {scene.start_pose.tolist()} puts the object off the table")
    return scene


def scene_path_for(model_name: str) -> Path:
    """The shipped scene of the arm called ``model_name``: config/table_scene_<model_name>.yaml."""
    from discrete_robot.model.description import package_config_path

    return package_config_path(f"table_scene_{model_name}.yaml")


def load_scene(path) -> TableScene:
    """Read a scene file (ModelError when it cannot be read or parsed, InputError for bad values)."""
    path = Path(path)
    data = load_yaml(path, "scene file")     # the one defensive reader of start-up files (config_files)
    if not isinstance(data, dict):
        raise ModelError(f"scene file {path}: expected a mapping with table and object")
    return scene_from_dict(data, str(path))


#: the default scene's object: a 10 cm square of 2 N on a support of friction 0.4, pushed with friction 0.3
DEFAULT_OBJECT = {"footprint": [-0.05, -0.05, 0.05, -0.05, 0.05, 0.05, -0.05, 0.05], "normal_force": 2.0,
                  "support_friction": 0.4, "contact_friction": 0.3, "pressure_model": "exact"}
#: configurations sampled to find the arm's reach and a ready configuration
REACH_SAMPLES = 4000
#: the default table's x extent and half-width as shares of the reach R, in front (+x) of the arm's base
TABLE_X, TABLE_HALF_WIDTH = (0.3, 0.9), 0.35
#: the ready fingertip's distance behind the object's start, as a share of the reach
BEHIND = 0.15


def scene_for(model) -> TableScene:
    """The arm's shipped scene (config/table_scene_<name>.yaml) when there is one, else :func:`default_scene`."""
    path = scene_path_for(model.name)
    return load_scene(path) if path.exists() else default_scene(model)


def scene_data_for(model) -> dict:
    """The mapping of :func:`scene_for`'s scene, as a scene file holds it (to write one with changes)."""
    path = scene_path_for(model.name)
    return load_yaml(path, "scene file") if path.exists() else default_scene_data(model)


def default_scene(model, seed: int = 0) -> TableScene:
    """:func:`default_scene_data`'s scene."""
    return scene_from_dict(default_scene_data(model, seed), f"default scene of '{model.name}'")


def default_scene_data(model, seed: int = 0) -> dict:
    """A table derived from the arm's reach, for an arm without a scene file (as a scene file's mapping).

    R is the largest horizontal distance of the fingertip from the base over REACH_SAMPLES configurations
    drawn uniformly within the joint limits (±π where a revolute joint has none). The table spans
    TABLE_X·R in x in front of the base and ±TABLE_HALF_WIDTH·R in y; the object (DEFAULT_OBJECT) starts at its
    centre. The ready configuration puts the fingertip behind the object (BEHIND·R back in x): a planar arm's
    sample nearest there (its table is its plane); for a spatial arm, which pushes with its tool held pointing
    down, the down-pointing sample nearest there, moved onto that spot at its own height by the tool-point
    inverse kinematics with its orientation kept, and the table top is that height less the fingertip's radius
    and a 5 mm clearance. InputError when the model has no fingertip or no sample points it down.
    """
    from discrete_robot.errors import InfeasibleError
    from discrete_robot.model.inverse_kinematics import ToolPoint, joint_path
    from discrete_robot.model.kinematics import forward_kinematics

    tip = model.fingertip
    if tip is None:
        raise InputError(f"model '{model.name}' has no fingertip (docs/model_format.md): no scene can be derived")
    tool = ToolPoint.on(model, tip.link, tip.offset)
    lower = np.where(np.isfinite(model.lower), model.lower, -np.pi)
    upper = np.where(np.isfinite(model.upper), model.upper, np.pi)
    samples = np.random.default_rng(seed).uniform(lower, upper, (REACH_SAMPLES, model.dof))
    frames = forward_kinematics(model, samples)
    rotations = frames.rotations[:, tool.link]
    points = frames.positions[:, tool.link] + rotations @ tool.offset
    base = forward_kinematics(model, np.zeros(model.dof)).positions[0]
    reach = float(np.max(np.linalg.norm(points[:, :2] - base[:2], axis=1)))
    center = base[:2] + [0.5 * sum(TABLE_X) * reach, 0.0]
    behind = center - [BEHIND * reach, 0.0]
    planar = float(np.ptp(points[:, 2])) < 1e-9
    down = (rotations @ tool.offset)[:, 2] <= -DOWNWARD * np.linalg.norm(tool.offset)
    usable = np.ones(len(samples), bool) if planar else down
    if not usable.any():
        raise InputError(f"model '{model.name}': no sampled configuration points the fingertip down; write a scene "
                         "file (docs/manipulation.md)")
    nearest = int(np.argmin(np.where(usable, np.linalg.norm(points[:, :2] - behind, axis=1), np.inf)))
    ready, clearance, height = samples[nearest], 0.0, float(points[nearest, 2])
    if not planar:
        clearance = 0.005
        with contextlib.suppress(InfeasibleError):       # unreachable exactly: the sample itself is ready
            ready = joint_path(model, tool, [[*behind, height]], ready, rotations[nearest])[0]
        height -= tip.radius + clearance
    return {"table": {"x": [float(base[0] + TABLE_X[0] * reach), float(base[0] + TABLE_X[1] * reach)],
                      "y": [float(base[1] - TABLE_HALF_WIDTH * reach), float(base[1] + TABLE_HALF_WIDTH * reach)],
                      "height": height},
            "arm_ready_positions": np.asarray(ready).tolist(), "finger_clearance": clearance,
            "object": {**DEFAULT_OBJECT, "start_pose": [float(center[0]), float(center[1]), 0.0]}}
