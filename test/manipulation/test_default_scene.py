"""An arm without a scene file gets a table derived from its reach (manipulation.scene.default_scene)."""

import numpy as np
import pytest
import yaml

from discrete_robot.errors import InputError
from discrete_robot.geometry2d import to_world
from discrete_robot.manipulation.arm import ArmFinger
from discrete_robot.manipulation.scene import default_scene, scene_for
from discrete_robot.model.description import load_model, package_config_path
from discrete_robot.model.inverse_kinematics import ToolPoint, tool_pose


@pytest.mark.parametrize("name", ["planar_2link", "arm_6dof"])
def test_the_derived_table_is_in_reach_and_the_finger_is_ready_behind_the_object(name):
    model = load_model(package_config_path(f"{name}.yaml"))
    scene = default_scene(model)
    finger = ArmFinger.in_scene(model, scene)      # the node's own check: a spatial arm's tool points down
    tool = ToolPoint.on(model, model.fingertip.link, model.fingertip.offset)
    tip, _ = tool_pose(model, tool, scene.arm_ready_positions)
    # behind the object (-x), at the finger's height over the table
    assert tip[0] < scene.start_pose[0] - 0.05 and abs(tip[1] - scene.start_pose[1]) < 0.05
    assert tip[2] == pytest.approx(finger.height, abs=1e-6)
    # every corner of the table within the arm's reach: the sum of its link lengths bounds any point it reaches
    base = tool_pose(model, ToolPoint.on(model, model.links[0].name, [0.0, 0.0, 0.0]), np.zeros(model.dof))[0]
    lengths = sum(np.linalg.norm(link.joint.origin) for link in model.links[1:]) + np.linalg.norm(tool.offset)
    corners = np.array([[x, y] for x in scene.table.x for y in scene.table.y])
    assert np.all(np.linalg.norm(corners - base[:2], axis=1) <= lengths + 1e-9)
    assert scene.table.contains(to_world(scene.start_pose, scene.obj.footprint))


def test_an_arm_without_a_scene_file_gets_the_derived_one_and_one_without_a_fingertip_is_refused(tmp_path):
    document = yaml.safe_load(package_config_path("planar_2link.yaml").read_text())
    document["name"] = "my_new_arm"
    path = tmp_path / "my_new_arm.yaml"
    path.write_text(yaml.safe_dump(document))
    model = load_model(path)
    assert scene_for(model).table == default_scene(model).table
    document.pop("fingertip")
    path.write_text(yaml.safe_dump(document))
    with pytest.raises(InputError, match="no fingertip"):
        default_scene(load_model(path))
