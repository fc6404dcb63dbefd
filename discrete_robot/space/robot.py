"""The space robot as the recursive algorithm sees it: a free-floating base and arms of links.

Built from a :class:`~discrete_robot.model.description.RobotModel` (a YAML model file, or a URDF whose root
link is the floating base: ``load_model(path, floating_base=True)`` or a ``floating`` joint from ``world``; the
URDF's fixed links are lumped into their bodies) by :meth:`SpaceRobot.from_model`. Bodies are numbered 0 (the
base) and 1..N (the links, parents before children), so every array indexed by body has the base first. In the
paper's notation (Khoshnood, Someeh, Nami) link b of arm β carries

- ``com`` = R_α(β): joint → link CoM, link frame (m),
- ``offset`` = r_{α−1}(β): parent CoM → this link's joint, parent frame (m); for the first link of an
  arm it is r_0(β), the attachment point relative to the base CoM, base frame,
- ``fixed_rotation``: the parent → joint frame rotation at zero joint angle (columns: the joint
  frame's axes in the parent frame), so C_{α−1}^α(β) = (fixed_rotation · joint_rotation(q))ᵀ.

A rotational joint has 1, 2 or 3 DOF. Its relative angular velocity ω_α(β) (link frame) is
S(q) u with u the joint's rates:

- revolute (1 DOF), rotation rot(a, q): S = a, u = q̇;
- universal (2 DOF), rot(a₀, q₀) rot(a₁, q₁) (second axis in the rotated frame): S = [rot(a₁, q₁)ᵀ a₀, a₁],
  u = q̇;
- spherical (3 DOF): the joint rotation is a unit quaternion in the state and u = ω_α(β) itself, the
  paper's quasi-velocity, so S = I and no Euler angle ever enters the dynamics. Its reported
  positions ``<joint>_0.._2`` are the successive (intrinsic) rotation angles about the joint's three
  axes, the decomposition the URDF export uses (a chain of revolute joints ``<joint>_<i>``), so that a
  JointState drawn through that URDF shows the true link attitude.

A prismatic (sliding) joint has 1 DOF, the displacement d (m) along its axis a (joint frame): the link frame
is the joint frame moved by d a, without turning (its rotation stays ``fixed_rotation``). Its relative
*linear* velocity (link frame) is S u with S = a, u = ḋ; ``offset`` is its joint frame's origin at d = 0, so
the parent CoM → link frame vector is offset + fixed_rotation (d a). Its coordinate is stored with the angles.

A mimic joint (URDF ``<mimic>``: a gripper's second finger) is a link of the tree whose 1-DOF coordinate follows
its leader's, q_f = m q_l + o (:class:`SpaceMimic`). Its coordinate and rate stay in the state (the reported joint
states name it); the dynamics holds them to the leader's: u = S x, with x the independent rates, and the
forward dynamics solves the folded equations Sᵀ M S ẋ = Sᵀ (Q − h) (:mod:`.kernels`), exact for this linear
holonomic constraint. States made by :func:`.state.rest_state` put the followers where their leaders say.
"""

import enum
from dataclasses import dataclass, replace
from functools import cached_property

import numpy as np
from transforms3d.euler import mat2euler

from discrete_robot.errors import InputError, ModelError
from discrete_robot.geometry3d import hat, matrix_to_quaternion, rotation_about


class JointKind(enum.Enum):
    """Joints of the space robot: three rotational by number of DOF, and the sliding one."""

    REVOLUTE = "revolute"
    UNIVERSAL = "universal"
    SPHERICAL = "spherical"
    PRISMATIC = "prismatic"

    @property
    def ndof(self) -> int:
        return 3 if self is JointKind.SPHERICAL else 2 if self is JointKind.UNIVERSAL else 1


@dataclass(frozen=True, eq=False)
class SpaceLink:
    """One link of an arm with the joint that connects it to its parent (SI units, frames as above)."""

    name: str
    parent: int
    joint_name: str
    kind: JointKind
    axes: np.ndarray
    fixed_rotation: np.ndarray
    offset: np.ndarray
    com: np.ndarray
    tip: np.ndarray
    mass: float
    inertia: np.ndarray
    rates: slice
    angles: slice
    quaternion_index: int
    initial: np.ndarray

    @property
    def ndof(self) -> int:
        return self.kind.ndof

    def dof_names(self) -> list[str]:
        """Names of the joint's coordinates: the joint name for 1 DOF, ``<joint>_<i>`` otherwise."""
        if self.ndof == 1:
            return [self.joint_name]
        return [f"{self.joint_name}_{i}" for i in range(self.ndof)]


