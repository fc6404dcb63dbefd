"""URDF of a :class:`RobotModel`, for robot_state_publisher and RViz.

The base is the root link (a floating base's pose in the world is left to the
node that simulates it, via TF). A multi-DOF joint becomes a chain of revolute
joints named after its generalised coordinates (``<joint>_<k>``) through
massless links also named ``<joint>_<k>`` (k < ndof − 1), the last joint
carrying the real link, so the URDF's movable joint names are exactly
``model.joint_names`` and a JointState of the model drives it directly.

Visuals: the link's geometry (capsule = cylinder + two spheres, cylinder from
the joint to the tip, box or sphere centred at the CoM), by default a thin
capsule from the joint to the tip.
"""

import xml.etree.ElementTree as ET
from dataclasses import dataclass

import numpy as np
from transforms3d.euler import mat2euler

from discrete_robot.errors import ModelError
from discrete_robot.geometry3d import hat, rotation_about
from discrete_robot.model.description import JointType, RobotModel

WORLD_FRAME = "world"
#: the URDF link of a model's fingertip (a sphere fixed in its link)
FINGERTIP_FRAME = "fingertip"
DEFAULT_RADIUS = 0.02  # m, the thin capsule drawn for links without geometry
DUMMY_RADIUS = 0.005   # m, the marker drawn for the massless links inside multi-DOF joints
# URDF limits are plain numbers; an unlimited value is written as this magnitude.
UNLIMITED = 1e9


def _numbers(values) -> str:
    return " ".join(repr(float(v) + 0.0) for v in values)  # + 0.0 turns -0.0 into 0.0


def _origin(parent: ET.Element, xyz=(0.0, 0.0, 0.0), rotation=None) -> None:
    rpy = (0.0, 0.0, 0.0) if rotation is None else mat2euler(rotation, axes="sxyz")
    ET.SubElement(parent, "origin", xyz=_numbers(xyz), rpy=_numbers(rpy))


def _rotation_z_to(direction: np.ndarray) -> np.ndarray:
    """A rotation taking +z to the unit ``direction`` (URDF cylinders lie along their z axis)."""
    z = np.array([0.0, 0.0, 1.0])
    axis = np.cross(z, direction)
    sin, cos = np.linalg.norm(axis), float(z @ direction)
    if sin < 1e-12:
        return np.eye(3) if cos > 0 else np.diag([1.0, -1.0, -1.0])
    K = hat(axis) / sin
    return np.eye(3) + sin * K + (1.0 - cos) * (K @ K)


def _visual(link: ET.Element, shape: str, size: dict, xyz, rotation=None, collision: bool = True) -> None:
    """A ``<visual>`` of the shape and, with ``collision``, the same shape as a ``<collision>`` (for planners and
    simulators that read the URDF's collision geometry)."""
    attributes = {k: (_numbers(v) if k == "size" else repr(float(v))) for k, v in size.items()}
    for tag in ("visual", "collision") if collision else ("visual",):
        element = ET.SubElement(link, tag)
        _origin(element, xyz, rotation)
        ET.SubElement(ET.SubElement(element, "geometry"), shape, attributes)
        if tag == "visual":
            material = ET.SubElement(element, "material", name="discrete_robot_grey")
            ET.SubElement(material, "color", rgba="0.7 0.7 0.75 1.0")


def _segment(link: ET.Element, tip: np.ndarray, radius: float, caps: bool) -> None:
    """A cylinder from the link origin to ``tip`` (spheres at both ends when ``caps``)."""
    length = float(np.linalg.norm(tip))
    if length > 1e-9:
        _visual(link, "cylinder", {"radius": radius, "length": length}, tip / 2, _rotation_z_to(tip / length))
    if caps or length <= 1e-9:
        _visual(link, "sphere", {"radius": radius}, (0.0, 0.0, 0.0))
        if length > 1e-9:
            _visual(link, "sphere", {"radius": radius}, tip)


