"""Robot models from YAML model files (docs/model_format.md) into immutable dataclasses.

A :class:`RobotModel` is a tree of rigid links hanging from a base (fixed to the
world or free-floating). Each link carries the joint that connects it to its
parent; a joint has one generalised coordinate per degree of freedom:
revolute (1 rotation), prismatic (1 translation), universal (2 rotations),
spherical (3 rotations), the rotations of a multi-DOF joint being successive
rotations about the current axes (intrinsic Euler angles). Every value is
validated on load; an error names the link and the field. The types live in :mod:`.robot_model` (which the URDF
reader shares) and are importable from here too.

Units SI (m, kg, kg m², rad, N, N m); frames per REP 103 (``world`` inertial).
"""

import math
from pathlib import Path

import numpy as np
from transforms3d.euler import euler2mat

from discrete_robot.errors import ModelError
from discrete_robot.model.robot_model import (
    TOLERANCE,
    Base,
    Fingertip,
    Joint,
    JointType,
    Link,
    RobotModel,
    _inertia,
    _mass,
    _matrix,
    _per_dof,
    _scalar,
    _vector,
)
from discrete_robot.validation import MAX_LENGTH, model_size, plausible, printable

__all__ = ["Base", "Fingertip", "Joint", "JointType", "Link", "RobotModel", "load_model", "model_from_dict",
           "package_config_path"]

PACKAGE = "discrete_robot"
REPO_ROOT = Path(__file__).resolve().parents[2]

_DEFAULT_AXES = {
    JointType.UNIVERSAL: np.eye(3)[:2],
    JointType.SPHERICAL: np.eye(3),
}


# ----------------------------------------------------------------------------------------------- loading


def package_config_path(filename: str) -> Path:
    """``config/<filename>`` of the installed package (ament index), else of this source tree."""
    try:
        from ament_index_python.packages import PackageNotFoundError, get_package_share_directory
    except ImportError:
        return REPO_ROOT / "config" / filename
    try:
        installed = Path(get_package_share_directory(PACKAGE)) / "config" / filename
    except (PackageNotFoundError, ValueError, OSError):  # OSError: AMENT_PREFIX_PATH unset (plain shell)
        return REPO_ROOT / "config" / filename
    return installed if installed.exists() else REPO_ROOT / "config" / filename


#: model-file suffixes of the URDF readers (``.urdf.xacro`` ends in ``.xacro``); anything else is YAML
URDF_SUFFIXES = (".urdf",)
XACRO_SUFFIXES = (".xacro",)


def load_model(path, xacro_args: dict | None = None, floating_base: bool = False) -> RobotModel:
    """Read and validate a model file, chosen by suffix: xacro (expanded with ``xacro_args``), URDF (``.urdf``,
    or any other file whose text is XML), else YAML (docs/model_format.md); ``floating_base`` makes a URDF's
    root link a free-floating base. ModelError on a missing file, bad YAML/XML or invalid values, naming the
    element and the field."""
    path = Path(path)
    import discrete_robot.model.urdf_reader as urdf_reader

    if path.suffix.lower() in XACRO_SUFFIXES:
        return urdf_reader.load_xacro(path, xacro_args or {}, floating_base=floating_base)
    from discrete_robot.config_files import parse_yaml, read_text

    text = read_text(path, "model file")    # the one defensive reader of start-up files (config_files)
    if path.suffix.lower() in URDF_SUFFIXES or text.lstrip().startswith("<"):
        return urdf_reader.model_from_urdf(text, source=str(path), floating_base=floating_base,
                                           directory=path.parent)
    data = parse_yaml(text, f"model file {path}")
    if isinstance(data, dict) and isinstance(data.get("links"), list):   # counted before anything is built
        model_size(len(data["links"]), sum(_ndof(raw) for raw in data["links"]), f"model file {path}")
    return model_from_dict(data, source=str(path))


def _ndof(raw) -> int:
    """The DOF a YAML link's joint declares (1 when it declares none a model knows: the build refuses it)."""
    joint = raw.get("joint") if isinstance(raw, dict) else None
    kind = joint.get("type") if isinstance(joint, dict) else None
    return next((member.ndof for member in JointType if member.value == kind), 1)


