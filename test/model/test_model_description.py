"""The YAML model format: shipped files, conventions of docs/model_format.md, and validation errors."""

import copy
import math
import subprocess
import sys

import numpy as np
import pytest
import yaml

from big_models import chain_urdf
from discrete_robot.errors import ModelError
from discrete_robot.model.description import JointType, load_model, model_from_dict, package_config_path


def test_planar_2link_file_is_the_two_uniform_rods(planar_2link):
    model = planar_2link
    assert model.dof == 2 and model.joint_names == ("joint1", "joint2")
    np.testing.assert_array_equal(model.gravity, [0.0, -9.81, 0.0])
    for link in model.links:
        assert link.mass == 1.0 and link.joint.type is JointType.REVOLUTE
        np.testing.assert_array_equal(link.joint.axes, [[0.0, 0.0, 1.0]])
        np.testing.assert_allclose(link.com, [0.5, 0.0, 0.0])
        np.testing.assert_allclose(link.tip, [1.0, 0.0, 0.0])
        # uniform thin rod of 1 m, 1 kg: m l^2 / 12 about the perpendicular axes through the CoM
        np.testing.assert_allclose(np.diag(link.inertia), [0.0, 1.0 / 12.0, 1.0 / 12.0])
    np.testing.assert_array_equal(model.effort_limits, [20.0, 10.0])
    assert model.parent_index == (-1, 0)
    assert model.chains_from_base() == [[0, 1]]


def test_arm_6dof_file_is_a_six_joint_3d_arm(arm_6dof):
    model = arm_6dof
    assert model.dof == 6 and len(model.links) == 6
    assert model.chains_from_base() == [list(range(6))]
    np.testing.assert_array_equal(model.gravity, [0.0, 0.0, -9.81])
    axes = np.array([link.joint.axes[0] for link in model.links])
    assert np.linalg.matrix_rank(axes) == 2  # z and y axes: a genuinely spatial arm, not planar
    assert np.all(model.lower <= model.initial_positions) and np.all(model.initial_positions <= model.upper)


def test_package_config_path_finds_the_shipped_files():
    assert package_config_path("planar_2link.yaml").is_file()
    assert package_config_path("arm_6dof.yaml").is_file()


def test_multi_dof_joints_tree_and_defaults(mixed_tree):
    model = mixed_tree
    assert model.joint_names == ("ja", "jb_0", "jb_1", "jb_2", "jc", "jd_0", "jd_1", "je")
    assert model.dof == 8
    assert [s.indices(8)[:2] for s in model.dof_slices] == [(0, 1), (1, 4), (4, 5), (5, 7), (7, 8)]
    assert model.parent_index == (-1, 0, 1, 0, -1)
    assert model.chains_from_base() == [[0, 1, 2, 3], [4]]
    np.testing.assert_array_equal(model.link("b").joint.axes, np.eye(3))  # spherical default: x, y, z
    # origin defaults to the parent's tip; tip defaults to 2 com
    np.testing.assert_array_equal(model.link("b").joint.origin, model.link("a").tip)
    np.testing.assert_array_equal(model.link("e").tip, [0.0, 0.0, -0.5])
    np.testing.assert_array_equal(model.lower[4], -0.5)
    assert math.isinf(model.velocity_limits[0]) and math.isinf(model.lower[0])
    with pytest.raises(ModelError, match="no link named 'zz'"):
        model.link("zz")


def test_inertia_forms_are_equivalent():
    def inertia(value):
        data = {"name": "r", "base": {"name": "b"}, "links": [
            {"name": "l", "parent": "b", "joint": {"name": "j", "type": "revolute"}, "mass": 1.0,
             "inertia": value}]}
        return model_from_dict(data).links[0].inertia

    full = [[0.3, 0.01, 0.02], [0.01, 0.25, 0.03], [0.02, 0.03, 0.2]]
    np.testing.assert_array_equal(inertia([0.3, 0.25, 0.2, 0.01, 0.02, 0.03]), full)
    np.testing.assert_array_equal(inertia([0.3, 0.25, 0.2]), np.diag([0.3, 0.25, 0.2]))


def test_load_model_reads_yaml_and_reports_bad_files(tmp_path, mixed_tree_data):
    path = tmp_path / "m.yaml"
    path.write_text(yaml.safe_dump(mixed_tree_data))
    assert load_model(path).joint_names[-1] == "je"
    with pytest.raises(ModelError, match="cannot be read"):
        load_model(tmp_path / "missing.yaml")
    path.write_text("name: [unclosed")
    with pytest.raises(ModelError, match="invalid YAML"):
        load_model(path)


