"""SRDF group_state start poses and the clamped start (discrete_robot.model.srdf)."""

import numpy as np
import pytest

from discrete_robot.errors import ModelError
from discrete_robot.model.srdf import group_states, load_group_state, start_pose

# The layout panda_moveit_config's panda_arm.xacro gives its "ready" pose (values written here by hand).
SRDF = """<?xml version="1.0"?>
<robot name="panda">
  <group name="panda_arm"><chain base_link="panda_link0" tip_link="panda_link8"/></group>
  <group_state name="ready" group="panda_arm">
    <joint name="panda_joint1" value="0"/>
    <joint name="panda_joint2" value="-0.785"/>
    <joint name="panda_joint4" value="-2.356"/>
  </group_state>
  <group_state name="open" group="hand">
    <joint name="panda_finger_joint1" value="0.035"/>
  </group_state>
</robot>"""


def test_group_states_are_read_in_file_order():
    ready, hand = group_states(SRDF)
    assert (ready.name, ready.group, ready.values) == (
        "ready", "panda_arm", {"panda_joint1": 0.0, "panda_joint2": -0.785, "panda_joint4": -2.356})
    assert (hand.name, hand.group, hand.values) == ("open", "hand", {"panda_finger_joint1": 0.035})


def test_load_group_state_by_name_and_unknown_name_lists_the_known(tmp_path):
    path = tmp_path / "panda.srdf"
    path.write_text(SRDF)
    assert load_group_state(path, "open").values == {"panda_finger_joint1": 0.035}
    with pytest.raises(ModelError, match="no group_state 'extended' .*has: open, ready"):
        load_group_state(path, "extended")


@pytest.mark.parametrize("text, message", [
    ("<robot", "invalid XML"),
    ("<srdf/>", "root element is <srdf>"),
    ('<robot><group_state name="a"/></robot>', "needs both name and group"),
    ('<robot><group_state name="a" group="g"><joint name="j" value="x"/></group_state></robot>',
     "joint 'j' <value> must be one number, got 'x'"),
    ('<robot><group_state name="a" group="g"><joint name="j" value="nan"/></group_state></robot>', "finite"),
    ('<robot><group_state name="a" group="g"><joint name="j" value="1"/><joint name="j" value="2"/>'
     '</group_state></robot>', "'j' is given twice"),
])
def test_bad_srdf_is_one_line_naming_the_field(text, message):
    with pytest.raises(ModelError, match=message):
        group_states(text)


def test_an_entity_expansion_bomb_is_refused():
    """expat (>= 2.4) stops amplified entity expansion; the reader turns it into one ModelError line."""
    bomb = ('<?xml version="1.0"?><!DOCTYPE r [<!ENTITY a "aaaaaaaaaa">'
            + "".join(f'<!ENTITY {b} "{("&" + a + ";") * 10}">' for a, b in zip("abcdefgh", "bcdefghi", strict=True))
            + ']><robot><group_state name="&i;" group="g"/></robot>')
    with pytest.raises(ModelError, match="invalid XML"):
        group_states(bomb)


def test_start_pose_sets_by_name_and_clamps_with_a_warning_naming_the_joint():
    # panda_joint4's limits are [-3.0718, -0.0698]: its zero start is outside and clamped to the upper limit
    joints = ["panda_joint1", "panda_joint4", "panda_joint6"]
    lower, upper = np.array([-2.8973, -3.0718, -0.0175]), np.array([2.8973, -0.0698, 3.7525])
    pose = start_pose(joints, lower, upper, np.zeros(3), {"panda_joint1": 0.5, "panda_joint6": 5.0})
    np.testing.assert_array_equal(pose.positions, [0.5, -0.0698, 3.7525])
    assert len(pose.warnings) == 2
    assert pose.warnings[0].startswith("initial_positions: panda_joint4 = 0 is outside its limits [-3.0718, -0.0698]")
    assert "panda_joint6 = 5" in pose.warnings[1] and pose.warnings[1].endswith("it starts at 3.7525")
    inside = start_pose(joints, lower, upper, np.zeros(3), {"panda_joint4": -1.0})
    assert inside.warnings == [] and inside.positions[1] == -1.0


def test_start_pose_refuses_a_name_that_is_no_joint():
    with pytest.raises(ModelError, match="'panda_joint9' is not a joint of the model \\(joints: a, b\\)"):
        start_pose(["a", "b"], [-1, -1], [1, 1], [0, 0], {"panda_joint9": 0.0})