def _length(raw, length: int, what: str) -> np.ndarray:
    """A finite vector of lengths (m) within the plausibility bound :data:`MAX_LENGTH`."""
    return plausible(_vector(raw, length, what), MAX_LENGTH, what, "m")


def model_from_dict(data, source: str = "<dict>") -> RobotModel:
    """Build and validate a model from the parsed YAML structure (see docs/model_format.md)."""
    if not isinstance(data, dict):
        raise ModelError(f"{source}: a model is a mapping with name, gravity, base and links")
    _known_keys(data, {"name", "gravity", "base", "links", "fingertip"}, f"{source}")
    name = data.get("name")
    if not isinstance(name, str) or not name:
        raise ModelError(f"{source}: 'name' must be a non-empty string")
    where = f"model '{printable(name)}'"
    gravity = _vector(data.get("gravity", [0.0, 0.0, -9.81]), 3, f"{where}: gravity")
    base = _base(data.get("base"), where)
    raw_links = data.get("links")
    if not isinstance(raw_links, list) or not raw_links:
        raise ModelError(f"{where}: 'links' must be a non-empty list")
    links: list[Link] = []
    tips = {base.name: np.zeros(3)}
    seen_joints: set[str] = set()
    for number, raw in enumerate(raw_links):
        link = _link(raw, number, where, tips, base.name)
        if link.joint.name in seen_joints:
            raise ModelError(f"{where}: link '{printable(link.name)}': joint name '{printable(link.joint.name)}' is "
                             "used twice")
        seen_joints.add(link.joint.name)
        tips[link.name] = link.tip
        links.append(link)
    fingertip = _fingertip(data["fingertip"], where, {link.name for link in links}) if "fingertip" in data else None
    model = RobotModel(name=name, gravity=gravity, base=base, links=tuple(links), fingertip=fingertip)
    names = model.joint_names
    clash = sorted({n for n in names if names.count(n) > 1})
    if clash:
        raise ModelError(f"{where}: generalised coordinate names {clash} occur more than once")
    return model


def _fingertip(raw, where: str, link_names: set[str]) -> Fingertip:
    here = f"{where}: fingertip"
    if not isinstance(raw, dict):
        raise ModelError(f"{here} must be a mapping with link, offset and radius")
    _known_keys(raw, {"link", "offset", "radius"}, here)
    if raw.get("link") not in link_names:
        raise ModelError(f"{here}: link must be one of the model's links {sorted(link_names)}, got {raw.get('link')!r}")
    radius = _scalar(raw.get("radius"), f"{here}: radius")
    if not radius > 0.0:
        raise ModelError(f"{here}: radius must be > 0 m, got {radius}")
    plausible(radius, MAX_LENGTH, f"{here}: radius", "m")
    return Fingertip(raw["link"], _length(raw.get("offset", [0.0, 0.0, 0.0]), 3, f"{here}: offset"), radius)


def _known_keys(raw: dict, allowed: set[str], where: str) -> None:
    unknown = sorted(set(raw) - allowed)
    if unknown:
        raise ModelError(f"{where}: unknown field(s) {unknown} (allowed: {sorted(allowed)})")


def _base(raw, where: str) -> Base:
    if not isinstance(raw, dict):
        raise ModelError(f"{where}: 'base' must be a mapping with name and type")
    _known_keys(raw, {"name", "type", "mass", "inertia", "com", "geometry"}, f"{where}: base")
    name = raw.get("name")
    if not isinstance(name, str) or not name:
        raise ModelError(f"{where}: base 'name' must be a non-empty string")
    where = f"{where}: base '{printable(name)}'"
    kind = raw.get("type", "fixed")
    if kind not in ("fixed", "floating"):
        raise ModelError(f"{where}: type must be 'fixed' or 'floating', got {kind!r}")
    floating = kind == "floating"
    if floating and ("mass" not in raw or "inertia" not in raw):
        raise ModelError(f"{where}: a floating base needs 'mass' and 'inertia'")
    mass = _mass(raw["mass"], where) if "mass" in raw else 0.0
    inertia = _inertia(raw["inertia"], where, definite=floating) if "inertia" in raw else np.zeros((3, 3))
    com = _length(raw.get("com", [0.0, 0.0, 0.0]), 3, f"{where}: com")
    return Base(name, floating, mass, com, inertia, _geometry(raw.get("geometry"), where))