def _visuals(link: ET.Element, geometry: dict | None, com: np.ndarray, tip: np.ndarray) -> None:
    geometry = geometry or {"type": "capsule", "radius": DEFAULT_RADIUS}
    kind = geometry["type"]
    if kind in ("capsule", "cylinder"):
        _segment(link, tip, geometry["radius"], caps=kind == "capsule")
    elif kind == "box":
        _visual(link, "box", {"size": geometry["size"]}, com)
    else:
        _visual(link, "sphere", {"radius": geometry["radius"]}, com)


def _inertial(link: ET.Element, mass: float, com: np.ndarray, inertia: np.ndarray) -> None:
    inertial = ET.SubElement(link, "inertial")
    _origin(inertial, com)
    ET.SubElement(inertial, "mass", value=repr(float(mass)))
    names = {"ixx": (0, 0), "ixy": (0, 1), "ixz": (0, 2), "iyy": (1, 1), "iyz": (1, 2), "izz": (2, 2)}
    ET.SubElement(inertial, "inertia", {k: repr(float(inertia[i, j])) for k, (i, j) in names.items()})


def _limit_value(value: float) -> str:
    return repr(float(np.clip(value, -UNLIMITED, UNLIMITED)))


def _joint(robot: ET.Element, name: str, kind: JointType, parent: str, child: str, axis, index: int, joint,
           first: bool) -> ET.Element:
    bounded = np.isfinite(joint.lower[index]) and np.isfinite(joint.upper[index])
    urdf_type = "prismatic" if kind is JointType.PRISMATIC else ("revolute" if bounded else "continuous")
    element = ET.SubElement(robot, "joint", name=name, type=urdf_type)
    if first:
        _origin(element, joint.origin, joint.rotation)
    else:
        _origin(element)
    ET.SubElement(element, "parent", link=parent)
    ET.SubElement(element, "child", link=child)
    ET.SubElement(element, "axis", xyz=_numbers(axis))
    limit = {"effort": _limit_value(joint.effort[index]), "velocity": _limit_value(joint.velocity[index])}
    if urdf_type != "continuous":
        limit.update(lower=_limit_value(joint.lower[index]), upper=_limit_value(joint.upper[index]))
    ET.SubElement(element, "limit", limit)
    if joint.damping[index] > 0.0 or joint.friction[index] > 0.0:
        ET.SubElement(element, "dynamics", damping=repr(float(joint.damping[index])),
                      friction=repr(float(joint.friction[index])))
    return element


def _link(robot: ET.Element, link) -> ET.Element:
    """``link`` and its joint (multi-DOF joints through their ``<joint>_<k>`` links); the last joint element."""
    joint = link.joint
    parent = link.parent
    for k, (name, axis) in enumerate(zip(joint.dof_names, joint.axes, strict=True)):
        last = k == joint.ndof - 1
        child = link.name if last else name
        element = _joint(robot, name, joint.type, parent, child, axis, k, joint, first=k == 0)
        if not last:
            dummy = ET.SubElement(robot, "link", name=child)
            _visual(dummy, "sphere", {"radius": DUMMY_RADIUS}, (0.0, 0.0, 0.0), collision=False)
        parent = child
    body = ET.SubElement(robot, "link", name=link.name)
    _inertial(body, link.mass, link.com, link.inertia)
    _visuals(body, link.geometry, link.com, link.tip)
    return element


