"""Robot models from URDF and xacro into the same :class:`RobotModel` as the YAML files (docs/model_format.md).

The URDF tree becomes the model's bodies:

- ``revolute``, ``continuous`` (unlimited) and ``prismatic`` joints are the DOFs, in the order a depth-first walk
  from the root meets them (children in the file's joint order; Pinocchio's order too), parents before children;
- a ``fixed`` joint makes its child part of its parent's body: the child's inertia is lumped into the body
  (parallel-axis theorem, :func:`lump`), and the child stays a frame (:class:`Frame`) for TF and tool frames;
  a movable joint below it is re-expressed in the body's frame;
- a ``mimic`` joint's child is a follower (:class:`Mimic`), not a DOF: q_f = multiplier · q_leader + offset, folded
  into the dynamics exactly by :class:`discrete_robot.model.dynamics.RigidBodySystem`;
- a ``floating`` joint from ``world`` (or ``floating_base=True``) makes the root a free-floating base; ``floating``
  and ``planar`` joints anywhere else are refused.

``<inertial>``: the CoM at ``origin xyz``, the inertia given in the frame rotated by ``origin rpy``, turned into
the link frame (R I Rᵀ). ``<limit>`` and ``<dynamics>`` as the YAML joint's ``limits`` and ``dynamics``; an effort
or velocity of 0 (URDF's "not given") means unlimited. ``<ros2_control>``: each ``<joint>``'s command interfaces.
Visual and collision geometry are not the dynamics' business: the URDF text itself is kept (``model.urdf``) and
published unchanged; a mesh that cannot be resolved is a warning (:class:`MeshWarning`).

Every error is one line naming the element and the field (``joint 'elbow': <limit effort> must be >= 0, got -1``).

Parsed with the standard library's ElementTree rather than urdf_parser_py or yourdfpy: both drop what they do not
model without a word and neither names the element of a bad value; yourdfpy also pulls trimesh for meshes that
the dynamics never read.
"""

import math
import warnings
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from transforms3d.euler import euler2mat

from discrete_robot.config_files import regular_file
from discrete_robot.errors import ModelError
from discrete_robot.model.robot_model import (
    Base,
    Frame,
    Joint,
    JointType,
    Link,
    Mimic,
    RobotModel,
    _inertia,
)
from discrete_robot.validation import (
    MAX_LENGTH,
    MAX_MASS,
    MAX_MIMIC_MULTIPLIER,
    model_size,
    plausible,
    printable,
)

WORLD = "world"
#: m/s², world frame, unless the caller says otherwise (a floating base defaults to none)
GRAVITY = (0.0, 0.0, -9.81)
_MOVABLE = {"revolute": JointType.REVOLUTE, "continuous": JointType.REVOLUTE, "prismatic": JointType.PRISMATIC}
_REFUSED = ("floating", "planar")


class MeshWarning(UserWarning):
    """A ``<mesh filename>`` that cannot be resolved (the dynamics do not need it; RViz will not show it)."""


# ----------------------------------------------------------------------------------------------- entry points


def expand_xacro(path, args: dict | None = None) -> str:
    """The URDF text of a xacro file, its ``xacro:arg``s set from ``args`` (name -> value), expanded in a bounded
    child process (:mod:`.xacro_sandbox`: CPU time, memory and wall clock limited, every file read checked)."""
    from discrete_robot.model.xacro_sandbox import expand

    regular_file(path, "model file")     # refused here, in the caller's words, before a child is started
    return expand(path, args)


def load_xacro(path, args: dict | None = None, floating_base: bool = False, gravity=None) -> RobotModel:
    """A model from a xacro file expanded with ``args`` (see :func:`expand_xacro`, :func:`model_from_urdf`)."""
    path = Path(path)
    return model_from_urdf(expand_xacro(path, args), str(path), floating_base=floating_base, gravity=gravity,
                           directory=path.parent)


def robot_element(text: str, source: str) -> ET.Element:
    """The ``<robot>`` root of URDF or SRDF ``text``; ModelError naming ``source`` for invalid XML or another root."""
    try:
        root = ET.fromstring(text)
    except ET.ParseError as error:
        raise ModelError(f"{source}: invalid XML ({error})") from None
    if root.tag != "robot":
        raise ModelError(f"{source}: the root element is <{root.tag}>, not <robot>")
    return root