def _set(data, link, path, value):
    target = data["links"][[item["name"] for item in data["links"]].index(link)]
    *keys, last = path
    for key in keys:
        target = target.setdefault(key, {})
    target[last] = value


INVALID = [
    # (link, field path, value, words the message must contain)
    ("a", ["mass"], -1.0, ["link 'a'", "mass"]),
    ("a", ["mass"], 0.0, ["link 'a'", "mass"]),
    ("b", ["mass"], float("nan"), ["link 'b'", "mass", "NaN"]),
    ("c", ["com"], [0.0, float("nan"), 0.0], ["link 'c'", "com", "NaN"]),
    ("c", ["inertia"], [[0.1, 0.02, 0.0], [0.0, 0.1, 0.0], [0.0, 0.0, 0.1]], ["link 'c'", "inertia", "symmetric"]),
    ("c", ["inertia"], [0.1, -0.1, 0.1], ["link 'c'", "inertia", "semi-definite"]),
    ("c", ["inertia"], [0.1, 0.1, 0.3], ["link 'c'", "inertia", "triangle"]),
    ("a", ["joint", "axis"], [0.0, 0.0, 2.0], ["link 'a'", "joint 'ja'", "axis", "unit"]),
    ("a", ["joint", "axis"], [0.0, 0.0, 0.0], ["link 'a'", "axis", "unit"]),
    ("d", ["joint", "axes"], [[0.0, 0.0, 1.0]], ["link 'd'", "axes", "shape"]),
    ("b", ["parent"], "nowhere", ["link 'b'", "parent 'nowhere'"]),
    ("b", ["parent"], "c", ["link 'b'", "parent 'c'"]),  # a later link: would close a cycle b -> c -> b
    ("b", ["parent"], "b", ["link 'b'", "cycle"]),
    ("c", ["name"], "a", ["link 'a'", "duplicate"]),
    ("d", ["joint", "name"], "ja", ["link 'd'", "joint name 'ja'"]),
    ("b", ["joint", "limits", "effort"], [1.0, 2.0], ["link 'b'", "limits.effort", "3 value"]),
    ("c", ["joint", "limits", "lower"], [0.6], ["link 'c'", "limits.lower", "exceeds"]),
    ("c", ["joint", "initial"], [0.7], ["link 'c'", "initial", "outside the limits"]),
    ("a", ["joint", "limits", "upper"], [float("nan")], ["link 'a'", "limits.upper", "NaN"]),
    ("a", ["joint", "type"], "hinge", ["link 'a'", "type"]),
    ("a", ["joint", "origin"], [0.0, 1.0], ["link 'a'", "origin", "shape"]),
    ("a", ["geometry"], {"type": "cone"}, ["link 'a'", "geometry.type"]),
    ("a", ["colour"], "red", ["unknown field", "colour"]),
    # finite but beyond physics: refused naming the field and the plausibility bound
    ("a", ["mass"], 1e308, ["link 'a'", "mass", "within ±1e+06 kg"]),
    ("c", ["com"], [0.0, 1e308, 0.0], ["link 'c'", "com", "within ±1000 m"]),
    ("a", ["tip"], [2e3, 0.0, 0.0], ["link 'a'", "tip", "within ±1000 m"]),
    ("a", ["joint", "origin"], [0.0, 0.0, -1e308], ["link 'a'", "joint 'ja'", "origin", "within ±1000 m"]),
    ("c", ["inertia"], [1e308, 1e308, 1e308], ["link 'c'", "inertia", "within ±1e+12 kg m²"]),
    ("a", ["geometry"], {"type": "sphere", "radius": 1e308}, ["link 'a'", "geometry.radius", "within ±1000 m"]),
]


@pytest.mark.parametrize(("link", "path", "value", "words"), INVALID, ids=[" ".join(map(str, c[1])) + f"={c[2]}"
                                                                             for c in INVALID])
def test_invalid_models_are_rejected_naming_link_and_field(mixed_tree_data, link, path, value, words):
    data = copy.deepcopy(mixed_tree_data)
    _set(data, link, path, value)
    with pytest.raises(ModelError) as error:
        model_from_dict(data)
    for word in words:
        assert word in str(error.value), str(error.value)


def test_invalid_model_level_fields(mixed_tree_data):
    data = copy.deepcopy(mixed_tree_data)
    data["gravity"] = [0.0, float("nan"), 0.0]
    with pytest.raises(ModelError, match="gravity.*NaN"):
        model_from_dict(data)
    data = copy.deepcopy(mixed_tree_data)
    data["links"] = []
    with pytest.raises(ModelError, match="links"):
        model_from_dict(data)
    with pytest.raises(ModelError, match="mapping"):
        model_from_dict([1, 2])


