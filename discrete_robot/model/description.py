"""Robot models from YAML model files (docs/model_format.md) into immutable dataclasses.

A :class:`RobotModel` is a tree of rigid links hanging from a base (fixed to the
world or free-floating). Each link carries the joint that connects it to its
parent; a joint has one generalised coordinate per degree of freedom:
revolute (1 rotation), prismatic (1 translation), universal (2 rotations),
spherical (3 rotations), the rotations of a multi-DOF joint being successive
rotations about the current axes (intrinsic Euler angles). Every value is
validated on load; an error names the link and the field.

Units SI (m, kg, kg m², rad, N, N m); frames per REP 103 (``world`` inertial).
"""

import enum
import functools
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from transforms3d.euler import euler2mat

from discrete_robot.errors import ModelError

PACKAGE = "discrete_robot"
REPO_ROOT = Path(__file__).resolve().parents[2]

#: tolerance of the unit-length, symmetry and positive-(semi)definiteness checks, relative
_TOL = 1e-9


class JointType(enum.Enum):
    REVOLUTE = "revolute"
    PRISMATIC = "prismatic"
    UNIVERSAL = "universal"
    SPHERICAL = "spherical"

    @property
    def ndof(self) -> int:
        return {"revolute": 1, "prismatic": 1, "universal": 2, "spherical": 3}[self.value]

    @property
    def rotational(self) -> bool:
        return self is not JointType.PRISMATIC


_DEFAULT_AXES = {
    JointType.UNIVERSAL: np.eye(3)[:2],
    JointType.SPHERICAL: np.eye(3),
}


@dataclass(frozen=True, eq=False)
class Joint:
    """A joint: its DOF axes (unit, joint frame), placement in the parent frame, per-DOF limits and
    dissipation (viscous damping, N m s/rad or N s/m; Coulomb friction, N m or N; URDF ``<dynamics>``).

    ``origin`` (m) and ``rotation`` place the joint frame in the parent link's frame at zero
    joint coordinates; DOF k rotates about (or, prismatic, slides along) ``axes[k]`` expressed in
    the frame left by the rotations of DOFs 0..k-1.
    """

    name: str
    type: JointType
    axes: np.ndarray
    origin: np.ndarray
    rotation: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    velocity: np.ndarray
    effort: np.ndarray
    initial: np.ndarray
    damping: np.ndarray
    friction: np.ndarray

    @property
    def ndof(self) -> int:
        return self.type.ndof

    @property
    def dof_names(self) -> tuple[str, ...]:
        """One name per generalised coordinate: the joint's name, or ``<joint>_<k>`` for multi-DOF joints."""
        if self.ndof == 1:
            return (self.name,)
        return tuple(f"{self.name}_{k}" for k in range(self.ndof))


@dataclass(frozen=True, eq=False)
class Link:
    """A rigid link: mass (kg), CoM (m) and inertia about the CoM (kg m²) in the link frame, tip (m)."""

    name: str
    parent: str
    joint: Joint
    mass: float
    com: np.ndarray
    inertia: np.ndarray
    tip: np.ndarray
    geometry: dict | None
    #: the URDF parent link when it is a fixed frame of ``parent`` (:class:`Frame`), for TF; "" = ``parent``
    frame_parent: str = ""


@dataclass(frozen=True, eq=False)
class Frame:
    """A URDF link fixed to a moving body (its inertia lumped into the body): its pose in ``body``'s frame
    (``origin``, m; ``rotation``) and its URDF parent link ``parent`` (the body or another frame of it)."""

    name: str
    parent: str
    body: str
    origin: np.ndarray
    rotation: np.ndarray


@dataclass(frozen=True, eq=False)
class Mimic:
    """A URDF mimic joint: ``link`` (whose 1-DOF joint is the follower) moves with the generalised coordinate
    ``leader``, q_follower = multiplier · q_leader + offset (rad or m); the follower is not a DOF."""

    link: Link
    leader: str
    multiplier: float
    offset: float


@dataclass(frozen=True, eq=False)
class Base:
    """The root body; a fixed base is the world-fixed frame (its inertial data are then unused)."""

    name: str
    floating: bool
    mass: float
    com: np.ndarray
    inertia: np.ndarray
    geometry: dict | None