def to_urdf(model: RobotModel) -> str:
    """The URDF XML text of ``model`` (movable joint names == ``model.joint_names``)."""
    link_names = {model.base.name} | {link.name for link in model.links}
    if WORLD_FRAME in link_names:
        raise ModelError(f"model '{model.name}': '{WORLD_FRAME}' is the inertial frame, not a link name")
    dummies = {name for link in model.links for name in link.joint.dof_names[:-1]}
    if link_names & dummies:
        raise ModelError(f"model '{model.name}': link name(s) {sorted(link_names & dummies)} clash with the URDF "
                         "links of multi-DOF joints (named <joint>_<k>)")
    robot = ET.Element("robot", name=model.name)
    base = ET.SubElement(robot, "link", name=model.base.name)
    if model.base.mass > 0.0:
        _inertial(base, model.base.mass, model.base.com, model.base.inertia)
    base_geometry = model.base.geometry or {"type": "sphere", "radius": 2 * DEFAULT_RADIUS}
    _visuals(base, base_geometry, model.base.com, np.zeros(3))
    if not model.base.floating:
        # A fixed base is bolted to the inertial frame (REP 105 `world`): robot_state_publisher then
        # publishes world -> base itself, and RViz can use `world` as its fixed frame. A floating
        # base's world pose is the simulator's to publish.
        ET.SubElement(robot, "link", name=WORLD_FRAME)
        fixed = ET.SubElement(robot, "joint", name=f"{WORLD_FRAME}_to_{model.base.name}", type="fixed")
        ET.SubElement(fixed, "parent", link=WORLD_FRAME)
        ET.SubElement(fixed, "child", link=model.base.name)
    for link in model.links:
        _link(robot, link)
    for follower in model.mimic:
        joint = _link(robot, follower.link)
        ET.SubElement(joint, "mimic", joint=follower.leader, multiplier=repr(follower.multiplier),
                      offset=repr(follower.offset))
    for frame in model.frames:
        if frame.name != WORLD_FRAME:
            rotation, translation = _relative(_pose_in_body(model, frame.parent), (frame.origin, frame.rotation))
            fixed = ET.SubElement(robot, "joint", name=f"{frame.parent}_to_{frame.name}", type="fixed")
            _origin(fixed, translation, rotation)
            ET.SubElement(fixed, "parent", link=frame.parent)
            ET.SubElement(fixed, "child", link=frame.name)
            ET.SubElement(robot, "link", name=frame.name)
    if model.fingertip is not None:
        tip = model.fingertip
        if FINGERTIP_FRAME in link_names:
            raise ModelError(f"model '{model.name}': '{FINGERTIP_FRAME}' is the fingertip's frame, not a link name")
        fixed = ET.SubElement(robot, "joint", name=f"{FINGERTIP_FRAME}_joint", type="fixed")
        _origin(fixed, tip.offset)
        ET.SubElement(fixed, "parent", link=tip.link)
        ET.SubElement(fixed, "child", link=FINGERTIP_FRAME)
        _visual(ET.SubElement(robot, "link", name=FINGERTIP_FRAME), "sphere", {"radius": tip.radius}, (0.0, 0.0, 0.0))
    ET.indent(robot)
    return '<?xml version="1.0"?>\n' + ET.tostring(robot, encoding="unicode") + "\n"


@dataclass(frozen=True)
class FrameTransform:
    """The pose of URDF link ``child`` in URDF link ``parent``: rotation (3x3) and translation (m)."""

    parent: str
    child: str
    rotation: np.ndarray
    translation: np.ndarray


def _pose_in_body(model: RobotModel, name: str) -> tuple[np.ndarray, np.ndarray]:
    return model.frame_in_body(name)[1:]


def _relative(parent: tuple, child: tuple) -> tuple[np.ndarray, np.ndarray]:
    """(rotation, translation) of pose ``child`` in pose ``parent``, both (origin, rotation) in one frame."""
    (p_origin, p_rotation), (c_origin, c_rotation) = parent, child
    return p_rotation.T @ c_rotation, p_rotation.T @ (c_origin - p_origin)