def model_from_urdf(text: str, source: str = "robot_description", floating_base: bool = False, gravity=None,
                    directory: Path | None = None) -> RobotModel:
    """Build and validate a model from URDF text (a file's, or the ``robot_description`` parameter's).

    ``gravity`` (m/s², world): default (0, 0, −9.81), or zero for a floating base; ``directory``: where relative
    mesh paths and ``package://`` packages are looked for (warnings only).
    """
    root = robot_element(text, source)
    name = root.get("name")
    if not name:
        raise ModelError(f"{source}: <robot name> is missing")
    model_size(len(root.findall("link")), sum(1 for joint in root.findall("joint") if joint.get("type") in _MOVABLE
                                              and joint.find("mimic") is None), source)
    tree = _Tree.parse(root, source)
    model = tree.build(name, text, floating_base, gravity)
    _check_meshes(root, source, directory)
    return model


# ----------------------------------------------------------------------------------------------- values


def _numbers(element: ET.Element, attribute: str, count: int, where: str, default=None) -> np.ndarray:
    """``count`` finite numbers from ``element``'s ``attribute`` (``default`` when absent)."""
    raw = element.get(attribute)
    if raw is None:
        if default is None:
            raise ModelError(f"{where}: <{element.tag} {attribute}> is missing")
        return np.array(default, dtype=float)
    expected = f"{where}: <{element.tag} {attribute}> expected {count} number(s), got '{printable(raw)}'"
    try:
        values = np.array([float(v) for v in raw.split()], dtype=float)
    except ValueError:
        raise ModelError(expected) from None
    if values.shape != (count,):
        raise ModelError(expected)
    if not np.all(np.isfinite(values)):
        raise ModelError(f"{where}: <{element.tag} {attribute}> must be finite, got '{printable(raw)}'")
    return values


def _number(element: ET.Element, attribute: str, where: str, default: float | None = None,
            low: float = -math.inf) -> float:
    value = float(_numbers(element, attribute, 1, where, None if default is None else [default])[0])
    if value < low:
        raise ModelError(f"{where}: <{element.tag} {attribute}> must be >= {low:g}, got {value:g}")
    return value


def _origin(element: ET.Element, where: str) -> tuple[np.ndarray, np.ndarray]:
    """(xyz, R) of ``element``'s ``<origin>`` (identity when absent); rpy are fixed-axis roll, pitch, yaw."""
    origin = element.find("origin")
    if origin is None:
        return np.zeros(3), np.eye(3)
    xyz = plausible(_numbers(origin, "xyz", 3, where, [0.0, 0.0, 0.0]), MAX_LENGTH, f"{where}: <origin xyz>",
                    "m")
    rpy = _numbers(origin, "rpy", 3, where, [0.0, 0.0, 0.0])
    return xyz, euler2mat(*rpy, axes="sxyz")


@dataclass
class _Inertial:
    """Mass (kg), CoM (m) and inertia about the CoM (kg m²), in some body's frame."""

    mass: float = 0.0
    com: np.ndarray = field(default_factory=lambda: np.zeros(3))
    inertia: np.ndarray = field(default_factory=lambda: np.zeros((3, 3)))


def _inertial(link: ET.Element, where: str) -> _Inertial:
    """The link's ``<inertial>`` in the link frame (massless when absent)."""
    element = link.find("inertial")
    if element is None:
        return _Inertial()
    here = f"{where}: <inertial>"
    com, rotation = _origin(element, here)
    mass_element = element.find("mass")
    if mass_element is None:
        raise ModelError(f"{here}: <mass> is missing")
    mass = plausible(_number(mass_element, "value", here, low=0.0), MAX_MASS, f"{here}: <mass value>", "kg")
    inertia_element = element.find("inertia")
    if inertia_element is None:
        raise ModelError(f"{here}: <inertia> is missing")
    ixx, ixy, ixz, iyy, iyz, izz = (_number(inertia_element, key, here, default=0.0)
                                    for key in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz"))
    inertia = _inertia([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]], where, definite=False)
    return _Inertial(mass, com, rotation @ inertia @ rotation.T)