@dataclass(frozen=True)
class SpaceMimic:
    """Link ``follower``'s joint coordinate (body index) follows link ``leader``'s: q_f = multiplier · q_l + offset
    (rad or m); both joints have one DOF."""

    follower: int
    leader: int
    multiplier: float
    offset: float


@dataclass(frozen=True, eq=False)
class SpaceRobot:
    """A free-floating base with a tree of links; ``arms`` lists, per link attached to the base, the body
    indices of its subtree (parents first), the paper's arms."""

    name: str
    base_name: str
    base_mass: float
    base_inertia: np.ndarray
    base_com: np.ndarray
    links: tuple[SpaceLink, ...]
    arms: tuple[tuple[int, ...], ...]
    mimic: tuple[SpaceMimic, ...] = ()

    # ----------------------------------------------------------------- structure
    @property
    def body_count(self) -> int:
        """Base plus links."""
        return len(self.links) + 1

    @cached_property
    def body_names(self) -> list[str]:
        return [self.base_name] + [link.name for link in self.links]

    def body_index(self, name: str) -> int:
        """Index of the body called ``name`` (0 for the base); InputError naming the bodies otherwise."""
        try:
            return self.body_names.index(name)
        except ValueError:
            raise InputError(f"unknown body '{name}' (bodies: {', '.join(self.body_names)})") from None

    @cached_property
    def masses(self) -> np.ndarray:
        return np.array([self.base_mass] + [link.mass for link in self.links])

    @cached_property
    def inertias(self) -> np.ndarray:
        """(N+1, 3, 3) inertia about each body's CoM in its own frame, kg m²."""
        return np.array([self.base_inertia] + [link.inertia for link in self.links])

    @property
    def total_mass(self) -> float:
        return float(self.masses.sum())

    @cached_property
    def ancestors(self) -> list[list[int]]:
        """For every body, the links on its path from the base (root first, itself last; [] for the base)."""
        paths = [[]]
        for b, link in enumerate(self.links, start=1):
            paths.append(paths[link.parent] + [b])
        return paths

    @cached_property
    def dof(self) -> int:
        """Number of joint DOF (the base's 6 quasi-velocities come on top)."""
        return sum(link.ndof for link in self.links)

    @cached_property
    def angle_count(self) -> int:
        """Number of stored joint coordinates (the 1- and 2-DOF joints: angles, rad, and displacements, m)."""
        return sum(link.ndof for link in self.links if link.kind is not JointKind.SPHERICAL)

    @cached_property
    def spherical_count(self) -> int:
        return sum(link.kind is JointKind.SPHERICAL for link in self.links)

    @cached_property
    def dof_names(self) -> list[str]:
        """Joint coordinate names in rate order; equal to the URDF joint names of ``to_urdf``."""
        return [name for link in self.links for name in link.dof_names()]

    def followed(self, values: np.ndarray, offsets: bool = True) -> np.ndarray:
        """Joint ``values`` (dof,), in rate order, with each mimic follower's set from its leader's: m q_l + o for
        positions, m q̇_l for rates (``offsets`` False)."""
        values = np.array(values, dtype=float)
        for m in self.mimic:
            leader = values[self.links[m.leader - 1].rates.start]
            values[self.links[m.follower - 1].rates.start] = m.multiplier * leader + (m.offset if offsets else 0.0)
        return values

    # ----------------------------------------------------------------- joints
    def joint_rotation(self, link: SpaceLink, angles: np.ndarray, quaternion_matrix: np.ndarray | None) -> np.ndarray:
        """Parent → child rotation A = fixed_rotation · joint rotation (columns: child axes in parent frame)."""
        if link.kind is JointKind.PRISMATIC:
            return link.fixed_rotation
        if link.kind is JointKind.SPHERICAL:
            return link.fixed_rotation @ quaternion_matrix
        rotation = link.fixed_rotation
        for axis, angle in zip(link.axes, angles, strict=True):
            rotation = rotation @ rotation_about(axis, angle)
        return rotation

    def spherical_from_angles(self, link: SpaceLink, angles: np.ndarray) -> np.ndarray:
        """Quaternion [w, x, y, z] of successive rotations by ``angles`` about the joint's three axes."""
        rotation = np.eye(3)
        for axis, angle in zip(link.axes, angles, strict=True):
            rotation = rotation @ rotation_about(axis, angle)
        return matrix_to_quaternion(rotation)

    @staticmethod
    def spherical_to_angles(link: SpaceLink, rotation: np.ndarray) -> np.ndarray:
        """The reported angles of a 3-DOF joint: rotation = Π rot(a_i, θ_i), i = 0, 1, 2 (rad).

        With the orthonormal axis matrix A = [a₀ a₁ a₂], Aᵀ R A is an intrinsic x-y-z rotation
        (transforms3d 'rxyz'); a left-handed A reverses every angle. Only for output: the state
        keeps the quaternion, so the decomposition's gimbal lock at θ₁ = ±π/2 never affects the motion.
        """
        axes = link.axes.T
        handedness = np.sign(np.linalg.det(axes))
        return handedness * np.array(mat2euler(axes.T @ rotation @ axes, "rxyz"))

    # ----------------------------------------------------------------- construction
    @classmethod
    def from_model(cls, model) -> "SpaceRobot":
        """Convert a :class:`RobotModel` with a floating base; ModelError says what does not fit."""
        base = model.base
        if not base.floating:
            raise ModelError(f"robot '{model.name}': the space robot needs a floating base "
                             f"(base '{base.name}' has type fixed)")
        if np.any(np.asarray(model.gravity, dtype=float) != 0.0):
            raise ModelError(f"robot '{model.name}': a free-floating space robot has gravity [0, 0, 0], "
                             f"got {list(model.gravity)}")
        base_inertia = np.asarray(base.inertia, dtype=float)
        _check_body(base.name, base.mass, base_inertia, base.com)
        if np.linalg.eigvalsh(base_inertia).min() <= 0.0:
            raise ModelError(f"base '{base.name}': inertia is singular (eigenvalues "
                             f"{np.linalg.eigvalsh(base_inertia).tolist()}); a free-floating base needs a "
                             f"positive-definite inertia")
        index = {base.name: 0}
        coms = {base.name: np.asarray(base.com, dtype=float)}
        links, rate_start, angle_start, spherical = [], 0, 0, 0
        follows = {m.link.name: m for m in model.mimic}
        for link in _parents_first(model.links + tuple(follows[name].link for name in follows)):
            joint = link.joint
            kind = JointKind(joint.type.value)
            axes = np.asarray(joint.axes, dtype=float).reshape(kind.ndof, 3)
            inertia = np.asarray(link.inertia, dtype=float)
            com = np.asarray(link.com, dtype=float)
            _check_body(link.name, link.mass, inertia, com)
            _check_joint_inertia(link.name, joint.name, kind, axes, link.mass, inertia, com)
            if kind is JointKind.SPHERICAL and not np.allclose(axes @ axes.T, np.eye(3), atol=1e-9):
                raise ModelError(f"link '{link.name}': spherical joint '{joint.name}' needs three orthonormal "
                                 f"axes, got {axes.tolist()}")
            ndof = kind.ndof
            n_angles = 0 if kind is JointKind.SPHERICAL else ndof
            if link.name in follows and ndof != 1:
                raise ModelError(f"link '{link.name}': mimic joint '{joint.name}' must have one DOF")
            links.append(SpaceLink(
                name=link.name, parent=index[link.parent], joint_name=joint.name, kind=kind, axes=axes,
                fixed_rotation=np.asarray(joint.rotation, dtype=float),
                offset=np.asarray(joint.origin, dtype=float) - coms[link.parent],
                com=com, tip=np.asarray(link.tip, dtype=float), mass=float(link.mass), inertia=inertia,
                rates=slice(rate_start, rate_start + ndof), angles=slice(angle_start, angle_start + n_angles),
                quaternion_index=spherical if kind is JointKind.SPHERICAL else -1,
                initial=np.asarray(joint.initial, dtype=float)))
            rate_start += ndof
            angle_start += n_angles
            spherical += kind is JointKind.SPHERICAL
            index[link.name] = len(links)
            coms[link.name] = com
        mimic = tuple(_mimic(follows[link.name], index, links) for link in links if link.name in follows)
        for relation in mimic:      # the follower starts where its leader puts it
            follower = links[relation.follower - 1]
            leader = links[relation.leader - 1]
            links[relation.follower - 1] = replace(
                follower, initial=relation.multiplier * leader.initial + relation.offset)
        arms = _arms(links)
        if not links or not arms:
            raise ModelError(f"robot '{model.name}': has no arms (no link is attached to base '{base.name}')")
        return cls(name=model.name, base_name=base.name, base_mass=float(base.mass), base_inertia=base_inertia,
                   base_com=np.asarray(base.com, dtype=float), links=tuple(links), arms=arms, mimic=mimic)


