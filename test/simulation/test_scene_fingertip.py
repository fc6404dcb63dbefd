"""The compiled fingertip kernel against the tree's numpy kinematics (a second formulation: 4×4 transforms composed
in the world, CoM Jacobians shifted to the tool point) and against central differences of its own position."""

import numpy as np
import pytest

from discrete_robot.manipulation.arm import ArmFinger
from discrete_robot.manipulation.scene import load_scene
from discrete_robot.model.description import load_model, package_config_path
from discrete_robot.model.inverse_kinematics import tool_jacobian, tool_pose
from discrete_robot.simulation.fingertip import Fingertip


@pytest.mark.parametrize("name", ["planar_2link", "arm_6dof"])
def test_fingertip_matches_numpy_kinematics_and_differences(name):
    model = load_model(package_config_path(f"{name}.yaml"))
    arm = ArmFinger.in_scene(model, load_scene(package_config_path(f"table_scene_{name}.yaml")))
    fingertip = Fingertip(model, arm.tool)
    rng = np.random.default_rng(7)
    for _ in range(5):
        q = rng.uniform(model.lower, model.upper)
        np.testing.assert_allclose(fingertip.position(q), tool_pose(model, arm.tool, q)[0], rtol=0, atol=1e-14)
        jacobian = fingertip.jacobian(q).copy()
        np.testing.assert_allclose(jacobian, tool_jacobian(model, arm.tool, q)[2], rtol=0, atol=1e-14)
        h = 1e-6
        for k in range(model.dof):
            step = np.zeros(model.dof)
            step[k] = h
            difference = (fingertip.position(q + step).copy() - fingertip.position(q - step)) / (2 * h)
            np.testing.assert_allclose(jacobian[:, k], difference, rtol=0, atol=1e-8)