def lump(parts: list[_Inertial]) -> _Inertial:
    """One rigid body from parts in a common frame: m = Σ m_i, c = Σ m_i c_i / m, and about c
    I = Σ [I_i + m_i (|d_i|² E − d_i d_iᵀ)] with d_i = c_i − c (parallel-axis theorem)."""
    mass = sum(part.mass for part in parts)
    if mass <= 0.0:
        return _Inertial(0.0, np.zeros(3), sum((part.inertia for part in parts), np.zeros((3, 3))))
    com = sum(part.mass * part.com for part in parts) / mass
    inertia = np.zeros((3, 3))
    for part in parts:
        d = part.com - com
        inertia += part.inertia + part.mass * (float(d @ d) * np.eye(3) - np.outer(d, d))
    return _Inertial(mass, com, 0.5 * (inertia + inertia.T))


def _moved(part: _Inertial, rotation: np.ndarray, origin: np.ndarray) -> _Inertial:
    """``part`` expressed in a frame where its own frame sits at (``rotation``, ``origin``)."""
    return _Inertial(part.mass, origin + rotation @ part.com, rotation @ part.inertia @ rotation.T)


# ----------------------------------------------------------------------------------------------- the tree


@dataclass
class _UrdfJoint:
    element: ET.Element
    name: str
    type: str
    parent: str
    child: str
    where: str


@dataclass
class _Body:
    """A moving body being assembled: its model link (None: the base), its parts, its follower data."""

    name: str
    joint: _UrdfJoint | None
    origin: np.ndarray
    rotation: np.ndarray
    parent_body: str
    frame_parent: str
    parts: list = field(default_factory=list)


