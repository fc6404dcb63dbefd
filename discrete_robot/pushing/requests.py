"""The PredictPush / SimulatePush fields as plain data: parsed into core objects, answers turned back into fields.

The CLI reads them from JSON and the node from the service messages (through
the same dictionaries), so both validate requests the same way. Points may be
[x, y], [x, y, z] or {"x": .., "y": .., "z": ..}; poses [x, y, theta] or
{"x": .., "y": .., "theta": ..}. Unknown field names are rejected (a typo would
otherwise silently use a default).
"""

import functools
from dataclasses import dataclass

import numpy as np

from discrete_robot.errors import InputError
from discrete_robot.pushing.object_model import PushedObject, make_pushed_object
from discrete_robot.pushing.prediction import PushPrediction
from discrete_robot.pushing.simulation import PushTrajectory
from discrete_robot.validation import finite_scalar

OBJECT_FIELDS = ("footprint", "support_points", "support_weights", "normal_force", "support_friction",
                 "contact_friction", "pusher_radius")
PREDICT_FIELDS = (*OBJECT_FIELDS, "contact_point", "pusher_velocity")
SIMULATE_FIELDS = (*OBJECT_FIELDS, "object_pose", "pusher_path", "pusher_speed", "time_step")
OPTIONAL = {"support_points": [], "support_weights": [], "pusher_radius": 0.0, "time_step": 0.0}
#: bounds of a table-top push, checked before anything is computed: beyond them results overflow or the work
#: grows without bound (m, m/s, N, s; friction coefficients are dimensionless)
MAX_COORDINATE = 1e3
#: objects kept built, by their defining fields: a client pushing one object sends the same footprint with every
#: request, and building its support friction (quadrature rules, far-field terms) costs ~7 ms, ten times a
#: prediction
OBJECT_CACHE_SIZE = 32
RANGES = {"normal_force": (0.0, 1e9), "support_friction": (0.0, 1e3), "contact_friction": (0.0, 1e3),
          "pusher_radius": (0.0, 1e3), "pusher_speed": (1e-6, 1e3), "time_step": (0.0, 1e4)}


@dataclass(frozen=True)
class PredictRequest:
    obj: PushedObject
    contact_point: np.ndarray
    pusher_velocity: np.ndarray
    contact_friction: float
    pusher_radius: float


@dataclass(frozen=True)
class SimulateRequest:
    obj: PushedObject
    initial_pose: np.ndarray
    pusher_path: np.ndarray
    pusher_speed: float
    time_step: float
    contact_friction: float
    pusher_radius: float


def _point(value, what: str, keys=("x", "y", "z")) -> np.ndarray:
    if isinstance(value, dict):
        unknown = set(value) - set(keys)
        if unknown:
            raise InputError(f"{what}: unknown keys {sorted(unknown)} (expected {', '.join(keys)})")
        value = [value.get(key, 0.0) for key in keys]
    try:
        array = np.asarray(value, dtype=float).ravel()
    except (TypeError, ValueError) as error:
        raise InputError(f"{what}: expected numbers, got {value!r}") from error
    if array.size not in (2, len(keys)):
        raise InputError(f"{what}: expected {' '.join(keys[:2])}[, {keys[2]}], got {array.size} values")
    for key, value in zip(keys, array, strict=False):
        finite_scalar(value, f"{what}.{key}", -MAX_COORDINATE, MAX_COORDINATE)
    return np.append(array, 0.0) if array.size == 2 else array


def _points(values, what: str) -> np.ndarray:
    if not isinstance(values, list | tuple):
        raise InputError(f"{what}: expected a list of points")
    # the common case at once (every point [x, y] or [x, y, z], finite and in range); anything else point by
    # point, so that the error names the point and coordinate
    try:
        array = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        array = None
    if (array is not None and array.ndim == 2 and array.shape[1] in (2, 3) and np.isfinite(array).all()
            and (np.abs(array) <= MAX_COORDINATE).all()):
        padded = np.zeros((len(array), 3))     # z = 0 where only x, y are given (not np.pad: ~70 µs a call)
        padded[:, :array.shape[1]] = array
        return padded
    return np.array([_point(v, f"{what}[{k}]") for k, v in enumerate(values)]).reshape(-1, 3)


def _number(fields: dict, name: str) -> float:
    """A scalar field, finite and within :data:`RANGES`."""
    return finite_scalar(fields[name], name, *RANGES[name])


