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
from discrete_robot.geometry3d import rotation_about
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
    K = np.array([[0.0, -axis[2], axis[1]], [axis[2], 0.0, -axis[0]], [-axis[1], axis[0], 0.0]]) / sin
    return np.eye(3) + sin * K + (1.0 - cos) * (K @ K)


def _visual(link: ET.Element, shape: str, size: dict, xyz, rotation=None) -> None:
    visual = ET.SubElement(link, "visual")
    _origin(visual, xyz, rotation)
    geometry = ET.SubElement(visual, "geometry")
    ET.SubElement(geometry, shape, {k: (_numbers(v) if k == "size" else repr(float(v))) for k, v in size.items()})
    material = ET.SubElement(visual, "material", name="discrete_robot_grey")
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
           first: bool) -> None:
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
        joint = link.joint
        parent = link.parent
        for k, (name, axis) in enumerate(zip(joint.dof_names, joint.axes, strict=True)):
            last = k == joint.ndof - 1
            child = link.name if last else name
            _joint(robot, name, joint.type, parent, child, axis, k, joint, first=k == 0)
            if not last:
                dummy = ET.SubElement(robot, "link", name=child)
                _visual(dummy, "sphere", {"radius": DUMMY_RADIUS}, (0.0, 0.0, 0.0))
            parent = child
        element = ET.SubElement(robot, "link", name=link.name)
        _inertial(element, link.mass, link.com, link.inertia)
        _visuals(element, link.geometry, link.com, link.tip)
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


def fixed_transforms(model: RobotModel) -> list[FrameTransform]:
    """The URDF's fixed joints: ``world`` -> base for a fixed base, and link -> ``fingertip``."""
    transforms = [] if model.base.floating else [FrameTransform(WORLD_FRAME, model.base.name, np.eye(3), np.zeros(3))]
    if model.fingertip is not None:
        transforms.append(FrameTransform(model.fingertip.link, FINGERTIP_FRAME, np.eye(3), model.fingertip.offset))
    return transforms


def joint_transforms(model: RobotModel, q) -> list[FrameTransform]:
    """The pose of every movable joint's child link in its parent link at coordinates q (model order), one per
    generalised coordinate and in the URDF's own tree (multi-DOF joints through their ``<joint>_<k>`` links), so
    these are exactly the transforms robot_state_publisher would compute from ``to_urdf(model)``.

    Joint k of a link: T = (joint origin and rotation, for its first DOF only) · (rotation by q_k about
    axis_k, or translation by q_k along it).
    """
    q = np.asarray(q, dtype=float)
    transforms = []
    for link, dofs in zip(model.links, model.dof_slices, strict=True):
        joint = link.joint
        parent = link.parent
        for k, (name, axis, value) in enumerate(zip(joint.dof_names, joint.axes, q[dofs], strict=True)):
            child = link.name if k == joint.ndof - 1 else name
            rotation, translation = (joint.rotation, joint.origin) if k == 0 else (np.eye(3), np.zeros(3))
            if joint.type is JointType.PRISMATIC:
                translation = translation + rotation @ (value * axis)
            else:
                rotation = rotation @ rotation_about(axis, value)
            transforms.append(FrameTransform(parent, child, rotation, translation))
            parent = child
    return transforms