def test_floating_base_needs_positive_definite_inertia(mixed_tree_data):
    data = copy.deepcopy(mixed_tree_data)
    data["base"] = {"name": "base", "type": "floating", "mass": 100.0, "inertia": [10.0, 10.0, 0.0]}
    with pytest.raises(ModelError, match="base 'base'.*inertia.*positive definite"):
        model_from_dict(data)
    data["base"]["inertia"] = [10.0, 10.0, 10.0]
    data["base"]["mass"] = -5.0
    with pytest.raises(ModelError, match="base 'base'.*mass"):
        model_from_dict(data)
    data["base"]["mass"] = 100.0
    model = model_from_dict(data)
    assert model.base.floating and model.base.mass == 100.0


def test_a_fingertip_is_a_sphere_fixed_in_its_link_and_a_frame_of_the_urdf(arm_6dof, mixed_tree_data):
    from discrete_robot.model.inverse_kinematics import ToolPoint, tool_pose
    from discrete_robot.model.urdf import fixed_transforms, to_urdf

    tip = arm_6dof.fingertip
    assert tip.link == "wrist_3_link" and tip.radius == 0.01
    assert '<link name="fingertip">' in to_urdf(arm_6dof)
    (transform,) = [t for t in fixed_transforms(arm_6dof) if t.child == "fingertip"]
    assert transform.parent == "wrist_3_link"
    # straight down from the flange with the wrist pointing down: the finger is 13.23 cm below the wrist_3 frame
    q = [0.0, -math.pi / 2, math.pi / 2, -math.pi / 2, -math.pi / 2, 0.0]
    flange, _ = tool_pose(arm_6dof, ToolPoint.on(arm_6dof, "wrist_3_link", [0.0, 0.0, 0.0]), q)
    finger, _ = tool_pose(arm_6dof, ToolPoint.on(arm_6dof, tip.link, tip.offset), q)
    assert np.linalg.norm(finger - flange) == pytest.approx(0.1323)
    for fingertip, words in (({"link": "nowhere", "radius": 0.01}, "link must be one of"),
                             ({"link": "a", "radius": 0.0}, "radius must be > 0"),
                             ({"link": "a", "radius": 0.01, "shape": "cone"}, "unknown field")):
        data = copy.deepcopy(mixed_tree_data)
        data["fingertip"] = fingertip
        with pytest.raises(ModelError, match=words):
            model_from_dict(data)


def test_a_yaml_model_is_counted_before_it_is_built(tmp_path, mixed_tree_data):
    data = copy.deepcopy(mixed_tree_data)
    link = data["links"][0]
    data["links"] = [copy.deepcopy(dict(link, name=f"l{i}", parent=f"l{i - 1}" if i else "base",
                                        joint=dict(link["joint"], name=f"j{i}"))) for i in range(65)]
    path = tmp_path / "chain.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(ModelError, match=f"model file {path}: 65 joints need .* bytes per discrete step"):
        load_model(path)
    data["links"] = [{"name": f"l{i}"} for i in range(1001)]     # counted before any link is read
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(ModelError, match=f"model file {path}: 1001 links, more than the 1000 a model may have"):
        load_model(path)


def test_robot_description_text_has_the_model_file_limit():
    from discrete_robot.config_files import MAX_FILE_BYTES
    from discrete_robot.model.sources import robot_model

    with pytest.raises(ModelError, match=f"robot_description: larger than {MAX_FILE_BYTES} bytes"):
        robot_model(robot_description="<robot name='x'/>" + " " * MAX_FILE_BYTES)


def test_the_nodes_loader_refuses_a_10000_link_description_in_1_gb():
    """The node's loader (model/sources.py) with 1 GB of address space: refused from the count, nothing built."""
    code = ("import sys; from discrete_robot.model.sources import robot_model\n"
            "try:\n    robot_model(robot_description=sys.stdin.read())\n"
            "except Exception as error:\n    print(type(error).__name__, error)")
    result = subprocess.run(["bash", "-c", f'ulimit -v 1048576; exec "{sys.executable}" -c "$0"', code],
                            input=chain_urdf(10_000), capture_output=True, text=True, timeout=120)
    assert result.stdout.strip() == "ModelError robot_description: 10001 links, more than the 1000 a model may have", \
        result.stdout + result.stderr