def _parents_first(links) -> list:
    """The model's links (and its mimic followers, which RobotModel keeps apart) ordered parents before
    children: a follower may carry links of its own."""
    names = {link.name for link in links}
    ordered, placed, waiting = [], set(), list(links)
    while waiting:     # in the given order, each link as soon as its parent is placed
        for link in list(waiting):
            if link.parent not in names or link.parent in placed:
                ordered.append(link)
                placed.add(link.name)
                waiting.remove(link)
    return ordered


def _mimic(relation, index: dict[str, int], links: list[SpaceLink]) -> SpaceMimic:
    """The :class:`SpaceMimic` of a RobotModel mimic relation (its leader named by joint)."""
    leader = next((b for b, link in enumerate(links, start=1) if link.joint_name == relation.leader), None)
    if leader is None or links[leader - 1].ndof != 1:
        raise ModelError(f"mimic joint '{relation.link.joint.name}': its leader '{relation.leader}' is not a "
                         "one-DOF joint of the robot")
    return SpaceMimic(index[relation.link.name], leader, float(relation.multiplier), float(relation.offset))


def _arms(links: list[SpaceLink]) -> tuple[tuple[int, ...], ...]:
    """For each link attached to the base, the body indices of its subtree, parents first."""
    arms = []
    for root, link in enumerate(links, start=1):
        if link.parent != 0:
            continue
        members = [root]
        for b in range(root + 1, len(links) + 1):
            if links[b - 1].parent in members:
                members.append(b)
        arms.append(tuple(members))
    return tuple(arms)