@dataclass(frozen=True, eq=False)
class Fingertip:
    """A round fingertip (a sphere of ``radius``, m) at ``offset`` (m) in link ``link``'s frame, for pushing."""

    link: str
    offset: np.ndarray
    radius: float


@dataclass(frozen=True, eq=False)
class RobotModel:
    """A tree of links from a base, parents before children; q stacks the links' DOFs in link order."""

    name: str
    gravity: np.ndarray
    base: Base
    links: tuple[Link, ...]
    fingertip: Fingertip | None = None
    #: URDF links fixed to a body (model/urdf_reader.py), for TF and tool frames
    frames: tuple[Frame, ...] = ()
    #: mimic followers (URDF), moved by their leaders; their links hang from bodies and carry no DOF
    mimic: tuple[Mimic, ...] = ()
    #: the URDF the model was read from, published unchanged as ``robot_description`` (None: a YAML model)
    urdf: str | None = None
    #: ``<ros2_control>``: joint name -> its command interfaces (empty: every DOF takes effort)
    command_interfaces: tuple[tuple[str, tuple[str, ...]], ...] = ()

    @functools.cached_property
    def dof(self) -> int:
        return sum(link.joint.ndof for link in self.links)

    @functools.cached_property
    def joint_names(self) -> tuple[str, ...]:
        """The name of each generalised coordinate (JointState and URDF joint names)."""
        return tuple(name for link in self.links for name in link.joint.dof_names)

    @functools.cached_property
    def parent_index(self) -> tuple[int, ...]:
        """Index of each link's parent link, -1 for the base."""
        index = {link.name: i for i, link in enumerate(self.links)}
        return tuple(index.get(link.parent, -1) for link in self.links)

    @functools.cached_property
    def dof_slices(self) -> tuple[slice, ...]:
        """The slice of q belonging to each link's joint."""
        starts = np.cumsum([0] + [link.joint.ndof for link in self.links])
        return tuple(slice(int(a), int(b)) for a, b in zip(starts[:-1], starts[1:], strict=True))

    def link(self, name: str) -> Link:
        for link in self.links:
            if link.name == name:
                return link
        raise ModelError(f"model '{self.name}': no link named '{name}'")

    def frame_in_body(self, name: str) -> tuple[str, np.ndarray, np.ndarray]:
        """(body, origin, rotation): where link or frame ``name`` sits in the moving body it belongs to (a model
        link, a mimic follower's link or the base); ModelError naming the known frames otherwise."""
        for frame in self.frames:
            if frame.name == name:
                return frame.body, frame.origin, frame.rotation
        bodies = [self.base.name] + [link.name for link in self.links] + [m.link.name for m in self.mimic]
        if name in bodies:
            return name, np.zeros(3), np.eye(3)
        known = bodies + [frame.name for frame in self.frames]
        raise ModelError(f"model '{self.name}': no link or frame named '{name}' (known: {', '.join(known)})")

    def chains_from_base(self) -> list[list[int]]:
        """The arms: for each link attached to the base, its subtree's link indices, parents first.

        For serial arms each list is the chain from the base to the end effector.
        """
        arms = []
        for root, parent in enumerate(self.parent_index):
            if parent != -1:
                continue
            members = {root}
            for i in range(root + 1, len(self.links)):
                if self.parent_index[i] in members:
                    members.add(i)
            arms.append(sorted(members))
        return arms

    def _stacked(self, field: str) -> np.ndarray:
        return np.concatenate([getattr(link.joint, field) for link in self.links]) if self.links else np.zeros(0)

    @functools.cached_property
    def lower(self) -> np.ndarray:
        """Lower position limits, shape (dof,), rad or m (-inf when unlimited)."""
        return self._stacked("lower")

    @functools.cached_property
    def upper(self) -> np.ndarray:
        """Upper position limits, shape (dof,), rad or m (inf when unlimited)."""
        return self._stacked("upper")

    @functools.cached_property
    def velocity_limits(self) -> np.ndarray:
        """Speed limits, shape (dof,), rad/s or m/s (inf when unlimited)."""
        return self._stacked("velocity")

    @functools.cached_property
    def effort_limits(self) -> np.ndarray:
        """Torque/force limits, shape (dof,), N m or N (inf when unlimited)."""
        return self._stacked("effort")

    @functools.cached_property
    def damping(self) -> np.ndarray:
        """Viscous damping coefficients, shape (dof,), N m s/rad or N s/m (0 = none)."""
        return self._stacked("damping")

    @functools.cached_property
    def friction(self) -> np.ndarray:
        """Coulomb friction torques/forces, shape (dof,), N m or N (0 = none)."""
        return self._stacked("friction")

    @functools.cached_property
    def initial_positions(self) -> np.ndarray:
        """The joints' ``initial`` positions, shape (dof,) (zero where not given)."""
        return self._stacked("initial")


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
    from discrete_robot.model import urdf_reader

    if path.suffix.lower() in XACRO_SUFFIXES:
        return urdf_reader.load_xacro(path, xacro_args or {}, floating_base=floating_base)
    from discrete_robot.config_files import parse_yaml, read_text

    text = read_text(path, "model file")    # the one defensive reader of start-up files (config_files)
    if path.suffix.lower() in URDF_SUFFIXES or text.lstrip().startswith("<"):
        return urdf_reader.model_from_urdf(text, source=str(path), floating_base=floating_base,
                                           directory=path.parent)
    return model_from_dict(parse_yaml(text, f"model file {path}"), source=str(path))