def _link(raw, number: int, where: str, tips: dict, base_name: str) -> Link:
    if not isinstance(raw, dict):
        raise ModelError(f"{where}: links[{number}] must be a mapping")
    _known_keys(raw, {"name", "parent", "joint", "mass", "com", "inertia", "tip", "geometry"},
                f"{where}: links[{number}]")
    name = raw.get("name")
    if not isinstance(name, str) or not name:
        raise ModelError(f"{where}: links[{number}]: 'name' must be a non-empty string")
    if name in tips:
        what = "the base" if name == base_name else "an earlier link"
        raise ModelError(f"{where}: link '{printable(name)}': duplicate name (already used by {what})")
    here = f"{where}: link '{printable(name)}'"
    parent = raw.get("parent")
    if parent == name:
        raise ModelError(f"{here}: parent is the link itself (a cycle)")
    if parent not in tips:
        raise ModelError(f"{here}: parent '{printable(parent)}' is not the base or an earlier link "
                         "(links are listed parents first; a later parent would allow a cycle)")
    for field in ("joint", "mass", "inertia"):
        if field not in raw:
            raise ModelError(f"{here}: missing '{field}'")
    mass = _mass(raw["mass"], here)
    com = _length(raw.get("com", [0.0, 0.0, 0.0]), 3, f"{here}: com")
    inertia = _inertia(raw["inertia"], here, definite=False)
    tip = _length(raw["tip"], 3, f"{here}: tip") if "tip" in raw else 2.0 * com
    joint = _joint(raw["joint"], here, default_origin=tips[parent])
    return Link(name, parent, joint, mass, com, inertia, tip, _geometry(raw.get("geometry"), here))


