"""The robot model's types: :class:`RobotModel`, a tree of :class:`Link` s each carrying its :class:`Joint`, from a
:class:`Base`, with URDF :class:`Frame` s and :class:`Mimic` joints, and the checks of their values that both
readers (YAML, :mod:`.description`; URDF, :mod:`.urdf_reader`) apply.

Units SI (m, kg, kg m², rad, N, N m); frames per REP 103 (``world`` inertial).
"""

import enum
import functools
import math
from dataclasses import dataclass

import numpy as np

from discrete_robot.errors import ModelError
from discrete_robot.validation import MAX_INERTIA, MAX_MASS, plausible, printable

#: tolerance of the unit-length, symmetry and positive-(semi)definiteness checks, relative
TOLERANCE = 1e-9


def _stacked_property(field: str, doc: str) -> functools.cached_property:
    """A cached (dof,) array of every link's joint's per-DOF ``field``, in the order of q."""

    def stacked(self) -> np.ndarray:
        return self._stacked(field)

    stacked.__doc__ = doc
    return functools.cached_property(stacked)


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
        raise ModelError(f"model '{printable(self.name)}': no link named '{printable(name)}'")

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
        raise ModelError(f"model '{printable(self.name)}': no link or frame named '{printable(name)}' (known: "
                         f"{printable(', '.join(known))})")

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

    lower = _stacked_property("lower", "Lower position limits, shape (dof,), rad or m (-inf when unlimited).")
    upper = _stacked_property("upper", "Upper position limits, shape (dof,), rad or m (inf when unlimited).")
    velocity_limits = _stacked_property("velocity", "Speed limits, shape (dof,), rad/s or m/s (inf when unlimited).")
    effort_limits = _stacked_property("effort", "Torque/force limits, shape (dof,), N m or N (inf when unlimited).")
    damping = _stacked_property("damping", "Viscous damping coefficients, shape (dof,), N m s/rad or N s/m (0 = none).")
    friction = _stacked_property("friction", "Coulomb friction torques/forces, shape (dof,), N m or N (0 = none).")
    initial_positions = _stacked_property("initial", "The joints' ``initial`` positions, shape (dof,) (zero where not "
                                          "given).")


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
    return plausible(mass, MAX_MASS, f"{where}: mass", "kg")


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
    plausible(inertia, MAX_INERTIA, what, "kg m²")
    scale = max(float(np.max(np.abs(inertia))), 1e-300)
    if np.any(np.abs(inertia - inertia.T) > TOLERANCE * scale):
        raise ModelError(f"{what}: is not symmetric ({inertia.tolist()})")
    principal = np.linalg.eigvalsh(inertia)
    if definite and not np.all(principal > TOLERANCE * scale):
        raise ModelError(f"{what}: is not positive definite (principal moments {principal.tolist()} kg m²)")
    if np.any(principal < -TOLERANCE * scale):
        raise ModelError(f"{what}: is not positive semi-definite (principal moments {principal.tolist()} kg m²)")
    a, b, c = principal
    if a + b < c - TOLERANCE * scale:
        raise ModelError(f"{what}: principal moments {principal.tolist()} violate the triangle inequality "
                         "(no rigid body has them)")
    return inertia