def model_from_dict(data, source: str = "<dict>") -> RobotModel:
    """Build and validate a model from the parsed YAML structure (see docs/model_format.md)."""
    if not isinstance(data, dict):
        raise ModelError(f"{source}: a model is a mapping with name, gravity, base and links")
    _known_keys(data, {"name", "gravity", "base", "links", "fingertip"}, f"{source}")
    name = data.get("name")
    if not isinstance(name, str) or not name:
        raise ModelError(f"{source}: 'name' must be a non-empty string")
    where = f"model '{name}'"
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
            raise ModelError(f"{where}: link '{link.name}': joint name '{link.joint.name}' is used twice")
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
    return Fingertip(raw["link"], _vector(raw.get("offset", [0.0, 0.0, 0.0]), 3, f"{here}: offset"), radius)


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
    where = f"{where}: base '{name}'"
    kind = raw.get("type", "fixed")
    if kind not in ("fixed", "floating"):
        raise ModelError(f"{where}: type must be 'fixed' or 'floating', got {kind!r}")
    floating = kind == "floating"
    if floating and ("mass" not in raw or "inertia" not in raw):
        raise ModelError(f"{where}: a floating base needs 'mass' and 'inertia'")
    mass = _mass(raw["mass"], where) if "mass" in raw else 0.0
    inertia = _inertia(raw["inertia"], where, definite=floating) if "inertia" in raw else np.zeros((3, 3))
    com = _vector(raw.get("com", [0.0, 0.0, 0.0]), 3, f"{where}: com")
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
        raise ModelError(f"{where}: link '{name}': duplicate name (already used by {what})")
    here = f"{where}: link '{name}'"
    parent = raw.get("parent")
    if parent == name:
        raise ModelError(f"{here}: parent is the link itself (a cycle)")
    if parent not in tips:
        raise ModelError(f"{here}: parent '{parent}' is not the base or an earlier link "
                         "(links are listed parents first; a later parent would allow a cycle)")
    for field in ("joint", "mass", "inertia"):
        if field not in raw:
            raise ModelError(f"{here}: missing '{field}'")
    mass = _mass(raw["mass"], here)
    com = _vector(raw.get("com", [0.0, 0.0, 0.0]), 3, f"{here}: com")
    inertia = _inertia(raw["inertia"], here, definite=False)
    tip = _vector(raw["tip"], 3, f"{here}: tip") if "tip" in raw else 2.0 * com
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
        raise ModelError(f"{where}: joint '{name}': type must be one of "
                         f"{[t.value for t in JointType]}, got {raw.get('type')!r}") from None
    here = f"{where}: joint '{name}'"
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
    if np.any(norms < _TOL) or np.any(np.abs(norms - 1.0) > 1e-6):
        raise ModelError(f"{here}: axis must be a unit vector, got norm(s) {norms.tolist()}")
    origin = _vector(raw["origin"], 3, f"{here}: origin") if "origin" in raw else np.array(default_origin)
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
        geometry["radius"] = radius
    if "size" in raw:
        size = _vector(raw["size"], 3, f"{where}: geometry.size")
        if np.any(size <= 0.0):
            raise ModelError(f"{where}: geometry.size must be > 0, got {size.tolist()}")
        geometry["size"] = size.tolist()
    return geometry