class _Tree:
    """The URDF's links and joints, checked to form one tree."""

    def __init__(self, source: str, links: dict, joints: list[_UrdfJoint], root_element: ET.Element):
        self.source = source
        self.links = links
        self.joints = joints
        self.root_element = root_element
        self.children: dict[str, list[_UrdfJoint]] = {name: [] for name in links}
        for joint in joints:
            self.children[joint.parent].append(joint)

    @classmethod
    def parse(cls, root: ET.Element, source: str) -> "_Tree":
        links: dict[str, ET.Element] = {}
        for element in root.findall("link"):
            name = element.get("name")
            if not name:
                raise ModelError(f"{source}: a <link> has no name")
            if name in links:
                raise ModelError(f"{source}: link '{printable(name)}': defined twice")
            links[name] = element
        if not links:
            raise ModelError(f"{source}: the robot has no <link>")
        joints, seen, parent_of = [], set(), {}
        for element in root.findall("joint"):
            name = element.get("name")
            if not name:
                raise ModelError(f"{source}: a <joint> has no name")
            where = f"{source}: joint '{printable(name)}'"
            if name in seen:
                raise ModelError(f"{where}: defined twice")
            seen.add(name)
            kind = element.get("type")
            if kind not in (*_MOVABLE, "fixed", *_REFUSED):
                raise ModelError(f"{where}: <joint type> must be one of revolute, continuous, prismatic, fixed, "
                                 f"floating, planar, got {kind!r}")
            ends = {}
            for tag in ("parent", "child"):
                end = element.find(tag)
                if end is None or not end.get("link"):
                    raise ModelError(f"{where}: <{tag} link> is missing")
                if end.get("link") not in links:
                    raise ModelError(f"{where}: <{tag} link> '{printable(end.get('link'))}' is not a link of the "
                                     "robot")
                ends[tag] = end.get("link")
            if ends["parent"] == ends["child"]:
                raise ModelError(f"{where}: <parent link> and <child link> are both '{printable(ends['child'])}' "
                                 "(a cycle)")
            if ends["child"] in parent_of:
                raise ModelError(f"{source}: link '{printable(ends['child'])}': child of two joints, "
                                 f"'{printable(parent_of[ends['child']])}' and '{printable(name)}' (a URDF is a tree)")
            parent_of[ends["child"]] = name
            joints.append(_UrdfJoint(element, name, kind, ends["parent"], ends["child"], where))
        roots = [name for name in links if name not in parent_of]
        if not roots:
            raise ModelError(f"{source}: every link has a parent joint (a cycle); a URDF has one root link")
        if len(roots) > 1:
            raise ModelError(f"{source}: links {printable(roots)} have no parent joint (two roots); a URDF is one tree")
        tree = cls(source, links, joints, root)
        reached = set(tree._walk(roots[0]))
        if len(reached) < len(links):
            cycle = sorted(set(links) - reached)
            raise ModelError(f"{source}: links {printable(cycle)} form a cycle (not reachable from the root "
                             f"'{printable(roots[0])}')")
        tree.root = roots[0]
        return tree

    def _walk(self, start: str):
        stack = [start]
        while stack:
            name = stack.pop()
            yield name
            stack.extend(joint.child for joint in reversed(self.children[name]))

    # ------------------------------------------------------------------------------------------- building

    def _base_of(self, floating_base: bool) -> tuple[str, bool, np.ndarray, np.ndarray]:
        """(base link, floating, world origin and rotation in the base frame)."""
        if self.root != WORLD:
            return self.root, floating_base, np.zeros(3), np.eye(3)
        below = self.children[WORLD]
        if len(below) != 1:
            raise ModelError(f"{self.source}: link '{WORLD}' must have exactly one child joint (to the robot's "
                             f"base), got {[joint.name for joint in below]}")
        joint = below[0]
        if joint.type == "floating":
            return joint.child, True, np.zeros(3), np.eye(3)
        if joint.type != "fixed":
            raise ModelError(f"{joint.where}: a {joint.type} joint from '{WORLD}' is not supported: the base is "
                             f"fixed (a fixed joint) or free-floating (a floating joint)")
        origin, rotation = _origin(joint.element, joint.where)
        return joint.child, floating_base, -rotation.T @ origin, rotation.T

    def build(self, name: str, text: str, floating_base: bool, gravity) -> RobotModel:
        base_name, floating, world_origin, world_rotation = self._base_of(floating_base)
        bodies: dict[str, _Body] = {base_name: _Body(base_name, None, np.zeros(3), np.eye(3), "", "")}
        frames: list[Frame] = []
        #: every URDF link -> (its body, its pose in the body)
        placed = {base_name: (base_name, np.zeros(3), np.eye(3))}
        base_where = f"{self.source}: link '{printable(base_name)}'"
        bodies[base_name].parts.append(_inertial(self.links[base_name], base_where))
        followers: dict[str, str] = {}   # body name -> its mimic joint's name
        movable = {joint.name: joint for joint in self.joints if joint.type in _MOVABLE}
        parent_joint = {joint.child: joint for joint in self.joints}
        order = [parent_joint[link] for link in self._walk(base_name) if link != base_name]   # depth first
        for joint in order:
            body, origin, rotation = placed[joint.parent]
            joint_origin, joint_rotation = _origin(joint.element, joint.where)
            pose = (origin + rotation @ joint_origin, rotation @ joint_rotation)
            link_where = f"{self.source}: link '{printable(joint.child)}'"
            if joint.type in _REFUSED:
                raise ModelError(f"{joint.where}: {joint.type} joints are not supported (a floating joint only "
                                 f"from '{WORLD}' to the base of a free-floating robot)")
            part = _inertial(self.links[joint.child], link_where)
            if joint.type == "fixed":
                placed[joint.child] = (body, *pose)
                frames.append(Frame(joint.child, joint.parent, body, pose[0], pose[1]))
                bodies[body].parts.append(_moved(part, pose[1], pose[0]))
                continue
            if body in followers:
                raise ModelError(f"{joint.where}: a movable joint below the mimic joint "
                                 f"'{printable(followers[body])}' is not supported")
            frame_parent = joint.parent if joint.parent != body else ""
            bodies[joint.child] = _Body(joint.child, joint, pose[0], pose[1], body, frame_parent, [part])
            placed[joint.child] = (joint.child, np.zeros(3), np.eye(3))
            if joint.element.find("mimic") is not None:
                followers[joint.child] = joint.name
        if gravity is None:
            gravity = np.zeros(3) if floating else np.array(GRAVITY)
        gravity = world_rotation.T @ np.asarray(gravity, dtype=float)   # the world's g in the base frame
        if np.any(world_origin) or np.any(world_rotation != np.eye(3)):
            frames.append(Frame(WORLD, base_name, base_name, world_origin, world_rotation))
        return self._model(name, text, bodies, frames, followers, movable, floating, gravity)

    def _model(self, name, text, bodies, frames, followers, movable, floating, gravity) -> RobotModel:
        base_body = next(iter(bodies.values()))
        lumped = {body.name: lump(body.parts) for body in bodies.values()}
        base_inertial = lumped[base_body.name]
        where = f"{self.source}: link '{printable(base_body.name)}'"
        if floating:
            if not base_inertial.mass > 0.0:
                raise ModelError(f"{where}: a free-floating base needs a mass > 0 (its own and its fixed links')")
            _inertia(base_inertial.inertia, where, definite=True)
        base = Base(base_body.name, floating, base_inertial.mass, base_inertial.com, base_inertial.inertia, None)
        links, mimic = [], []
        for body in list(bodies.values())[1:]:
            inertial = lumped[body.name]
            joint = _joint(body.joint, body.origin, body.rotation)
            link = Link(body.name, body.parent_body, joint, inertial.mass, inertial.com, inertial.inertia,
                        2.0 * inertial.com, None, body.frame_parent)
            if body.name in followers:
                mimic.append(self._mimic(link, body.joint, movable, followers))
            else:
                links.append(link)
        if not links:
            raise ModelError(f"{self.source}: the robot has no movable (revolute, continuous or prismatic) joint "
                             "that is not a mimic")
        _check_massless(links, mimic, self.source)
        model = RobotModel(name=name, gravity=gravity, base=base, links=tuple(links), frames=tuple(frames),
                           mimic=tuple(mimic), urdf=text, command_interfaces=self._command_interfaces(movable))
        clash = sorted({n for n in model.joint_names if model.joint_names.count(n) > 1})
        if clash:
            raise ModelError(f"{self.source}: joint names {printable(clash)} occur more than once")
        return model

    def _mimic(self, link: Link, joint: _UrdfJoint, movable: dict, followers: dict) -> Mimic:
        element = joint.element.find("mimic")
        here = f"{joint.where}: <mimic>"
        leader = element.get("joint")
        if leader not in movable:
            raise ModelError(f"{here}: <mimic joint> '{printable(leader)}' is not a movable joint of the robot")
        if leader in followers.values():
            raise ModelError(f"{here}: <mimic joint> '{printable(leader)}' is itself a mimic joint (name its leader "
                             "instead)")
        multiplier = plausible(_number(element, "multiplier", here, default=1.0), MAX_MIMIC_MULTIPLIER,
                               f"{here}: <mimic multiplier>", "")
        offset = plausible(_number(element, "offset", here, default=0.0), MAX_LENGTH, f"{here}: <mimic offset>",
                           "rad or m")
        return Mimic(link, leader, multiplier, offset)

    def _command_interfaces(self, movable: dict) -> tuple:
        interfaces = []
        for system in self.root_element.findall("ros2_control"):
            for element in system.findall("joint"):
                joint = element.get("name")
                if joint not in movable:
                    raise ModelError(f"{self.source}: <ros2_control> <joint name> '{printable(joint)}' is not a "
                                     "movable joint of the robot")
                commands = tuple(c.get("name", "") for c in element.findall("command_interface"))
                interfaces.append((joint, commands))
        return tuple(interfaces)