def fixed_transforms(model: RobotModel) -> list[FrameTransform]:
    """The URDF's fixed joints: ``world`` -> base for a fixed base, each fixed link (a URDF model's
    :class:`Frame`) in its URDF parent, and link -> ``fingertip``."""
    transforms = []
    world = next((frame for frame in model.frames if frame.name == WORLD_FRAME), None)
    if not model.base.floating:
        if world is None:
            transforms.append(FrameTransform(WORLD_FRAME, model.base.name, np.eye(3), np.zeros(3)))
        else:
            rotation, translation = _relative((world.origin, world.rotation), (np.zeros(3), np.eye(3)))
            transforms.append(FrameTransform(WORLD_FRAME, model.base.name, rotation, translation))
    for frame in model.frames:
        if frame is not world:
            rotation, translation = _relative(_pose_in_body(model, frame.parent), (frame.origin, frame.rotation))
            transforms.append(FrameTransform(frame.parent, frame.name, rotation, translation))
    if model.fingertip is not None:
        transforms.append(FrameTransform(model.fingertip.link, FINGERTIP_FRAME, np.eye(3), model.fingertip.offset))
    return transforms


def _link_transforms(model: RobotModel, link, values) -> list[FrameTransform]:
    """The transforms of ``link``'s joint at its coordinates ``values``, one per DOF (see joint_transforms); the
    first from the link's URDF parent (a fixed frame of its parent body, or the body itself)."""
    joint = link.joint
    transforms = []
    parent = link.parent
    for k, (name, axis, value) in enumerate(zip(joint.dof_names, joint.axes, values, strict=True)):
        child = link.name if k == joint.ndof - 1 else name
        rotation, translation = (joint.rotation, joint.origin) if k == 0 else (np.eye(3), np.zeros(3))
        if joint.type is JointType.PRISMATIC:
            translation = translation + rotation @ (value * axis)
        else:
            rotation = rotation @ rotation_about(axis, value)
        if k == 0 and link.frame_parent:
            rotation, translation = _relative(_pose_in_body(model, link.frame_parent), (translation, rotation))
            parent = link.frame_parent
        transforms.append(FrameTransform(parent, child, rotation, translation))
        parent = child
    return transforms


def joint_transforms(model: RobotModel, q) -> list[FrameTransform]:
    """The pose of every movable joint's child link in its parent link at coordinates q (model order), one per
    generalised coordinate and in the URDF's own tree (multi-DOF joints through their ``<joint>_<k>`` links; a
    URDF model's joints from their URDF parents), then each mimic follower's at q_f = multiplier · q_leader +
    offset, so these are exactly the transforms robot_state_publisher would compute from the URDF.

    Joint k of a link: T = (joint origin and rotation, for its first DOF only) · (rotation by q_k about
    axis_k, or translation by q_k along it).
    """
    q = np.asarray(q, dtype=float)
    transforms = []
    for link, dofs in zip(model.links, model.dof_slices, strict=True):
        transforms += _link_transforms(model, link, q[dofs])
    for follower in model.mimic:
        leader = q[model.joint_names.index(follower.leader)]
        transforms += _link_transforms(model, follower.link, [follower.multiplier * leader + follower.offset])
    return transforms


def link_poses(model: RobotModel, q) -> dict[str, np.ndarray]:
    """Every URDF link's pose (4x4, m) in ``world`` (a floating base: in the base frame) at coordinates q,
    composed along the TF tree of :func:`fixed_transforms` and :func:`joint_transforms` from the root."""
    root = model.base.name if model.base.floating else WORLD_FRAME
    poses = {root: np.eye(4)}
    pending = fixed_transforms(model) + joint_transforms(model, q)
    while pending:
        rest = [t for t in pending if t.parent not in poses]
        if len(rest) == len(pending):
            raise ModelError(f"model '{model.name}': frames {sorted({t.parent for t in rest})} are not connected "
                             f"to '{root}'")
        for t in pending:
            if t.parent in poses:
                T = np.eye(4)
                T[:3, :3], T[:3, 3] = t.rotation, t.translation
                poses[t.child] = poses[t.parent] @ T
        pending = rest
    return poses
