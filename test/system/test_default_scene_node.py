"""manipulation_node runs an arm that has no scene file, on the scene derived from its reach (was FATAL)."""

import pytest
import yaml

pytestmark = pytest.mark.ros


def test_an_arm_without_a_scene_file_gets_the_derived_table(ros, tmp_path):
    from discrete_robot.manipulation.scene import default_scene
    from discrete_robot.model.description import load_model, package_config_path

    document = yaml.safe_load(package_config_path("planar_2link.yaml").read_text())
    document["name"] = "arm_without_a_scene"
    model_file = tmp_path / "arm_without_a_scene.yaml"
    model_file.write_text(yaml.safe_dump(document))
    node = ros.start("manipulation_node", params={"model_file": str(model_file)})
    # it publishes once the arm's joint_states arrive; its start-up line names the table it pushes on
    assert ros.spin_until(lambda: "pushing with" in node.log() or not node.alive(), 60.0), node.log()
    table = default_scene(load_model(model_file)).table
    assert node.alive(), node.log()
    assert f"table x {list(table.x)}, y {list(table.y)}" in node.log()