def _joint(raw, where: str, default_origin: np.ndarray) -> Joint:
    if not isinstance(raw, dict):
        raise ModelError(f"{where}: 'joint' must be a mapping")
    _known_keys(raw, {"name", "type", "axis", "axes", "origin", "rpy", "limits", "dynamics", "initial"},
                f"{where}: joint")
    name = raw.get("name")
    if not isinstance(name, str) or not name:
        raise ModelError(f"{where}: joint 'name' must be a non-empty string")
    try:
        kind = JointType(raw.get("type"))
    except ValueError:
        raise ModelError(f"{where}: joint '{printable(name)}': type must be one of "
                         f"{[t.value for t in JointType]}, got {raw.get('type')!r}") from None
    here = f"{where}: joint '{printable(name)}'"
    ndof = kind.ndof
    if ndof == 1:
        if "axes" in raw:
            raise ModelError(f"{here}: a {kind.value} joint takes 'axis', not 'axes'")
        axes = _matrix(raw.get("axis", [0.0, 0.0, 1.0]), (1, 3), f"{here}: axis")
    else:
        if "axis" in raw:
            raise ModelError(f"{here}: a {kind.value} joint takes 'axes' (one per DOF), not 'axis'")
        axes = _matrix(raw.get("axes", _DEFAULT_AXES[kind]), (ndof, 3), f"{here}: axes")
    norms = np.linalg.norm(axes, axis=1)
    if np.any(norms < TOLERANCE) or np.any(np.abs(norms - 1.0) > 1e-6):
        raise ModelError(f"{here}: axis must be a unit vector, got norm(s) {norms.tolist()}")
    origin = _length(raw["origin"], 3, f"{here}: origin") if "origin" in raw else np.array(default_origin)
    rpy = _vector(raw.get("rpy", [0.0, 0.0, 0.0]), 3, f"{here}: rpy")
    rotation = euler2mat(*rpy, axes="sxyz")  # URDF convention: fixed-axis roll, pitch, yaw
    limits = raw.get("limits", {}) or {}
    if not isinstance(limits, dict):
        raise ModelError(f"{here}: 'limits' must be a mapping")
    _known_keys(limits, {"lower", "upper", "velocity", "effort"}, f"{here}: limits")
    unlimited = [math.inf] * ndof
    lower = _per_dof(limits.get("lower", [-math.inf] * ndof), ndof, f"{here}: limits.lower", allow_inf=True)
    upper = _per_dof(limits.get("upper", unlimited), ndof, f"{here}: limits.upper", allow_inf=True)
    velocity = _per_dof(limits.get("velocity", unlimited), ndof, f"{here}: limits.velocity", allow_inf=True)
    effort = _per_dof(limits.get("effort", unlimited), ndof, f"{here}: limits.effort", allow_inf=True)
    if np.any(lower > upper):
        raise ModelError(f"{here}: limits.lower {lower.tolist()} exceeds limits.upper {upper.tolist()}")
    for field, values in (("velocity", velocity), ("effort", effort)):
        if np.any(values <= 0.0):
            raise ModelError(f"{here}: limits.{field} must be > 0, got {values.tolist()}")
    # default: the zero position, moved inside the limits when they exclude it
    default_initial = np.clip(np.zeros(ndof), lower, upper)
    initial = _per_dof(raw.get("initial", default_initial.tolist()), ndof, f"{here}: initial", allow_inf=False)
    if np.any(initial < lower) or np.any(initial > upper):
        raise ModelError(f"{here}: initial {initial.tolist()} is outside the limits "
                         f"[{lower.tolist()}, {upper.tolist()}]")
    damping, friction = _dynamics(raw.get("dynamics", {}) or {}, ndof, here)
    return Joint(name, kind, axes / norms[:, None], origin, rotation, lower, upper, velocity, effort, initial,
                 damping, friction)


def _dynamics(raw, ndof: int, here: str) -> tuple[np.ndarray, np.ndarray]:
    """(damping, friction) per DOF from a joint's ``dynamics`` mapping (URDF ``<dynamics>``), default 0."""
    if not isinstance(raw, dict):
        raise ModelError(f"{here}: 'dynamics' must be a mapping")
    _known_keys(raw, {"damping", "friction"}, f"{here}: dynamics")
    values = []
    for field in ("damping", "friction"):
        value = _per_dof(raw.get(field, [0.0] * ndof), ndof, f"{here}: dynamics.{field}", allow_inf=False)
        if np.any(value < 0.0):
            raise ModelError(f"{here}: dynamics.{field} must be >= 0, got {value.tolist()}")
        values.append(value)
    return values[0], values[1]


def _geometry(raw, where: str) -> dict | None:
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise ModelError(f"{where}: geometry must be a mapping with a 'type'")
    kind = raw.get("type")
    required = {"capsule": {"radius"}, "cylinder": {"radius"}, "box": {"size"}, "sphere": {"radius"}}
    if kind not in required:
        raise ModelError(f"{where}: geometry.type must be one of {sorted(required)}, got {kind!r}")
    _known_keys(raw, {"type"} | required[kind], f"{where}: geometry")
    missing = required[kind] - set(raw)
    if missing:
        raise ModelError(f"{where}: geometry of type {kind} needs {sorted(missing)}")
    geometry = {"type": kind}
    if "radius" in raw:
        radius = _scalar(raw["radius"], f"{where}: geometry.radius")
        if radius <= 0.0:
            raise ModelError(f"{where}: geometry.radius must be > 0, got {radius}")
        geometry["radius"] = plausible(radius, MAX_LENGTH, f"{where}: geometry.radius", "m")
    if "size" in raw:
        size = _length(raw["size"], 3, f"{where}: geometry.size")
        if np.any(size <= 0.0):
            raise ModelError(f"{where}: geometry.size must be > 0, got {size.tolist()}")
        geometry["size"] = size.tolist()
    return geometry