def _complete(fields: dict, names: tuple[str, ...]) -> dict:
    if not isinstance(fields, dict):
        raise InputError("the request must be a JSON object with the service's fields")
    unknown = set(fields) - set(names)
    if unknown:
        raise InputError(f"unknown request fields {sorted(unknown)}; expected {', '.join(names)}")
    complete = {name: fields.get(name, OPTIONAL.get(name)) for name in names}
    missing = [name for name, value in complete.items() if value is None]
    if missing:
        raise InputError(f"missing request fields: {', '.join(missing)}")
    return complete


def _object(fields: dict, grid_points: int) -> PushedObject:
    try:
        weights = np.asarray(fields["support_weights"], dtype=float).ravel()
    except (TypeError, ValueError) as error:
        raise InputError(f"support_weights: expected a list of numbers, got {fields['support_weights']!r}") from error
    return _built_object(tuple(_points(fields["footprint"], "footprint")[:, :2].ravel().tolist()),
                         _number(fields, "support_friction"), _number(fields, "normal_force"),
                         tuple(_points(fields["support_points"], "support_points")[:, :2].ravel().tolist()),
                         tuple(weights.tolist()), int(grid_points))


@functools.lru_cache(maxsize=OBJECT_CACHE_SIZE)
def _built_object(footprint: tuple, support_friction: float, normal_force: float, support_points: tuple,
                  support_weights: tuple, grid_points: int) -> PushedObject:
    """make_pushed_object on flattened (x, y) tuples, remembered (OBJECT_CACHE_SIZE); a refusal is not."""
    return make_pushed_object(np.reshape(footprint, (-1, 2)), support_friction, normal_force,
                              support_points=np.reshape(support_points, (-1, 2)),
                              support_weights=np.asarray(support_weights, dtype=float), grid_points=grid_points)


def parse_predict_request(fields: dict, grid_points: int = 0) -> PredictRequest:
    """PredictPush fields -> validated core objects (InputError naming the field otherwise).

    ``grid_points`` > 0 discretises a uniform pressure into about that many grid points.
    """
    fields = _complete(fields, PREDICT_FIELDS)
    return PredictRequest(obj=_object(fields, grid_points), contact_point=_point(fields["contact_point"],
                                                                                   "contact_point")[:2],
                          pusher_velocity=_point(fields["pusher_velocity"], "pusher_velocity")[:2],
                          contact_friction=_number(fields, "contact_friction"),
                          pusher_radius=_number(fields, "pusher_radius"))


def parse_simulate_request(fields: dict, default_time_step: float, grid_points: int = 0) -> SimulateRequest:
    """SimulatePush fields -> validated core objects; a time_step of 0 means ``default_time_step``."""
    fields = _complete(fields, SIMULATE_FIELDS)
    time_step = _number(fields, "time_step")
    return SimulateRequest(obj=_object(fields, grid_points),
                           initial_pose=_point(fields["object_pose"], "object_pose", keys=("x", "y", "theta")),
                           pusher_path=_points(fields["pusher_path"], "pusher_path")[:, :2],
                           pusher_speed=_number(fields, "pusher_speed"),
                           time_step=default_time_step if time_step == 0.0 else time_step,
                           contact_friction=_number(fields, "contact_friction"),
                           pusher_radius=_number(fields, "pusher_radius"))


def _xyz(vector) -> dict:
    x, y = (float(v) for v in vector[:2])
    return {"x": x, "y": y, "z": 0.0}


def prediction_fields(prediction: PushPrediction) -> dict:
    """The PredictPush response fields (success and message aside).

    A separating finger leaves the object at rest: it has no center of rotation (NaN in the core), and the
    message, which carries no NaN, gets (0, 0) with contact_mode "separating" saying why.
    """
    vx, vy, omega = (float(v) for v in prediction.twist)
    cor = prediction.center_of_rotation if np.all(np.isfinite(prediction.center_of_rotation)) else np.zeros(2)
    return {"object_twist": {"linear": {"x": vx, "y": vy, "z": 0.0}, "angular": {"x": 0.0, "y": 0.0, "z": omega}},
            "center_of_rotation": _xyz(cor), "contact_mode": prediction.mode.value,
            "contact_force": _xyz(prediction.contact_force), "power": float(prediction.power)}


def trajectory_fields(trajectory: PushTrajectory) -> dict:
    """The SimulatePush response fields (success and message aside)."""
    return {"times": trajectory.times.tolist(),
            "object_poses": [{"x": float(x), "y": float(y), "theta": float(theta)} for x, y, theta in trajectory.poses],
            "contact_modes": [mode.value for mode in trajectory.modes]}