# ----------------------------------------------------------------------------------------------- values


def _scalar(raw, what: str) -> float:
    if isinstance(raw, bool) or not isinstance(raw, (int, float)):
        raise ModelError(f"{what}: expected a number, got {raw!r}")
    value = float(raw)
    if math.isnan(value):
        raise ModelError(f"{what}: is NaN")
    return value


def _matrix(raw, shape: tuple[int, int], what: str, allow_inf: bool = False) -> np.ndarray:
    try:
        array = np.array(raw, dtype=float)
    except (TypeError, ValueError):
        raise ModelError(f"{what}: expected numbers of shape {shape}, got {raw!r}") from None
    if array.shape != shape and array.size == shape[0] * shape[1] and array.ndim == 1 and shape[0] == 1:
        array = array.reshape(shape)
    if array.shape != shape:
        raise ModelError(f"{what}: expected shape {shape}, got {array.shape}")
    if np.any(np.isnan(array)):
        raise ModelError(f"{what}: contains NaN")
    if not allow_inf and not np.all(np.isfinite(array)):
        raise ModelError(f"{what}: contains infinity")
    return array


def _vector(raw, length: int, what: str) -> np.ndarray:
    return _matrix(raw, (1, length), what)[0]


def _per_dof(raw, ndof: int, what: str, allow_inf: bool) -> np.ndarray:
    values = [raw] if not isinstance(raw, (list, tuple)) else raw
    if len(values) != ndof:
        raise ModelError(f"{what}: expected {ndof} value(s), one per DOF, got {len(values)}")
    for value in values:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ModelError(f"{what}: expected numbers, got {raw!r}")
    return _matrix(values, (1, ndof), what, allow_inf=allow_inf)[0]


def _mass(raw, where: str) -> float:
    mass = _scalar(raw, f"{where}: mass")
    if not (mass > 0.0 and math.isfinite(mass)):
        raise ModelError(f"{where}: mass must be a positive finite number of kg, got {mass}")
    return mass


def _inertia(raw, where: str, definite: bool) -> np.ndarray:
    """The 3x3 inertia about the CoM from [ixx, iyy, izz], [ixx, iyy, izz, ixy, ixz, iyz] or a 3x3 list."""
    what = f"{where}: inertia"
    array = np.asarray(raw, dtype=object)
    if array.shape == (3,):
        inertia = np.diag(_vector(raw, 3, what))
    elif array.shape == (6,):
        ixx, iyy, izz, ixy, ixz, iyz = _vector(raw, 6, what)
        inertia = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
    elif array.shape == (3, 3):
        inertia = _matrix(raw, (3, 3), what)
    else:
        raise ModelError(f"{what}: expected [ixx, iyy, izz], [ixx, iyy, izz, ixy, ixz, iyz] or a 3x3 list, "
                         f"got shape {array.shape}")
    scale = max(float(np.max(np.abs(inertia))), 1e-300)
    if np.any(np.abs(inertia - inertia.T) > _TOL * scale):
        raise ModelError(f"{what}: is not symmetric ({inertia.tolist()})")
    principal = np.linalg.eigvalsh(inertia)
    if definite and not np.all(principal > _TOL * scale):
        raise ModelError(f"{what}: is not positive definite (principal moments {principal.tolist()} kg m²)")
    if np.any(principal < -_TOL * scale):
        raise ModelError(f"{what}: is not positive semi-definite (principal moments {principal.tolist()} kg m²)")
    a, b, c = principal
    if a + b < c - _TOL * scale:
        raise ModelError(f"{what}: principal moments {principal.tolist()} violate the triangle inequality "
                         "(no rigid body has them)")
    return inertia