def _joint(joint: _UrdfJoint, origin: np.ndarray, rotation: np.ndarray) -> Joint:
    """The model's 1-DOF joint for a URDF revolute, continuous or prismatic joint at ``origin`` (m) and
    ``rotation`` in its body's parent body."""
    element, where = joint.element, joint.where
    axis_element = element.find("axis")
    axis = np.array([1.0, 0.0, 0.0]) if axis_element is None else _numbers(axis_element, "xyz", 3, where)
    norm = float(np.linalg.norm(axis))
    if norm < 1e-9:
        raise ModelError(f"{where}: <axis xyz> must not be zero")
    limit = element.find("limit")
    lower, upper, velocity, effort = -math.inf, math.inf, math.inf, math.inf
    if limit is not None:
        # 0 is URDF's default for an absent effort or velocity: no limit given
        effort = _number(limit, "effort", where, default=0.0, low=0.0) or math.inf
        velocity = _number(limit, "velocity", where, default=0.0, low=0.0) or math.inf
        if joint.type != "continuous":
            lower = _number(limit, "lower", where, default=-math.inf)
            upper = _number(limit, "upper", where, default=math.inf)
            if lower > upper:
                raise ModelError(f"{where}: <limit lower> {lower:g} exceeds <limit upper> {upper:g}")
    dynamics = element.find("dynamics")
    damping = friction = 0.0
    if dynamics is not None:
        damping = _number(dynamics, "damping", where, default=0.0, low=0.0)
        friction = _number(dynamics, "friction", where, default=0.0, low=0.0)
    initial = min(max(0.0, lower), upper)
    one = lambda value: np.array([value], dtype=float)  # noqa: E731 -- per-DOF arrays of a 1-DOF joint
    return Joint(joint.name, _MOVABLE[joint.type], (axis / norm)[None, :], origin, rotation, one(lower),
                 one(upper), one(velocity), one(effort), one(initial), one(damping), one(friction))


