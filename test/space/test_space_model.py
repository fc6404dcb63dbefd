"""The space robot from model files: Table 1 values, DOF names = URDF joints, attitude reporting, bad models."""

import copy
import xml.etree.ElementTree as ET

import numpy as np
import pytest
import yaml

from discrete_robot.errors import InputError, ModelError
from discrete_robot.geometry3d import rotation_about
from discrete_robot.model.description import load_model, model_from_dict, package_config_path
from discrete_robot.model.urdf import to_urdf
from discrete_robot.space.generated import multi_arm_model_data
from discrete_robot.space.kinematics import body_poses
from discrete_robot.space.loads import ExternalLoad
from discrete_robot.space.recursive import forward_dynamics
from discrete_robot.space.robot import JointKind, SpaceRobot
from discrete_robot.space.state import joint_positions, random_state, rest_state

DUAL_ARM = package_config_path("space_robot_dual_arm.yaml")


@pytest.fixture(scope="module")
def dual_arm() -> SpaceRobot:
    return SpaceRobot.from_model(load_model(DUAL_ARM))


def dual_arm_data() -> dict:
    return yaml.safe_load(DUAL_ARM.read_text())


def test_shipped_file_is_the_paper_table_1_robot(dual_arm):
    assert dual_arm.body_names == ["base", "arm1_link1", "arm1_link2", "arm2_link1", "arm2_link2"]
    assert dual_arm.base_mass == 400.0
    np.testing.assert_array_equal(dual_arm.base_inertia, np.diag([900.0, 900.0, 900.0]))
    assert len(dual_arm.arms) == 2 and all(len(arm) == 2 for arm in dual_arm.arms)
    for link in dual_arm.links:
        assert link.kind is JointKind.SPHERICAL
        assert link.mass == 61.27
        np.testing.assert_array_equal(link.inertia, np.diag([5.144, 5.144, 0.076]))
        assert np.linalg.norm(link.com) == pytest.approx(0.5)               # R
        assert np.linalg.norm(link.tip - link.com) == pytest.approx(0.5)    # r
        assert np.linalg.norm(link.offset) == pytest.approx(0.5)            # r0 (first links) and r1
    # At zero joint angles both arms point straight out along the base x axis.
    poses = body_poses(dual_arm, rest_state(dual_arm))
    np.testing.assert_allclose(poses.com_positions[:, 0], [0.0, 1.0, 2.0, -1.0, -2.0], atol=1e-15)
    np.testing.assert_allclose(poses.com_positions[:, 1:], 0.0, atol=1e-15)


def test_dof_names_are_the_urdf_movable_joints(dual_arm):
    for model in (load_model(DUAL_ARM), model_from_dict(multi_arm_model_data(3, 4, mixed_joints=True))):
        robot = SpaceRobot.from_model(model)
        movable = [j.get("name") for j in ET.fromstring(to_urdf(model)).iter("joint") if j.get("type") != "fixed"]
        assert robot.dof_names == movable


def test_reported_spherical_angles_drive_the_urdf_chain_to_the_true_attitude():
    """Link attitude = parent attitude · fixed rotation · Π rot(axis_k, reported angle_k), as in the URDF."""
    robot = SpaceRobot.from_model(model_from_dict(multi_arm_model_data(2, 3, mixed_joints=True, seed=4)))
    rng = np.random.default_rng(5)
    for _ in range(5):
        state = random_state(robot, rng)
        poses = body_poses(robot, state)
        positions = joint_positions(robot, state)
        for b, link in enumerate(robot.links, start=1):
            chain = poses.rotations[link.parent] @ link.fixed_rotation
            for axis, angle in zip(link.axes, positions[link.rates], strict=True):
                chain = chain @ rotation_about(axis, angle)
            np.testing.assert_allclose(chain, poses.rotations[b], atol=1e-12)


def test_joint_positions_round_trip_through_the_quaternion_state(dual_arm):
    positions = np.random.default_rng(1).uniform(-1.2, 1.2, dual_arm.dof)  # middle angles inside ±π/2
    np.testing.assert_allclose(joint_positions(dual_arm, rest_state(dual_arm, joint_positions=positions)),
                               positions, atol=1e-12)


def test_floating_base_is_required_and_prismatic_joints_are_taken():
    data = dual_arm_data()
    data["base"]["type"] = "fixed"
    with pytest.raises(ModelError, match="floating base"):
        SpaceRobot.from_model(model_from_dict(data))
    data = dual_arm_data()
    data["links"][1]["joint"] = {"name": "slide", "type": "prismatic", "axis": [0.0, 0.0, 1.0]}
    slide = SpaceRobot.from_model(model_from_dict(data)).links[1]
    assert slide.kind is JointKind.PRISMATIC and slide.ndof == 1 and slide.dof_names() == ["slide"]
    data = dual_arm_data()
    data["gravity"] = [0.0, 0.0, -9.81]
    with pytest.raises(ModelError, match="gravity"):
        SpaceRobot.from_model(model_from_dict(data))


def test_singular_inertias_are_rejected_with_the_body_named():
    data = dual_arm_data()
    data["base"]["inertia"] = [900.0, 900.0, 0.0]
    with pytest.raises(ModelError, match="base 'base'.*positive definite"):
        model_from_dict(data)
    data = dual_arm_data()  # a point mass on a spherical joint at its CoM: nothing resists the rotation
    data["links"][3].update(inertia=[0.0, 0.0, 0.0], com=[0.0, 0.0, 0.0])
    with pytest.raises(ModelError, match="arm2_link2.*singular"):
        SpaceRobot.from_model(model_from_dict(data))
    data = dual_arm_data()  # a thin rod spun about its own axis by a revolute joint
    data["links"][3].update(inertia=[5.144, 5.144, 0.0])
    data["links"][3]["joint"] = {"name": "arm2_joint2", "type": "revolute", "axis": [0.0, 0.0, 1.0]}
    with pytest.raises(ModelError, match="arm2_link2.*singular"):
        SpaceRobot.from_model(model_from_dict(data))


def test_a_model_without_arms_or_with_nan_is_rejected():
    data = dual_arm_data()
    data["links"] = []
    with pytest.raises(ModelError, match="links"):
        model_from_dict(data)
    data = dual_arm_data()
    data["links"][0]["mass"] = float("nan")
    with pytest.raises(ModelError, match="arm1_link1.*mass"):
        model_from_dict(data)


def test_bad_inputs_name_what_is_wrong(dual_arm):
    state = rest_state(dual_arm)
    with pytest.raises(InputError, match="unknown body 'arm3_link1'"):
        forward_dynamics(dual_arm, state, [ExternalLoad("arm3_link1", force=np.ones(3))])
    with pytest.raises(InputError, match="force must be 3 finite"):
        forward_dynamics(dual_arm, state, [ExternalLoad("base", force=np.array([1.0, np.nan, 0.0]))])
    bad = copy.copy(state)
    object.__setattr__(bad, "joint_rates", np.full(dual_arm.dof, np.nan))
    with pytest.raises(InputError, match="joint_rates"):
        forward_dynamics(dual_arm, bad)
    with pytest.raises(InputError, match="joint torques"):
        forward_dynamics(dual_arm, state, joint_torques=np.zeros(3))