def _check_body(name: str, mass: float, inertia: np.ndarray, com) -> None:
    values = np.concatenate([[mass], np.ravel(inertia), np.ravel(com)])
    if not np.all(np.isfinite(values)):
        raise ModelError(f"body '{name}': mass, inertia and com must be finite, got mass={mass}, "
                         f"inertia={np.asarray(inertia).tolist()}, com={np.asarray(com).tolist()}")
    if mass <= 0.0:
        raise ModelError(f"body '{name}': mass must be > 0, got {mass}")
    if (inertia.shape != (3, 3) or not np.allclose(inertia, inertia.T)
            or np.linalg.eigvalsh(inertia).min() < -1e-9 * np.abs(inertia).max()):
        raise ModelError(f"body '{name}': inertia must be a symmetric positive semi-definite 3x3 matrix, "
                         f"got {inertia.tolist()}")


def _check_joint_inertia(link: str, joint: str, kind: JointKind, axes: np.ndarray, mass: float,
                         inertia: np.ndarray, com: np.ndarray) -> None:
    """The link must have inertia about every direction its joint turns it (else the mass matrix is singular); a
    sliding joint moves it along its axis, which its mass (> 0, :func:`_check_body`) resists.

    Inertia about the joint point: I + m [R]ᵀ[R] (parallel axis). A universal joint's second axis
    sweeps the plane of its first, so 2- and 3-DOF joints need it positive definite; a revolute
    joint needs aᵀ I_joint a > 0.
    """
    if kind is JointKind.PRISMATIC:
        return
    about_joint = inertia + mass * hat(com).T @ hat(com)
    if kind is JointKind.REVOLUTE:
        smallest = float(axes[0] @ about_joint @ axes[0])
    else:
        smallest = float(np.linalg.eigvalsh(about_joint).min())
    if smallest <= 1e-12 * max(1.0, float(np.trace(about_joint))):
        raise ModelError(f"link '{link}': inertia about joint '{joint}' is singular along the joint's rotation "
                         f"axes (smallest moment {smallest:.3g} kg m²); the joint would turn it without effort")


