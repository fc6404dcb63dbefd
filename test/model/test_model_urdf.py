"""The URDF: parseable, joint names equal the JointState names, visuals and inertias, same kinematics."""

import copy
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from transforms3d.axangles import axangle2mat
from transforms3d.euler import euler2mat

from discrete_robot.errors import ModelError
from discrete_robot.model.description import model_from_dict
from discrete_robot.model.kinematics import forward_kinematics
from discrete_robot.model.urdf import fixed_transforms, joint_transforms, to_urdf


def _floats(text: str) -> np.ndarray:
    return np.array([float(v) for v in text.split()])


@pytest.mark.parametrize("name", ["planar_2link", "arm_6dof", "mixed_tree"])
def test_urdf_joints_links_visuals_and_inertias(request, name):
    model = request.getfixturevalue(name)
    robot = ET.fromstring(to_urdf(model))
    assert robot.tag == "robot" and robot.get("name") == model.name
    movable = [j.get("name") for j in robot.findall("joint") if j.get("type") != "fixed"]
    assert movable == list(model.joint_names)
    links = {link.get("name"): link for link in robot.findall("link")}
    assert links.pop("world").find("visual") is None  # the inertial frame, not a body
    assert all(link.find("visual/geometry") is not None for link in links.values())
    for link in model.links:
        assert float(links[link.name].find("inertial/mass").get("value")) == link.mass
        inertia = links[link.name].find("inertial/inertia")
        assert float(inertia.get("iyy")) == link.inertia[1, 1] and float(inertia.get("ixy")) == link.inertia[0, 1]
    children = {j.find("child").get("link") for j in robot.findall("joint")}
    assert set(links) - children == set()  # one tree below world, bolted to the fixed base
    (anchor,) = [j for j in robot.findall("joint") if j.find("parent").get("link") == "world"]
    assert anchor.get("type") == "fixed" and anchor.find("child").get("link") == model.base.name


def _urdf_forward_kinematics(robot: ET.Element, positions: dict) -> dict:
    """World pose (R, p) of every URDF link, composing origins and joint rotations/translations."""
    poses = {}
    joints = robot.findall("joint")
    roots = {link.get("name") for link in robot.findall("link")} - {j.find("child").get("link") for j in joints}
    (root,) = roots
    poses[root] = (np.eye(3), np.zeros(3))
    pending = list(joints)
    while pending:
        for joint in list(pending):
            parent = joint.find("parent").get("link")
            if parent not in poses:
                continue
            R, p = poses[parent]
            origin = joint.find("origin")
            rpy, xyz = ("0 0 0", "0 0 0") if origin is None else (origin.get("rpy"), origin.get("xyz"))
            R_joint = R @ euler2mat(*_floats(rpy), axes="sxyz")
            p_joint = p + R @ _floats(xyz)
            if joint.get("type") == "fixed":
                poses[joint.find("child").get("link")] = (R_joint, p_joint)
                pending.remove(joint)
                continue
            axis = _floats(joint.find("axis").get("xyz"))
            value = positions[joint.get("name")]
            if joint.get("type") == "prismatic":
                poses[joint.find("child").get("link")] = (R_joint, p_joint + R_joint @ axis * value)
            else:
                poses[joint.find("child").get("link")] = (R_joint @ axangle2mat(axis, value), p_joint)
            pending.remove(joint)
    return poses


def test_urdf_kinematics_equal_the_model_kinematics(mixed_tree):
    q = np.random.default_rng(4).uniform(-2, 2, mixed_tree.dof)
    poses = _urdf_forward_kinematics(ET.fromstring(to_urdf(mixed_tree)), dict(zip(mixed_tree.joint_names, q,
                                                                                    strict=True)))
    frames = forward_kinematics(mixed_tree, q)
    for i, link in enumerate(mixed_tree.links):
        R, p = poses[link.name]
        np.testing.assert_allclose(R, frames.rotations[i], atol=1e-12)
        np.testing.assert_allclose(p, frames.positions[i], atol=1e-12)


@pytest.mark.parametrize("name", ["planar_2link", "arm_6dof", "mixed_tree"])
def test_joint_transforms_are_the_urdf_tree_at_q(request, name):
    """What the simulators publish on /tf is what robot_state_publisher would compute from the URDF: every link
    (multi-DOF joints' intermediate links included), composed from the world."""
    model = request.getfixturevalue(name)
    q = np.random.default_rng(5).uniform(-2, 2, model.dof)
    urdf = ET.fromstring(to_urdf(model))
    expected = _urdf_forward_kinematics(urdf, dict(zip(model.joint_names, q, strict=True)))
    poses = {"world": (np.eye(3), np.zeros(3))} if not model.base.floating else {model.base.name: (np.eye(3),
                                                                                                np.zeros(3))}
    pending = [*fixed_transforms(model), *joint_transforms(model, q)]
    while pending:   # a TF listener composes in any order: parents as they become known
        known = [t for t in pending if t.parent in poses]
        assert known, f"transforms with unknown parents: {[(t.parent, t.child) for t in pending]}"
        for transform in known:
            R, p = poses[transform.parent]
            poses[transform.child] = (R @ transform.rotation, p + R @ transform.translation)
            pending.remove(transform)
    assert set(poses) == {link.get("name") for link in urdf.findall("link")}
    for name, (R, p) in expected.items():
        np.testing.assert_allclose(poses[name][0], R, atol=1e-12)
        np.testing.assert_allclose(poses[name][1], p, atol=1e-12)


def test_floating_base_is_the_root_link_with_its_inertia(mixed_tree_data):
    data = copy.deepcopy(mixed_tree_data)
    data["base"] = {"name": "satellite", "type": "floating", "mass": 400.0, "inertia": [90.0, 80.0, 70.0],
                    "geometry": {"type": "box", "size": [1.0, 1.0, 1.0]}}
    for link in data["links"]:
        if link["parent"] == "base":
            link["parent"] = "satellite"
    robot = ET.fromstring(to_urdf(model_from_dict(data)))
    base = next(link for link in robot.findall("link") if link.get("name") == "satellite")
    assert float(base.find("inertial/mass").get("value")) == 400.0
    assert base.find("visual/geometry/box").get("size") == "1.0 1.0 1.0"
    assert all(j.find("child").get("link") != "satellite" for j in robot.findall("joint"))


def test_link_names_clashing_with_multi_dof_frames_are_refused(mixed_tree_data):
    data = copy.deepcopy(mixed_tree_data)
    data["links"][4]["name"] = "jb_0"  # the frame between the spherical joint's first and second rotation
    with pytest.raises(ModelError, match="jb_0"):
        to_urdf(model_from_dict(data))


@pytest.mark.parametrize("name", ["planar_2link", "arm_6dof", "mixed_tree"])
def test_every_drawn_link_carries_its_visual_shapes_as_collision_geometry(request, name):
    """Planners and simulators reading the URDF (MoveIt, Gazebo) see the same shapes RViz draws; the markers of
    multi-DOF joints' massless links are drawn only."""
    model = request.getfixturevalue(name)
    dummies = {n for link in model.links for n in link.joint.dof_names[:-1]}
    for link in ET.fromstring(to_urdf(model)).iter("link"):
        def shapes(tag, link=link):
            return [(element.find("origin").attrib, [(shape.tag, shape.attrib) for shape in element.find("geometry")])
                    for element in link.findall(tag)]
        expected = [] if link.get("name") in dummies else shapes("visual")
        assert shapes("collision") == expected, link.get("name")