def _check_massless(links: list[Link], mimic: list[Mimic], source: str) -> None:
    """Refuse a DOF that moves nothing with mass or inertia: its row of M(q) would be zero (M singular)."""
    carried = {link.name: link.mass + float(np.trace(link.inertia)) for link in links}
    for follower in mimic:
        carried[follower.link.parent] = carried.get(follower.link.parent, 0.0) + follower.link.mass \
            + float(np.trace(follower.link.inertia))
    for link in reversed(links):
        if link.parent in carried:
            carried[link.parent] += carried[link.name]
    for link in links:
        if carried[link.name] <= 0.0:
            raise ModelError(f"{source}: link '{printable(link.name)}': massless, and so is everything joint "
                             f"'{printable(link.joint.name)}' moves (the mass matrix would be singular)")


# ----------------------------------------------------------------------------------------------- meshes


def resolve_mesh(filename: str, directory: Path | None) -> Path | None:
    """The file a ``<mesh filename>`` names: ``package://<pkg>/...`` in the package's share directory (ament
    index) or in an ancestor of ``directory`` named ``<pkg>``; ``file://`` paths; relative paths from
    ``directory``. None when it cannot be found."""
    if filename.startswith("package://"):
        package, _, rest = filename[len("package://"):].partition("/")
        candidates = []
        try:
            from ament_index_python.packages import get_package_share_directory

            candidates.append(Path(get_package_share_directory(package)) / rest)
        except Exception:  # noqa: BLE001 -- not installed, no ament index, AMENT_PREFIX_PATH unset: look nearby
            pass
        if directory is not None:
            for ancestor in (directory.resolve(), *directory.resolve().parents):
                if ancestor.name == package:
                    candidates.append(ancestor / rest)
                candidates.append(ancestor / package / rest)
    else:
        path = Path(filename[len("file://"):] if filename.startswith("file://") else filename)
        candidates = [path] if path.is_absolute() or directory is None else [directory / path]
    return next((path for path in candidates if path.is_file()), None)


def _check_meshes(root: ET.Element, source: str, directory: Path | None) -> None:
    """One :class:`MeshWarning` naming the first unresolvable mesh and how many there are."""
    missing = [(link.get("name"), mesh.get("filename", "")) for link in root.findall("link")
               for mesh in link.iter("mesh") if resolve_mesh(mesh.get("filename", ""), directory) is None]
    if missing:
        (link, filename), more = missing[0], len(missing) - 1
        others = f" (and {more} more)" if more else ""
        warnings.warn(f"{source}: link '{printable(link)}': <mesh filename> '{printable(filename)}' cannot be "
                      f"resolved{others}; the dynamics do not need it, RViz will not show it", MeshWarning,
                      stacklevel=3)
