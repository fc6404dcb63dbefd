"""URDF in: real robot descriptions nobody here wrote (example-robot-data), checked against the independent
Newton–Euler recursion, analytic lumping, a hand-made mimic projection, T + V conservation and a URDF round trip;
bad files give one line naming the element and the field."""

import os
import re
import threading
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from big_models import chain_urdf
from discrete_robot import budget
from discrete_robot.discrete.simulation import FixedStepSimulation
from discrete_robot.errors import ModelError
from discrete_robot.model.description import load_model
from discrete_robot.model.dynamics import RigidBodySystem
from discrete_robot.model.example_robots import EXAMPLE_ROBOTS, example_robot_path
from discrete_robot.model.kinematics import forward_kinematics
from discrete_robot.model.mimic import expanded
from discrete_robot.model.sources import robot_description
from discrete_robot.model.urdf import link_poses, to_urdf
from discrete_robot.model.urdf_reader import MeshWarning, model_from_urdf

ROBOTS = sorted(EXAMPLE_ROBOTS)


@pytest.fixture(scope="module", params=ROBOTS)
def robot(request):
    return request.param, load_model(example_robot_path(request.param))


def _inside(model, rng) -> np.ndarray:
    lower, upper = np.maximum(model.lower, -np.pi), np.minimum(model.upper, np.pi)
    return lower + (upper - lower) * rng.uniform(size=model.dof)


def _newton_euler_mass_matrix(system, q) -> np.ndarray:
    n = system.dof
    bias = system.inverse_dynamics(q, np.zeros(n), np.zeros(n))
    return np.column_stack([system.inverse_dynamics(q, np.zeros(n), e) - bias for e in np.eye(n)])


def test_real_robots_load_with_their_joints(robot):
    name, model = robot
    expected_dof = {"ur5": 6, "panda": 8, "xarm7": 7, "z1": 7, "kinova": 6, "baxter": 17, "so101": 6}
    assert model.dof == expected_dof[name]
    assert model.urdf is not None and "<robot" in model.urdf
    assert {"panda": 1, "baxter": 2}.get(name, 0) == len(model.mimic)
    if name == "kinova":   # continuous joints are unlimited
        assert np.isinf(model.upper).sum() >= 3
    if name == "baxter":   # a tree: head and two arms hang from the base
        assert len(model.chains_from_base()) >= 3


def test_mass_matrix_and_gravity_agree_with_newton_euler(robot):
    _, model = robot
    system = RigidBodySystem(model)
    rng = np.random.default_rng(1)
    for _ in range(3):
        q = _inside(model, rng)
        M = system.mass_matrix(q)
        np.testing.assert_allclose(M, _newton_euler_mass_matrix(system, q), rtol=0, atol=1e-11 * np.abs(M).max())
        g = system.potential_gradient(q)
        np.testing.assert_allclose(g, system.bias_forces(q, np.zeros(model.dof)), rtol=0,
                                   atol=1e-11 * max(np.abs(g).max(), 1.0))
        assert np.linalg.eigvalsh(M).min() > 0.0


def test_energy_is_conserved_without_dissipation(robot):
    _, model = robot     # Panda and Baxter with their mimic fingers moving with the leaders
    system = RigidBodySystem(model)
    rng = np.random.default_rng(2)
    simulation = FixedStepSimulation(system, "discrete", 1e-3, _inside(model, rng), rng.uniform(-1.0, 1.0, model.dof))
    start = simulation.energy()
    simulation.step(300, np.zeros(model.dof))
    assert abs(simulation.energy() - start) <= 1e-9 * max(abs(start), 1.0)
    assert np.abs(simulation.qd).max() > 0.1   # it moved


def test_urdf_round_trip_keeps_the_dynamics(robot):
    _, model = robot
    again = model_from_urdf(to_urdf(model), "round trip")
    assert again.joint_names == model.joint_names
    rng = np.random.default_rng(3)
    first, second = RigidBodySystem(model), RigidBodySystem(again)
    for _ in range(3):
        q = _inside(model, rng)
        M, V = first.mass_matrix_and_potential(q)
        M2, V2 = second.mass_matrix_and_potential(q)
        np.testing.assert_allclose(M2, M, rtol=0, atol=1e-12 * np.abs(M).max())
        np.testing.assert_allclose(second.potential_gradient(q), first.potential_gradient(q), rtol=0, atol=1e-10)


def test_tf_in_the_urdf_tree_places_every_frame_as_the_bodies_do(robot):
    """The transforms published for TF follow the URDF's own tree (fixed links and all); composed from the root
    they give each link the world pose the model's bodies have (forward kinematics + frame_in_body)."""
    _, model = robot
    q = _inside(model, np.random.default_rng(4))
    poses = link_poses(model, q)
    full, S, c = expanded(model)      # the mimic followers' bodies too
    frames = forward_kinematics(full, S @ q + c)
    body_pose = {model.base.name: poses[model.base.name]}
    for i, link in enumerate(full.links):
        T = np.eye(4)
        T[:3, :3], T[:3, 3] = frames.rotations[i], frames.positions[i]
        body_pose[link.name] = poses[model.base.name] @ T
    for frame in model.frames:
        if frame.name == "world":
            continue
        T = np.eye(4)
        T[:3, :3], T[:3, 3] = frame.rotation, frame.origin
        np.testing.assert_allclose(poses[frame.name], body_pose[frame.body] @ T, atol=1e-12)
    for link in full.links:
        np.testing.assert_allclose(poses[link.name], body_pose[link.name], atol=1e-12)


# ----------------------------------------------------------------------------------------------- lumping, mimic

_PENDULUM = """<robot name="pendulum">
  <link name="base"/>
  <joint name="hinge" type="revolute">
    <parent link="base"/><child link="arm"/><axis xyz="0 0 1"/>
    <limit lower="-3" upper="3" effort="{effort}" velocity="2"/>
  </joint>
  <link name="arm">
    <inertial><origin xyz="0.5 0 0"/><mass value="2.0"/>
      <inertia ixx="0.01" iyy="0.02" izz="0.03" ixy="0" ixz="0" iyz="0"/></inertial>
  </link>
  <joint name="weld" type="fixed">
    <parent link="arm"/><child link="weight"/><origin xyz="1.0 0 0" rpy="0 0 0.7"/>
  </joint>
  <link name="weight">
    <inertial><origin xyz="0 0.2 0" rpy="0.3 0 0"/><mass value="3.0"/>
      <inertia ixx="0.05" iyy="0.05" izz="0.04" ixy="0" ixz="0" iyz="0"/></inertial>
  </link>
</robot>"""


def test_fixed_child_is_lumped_by_the_parallel_axis_theorem():
    """About a vertical hinge: I = Σ (I_zz,i about its own CoM, in world z) + m_i r_i²; the weight's inertia
    rotated by rpy 0.3 about x mixes its y and z moments: I_zz = 0.05 sin² 0.3 + 0.04 cos² 0.3."""
    model = model_from_urdf(_PENDULUM.format(effort=5))
    assert [frame.name for frame in model.frames] == ["weight"]
    weight_com = np.array([1.0, 0.0]) + np.array([[np.cos(0.7), -np.sin(0.7)], [np.sin(0.7), np.cos(0.7)]]) \
        @ np.array([0.0, 0.2])
    expected = 0.03 + 2.0 * 0.5**2 + 0.05 * np.sin(0.3) ** 2 + 0.04 * np.cos(0.3) ** 2 + 3.0 * (weight_com @ weight_com)
    M = RigidBodySystem(model).mass_matrix(np.array([0.4]))
    assert M[0, 0] == pytest.approx(expected, rel=1e-13)


def _without_mimic(text: str) -> str:
    return re.sub(r"<mimic[^>]*/>", "", text)


#: the <mimic multiplier> of the files' followers (offsets 0), read off the files by eye
MULTIPLIER = {"panda": 1.0, "baxter": -1.0}


@pytest.mark.parametrize("name", ["panda", "baxter"])
def test_mimic_fold_is_the_free_follower_projected_by_hand(name):
    """The follower as a free joint (its <mimic> removed), projected by a hand-written S: a = Sᵀ ā S, g = Sᵀ ḡ."""
    path = example_robot_path(name)
    model = load_model(path)
    free = model_from_urdf(_without_mimic(path.read_text()), "free followers", directory=path.parent)
    assert free.dof == model.dof + len(model.mimic)
    S = np.zeros((free.dof, model.dof))
    for row, joint in enumerate(free.joint_names):
        leader = next((m.leader for m in model.mimic if m.link.joint.name == joint), joint)
        S[row, model.joint_names.index(leader)] = MULTIPLIER[name] if leader != joint else 1.0
    q = _inside(model, np.random.default_rng(5))
    folded, unfolded = RigidBodySystem(model), RigidBodySystem(free)
    M_free = unfolded.mass_matrix(S @ q)
    np.testing.assert_allclose(folded.mass_matrix(q), S.T @ M_free @ S, rtol=0, atol=1e-14 * np.abs(M_free).max())
    np.testing.assert_allclose(folded.potential_gradient(q), S.T @ unfolded.potential_gradient(S @ q), atol=1e-12)
    fingers = [model.joint_names.index(m.leader) for m in model.mimic]
    assert np.all(np.diag(folded.mass_matrix(q))[fingers] > np.diag(M_free)[fingers])   # the follower's mass


# ----------------------------------------------------------------------------------------------- bad files


def _bad(replace: tuple[str, str]) -> str:
    old, new = replace
    assert old in _PENDULUM
    return _PENDULUM.replace(old, new)


@pytest.mark.parametrize(("text", "message"), [
    (_PENDULUM.format(effort=-1), "joint 'hinge': <limit effort> must be >= 0, got -1"),
    (_bad(('ixx="0.05" iyy="0.05" izz="0.04" ixy="0"', 'ixx="0.05" iyy="0.05" izz="0.04" ixy="0.2"')).format(effort=1),
     "link 'weight': inertia: is not positive semi-definite"),
    (_bad(('<parent link="arm"/>', '<parent link="hand"/>')).format(effort=1),
     "joint 'weld': <parent link> 'hand' is not a link of the robot"),
    (_bad(('<link name="base"/>', '<link name="base"/><link name="spare"/>')).format(effort=1),
     "links ['base', 'spare'] have no parent joint (two roots)"),
    (_bad(('</robot>', '<joint name="loop" type="fixed"><parent link="weight"/><child link="arm"/></joint></robot>'))
     .format(effort=1), "link 'arm': child of two joints, 'hinge' and 'loop'"),
    (_bad(('</limit>' if False else '<limit lower="-3"', '<mimic joint="elbow"/><limit lower="-3"')).format(effort=1),
     "joint 'hinge': <mimic>: <mimic joint> 'elbow' is not a movable joint of the robot"),
    (_bad(('type="fixed"', 'type="planar"')).format(effort=1), "joint 'weld': planar joints are not supported"),
    (_bad(('<mass value="2.0"/>', '<mass value="-2.0"/>')).format(effort=1),
     "link 'arm': <inertial>: <mass value> must be >= 0, got -2"),
    (_bad(('<axis xyz="0 0 1"/>', '<axis xyz="0 0 one"/>')).format(effort=1),
     "joint 'hinge': <axis xyz> expected 3 number(s), got '0 0 one'"),
    (_bad(('<mass value="2.0"/>', '<mass value="0.0"/>')).replace('<mass value="3.0"/>', '<mass value="0"/>')
     .replace('izz="0.03"', 'izz="0"').replace('ixx="0.01" iyy="0.02"', 'ixx="0" iyy="0"')
     .replace('ixx="0.05" iyy="0.05" izz="0.04"', 'ixx="0" iyy="0" izz="0"').format(effort=1),
     "link 'arm': massless, and so is everything joint 'hinge' moves"),
    ("<robot name='x'><link name='a'>", "robot_description: invalid XML"),
])
def test_bad_files_get_one_line_naming_element_and_field(text, message):
    with pytest.raises(ModelError) as error:
        model_from_urdf(text)
    assert message in str(error.value)
    assert "\n" not in str(error.value)


_MIMIC = ('type="fixed">', 'type="revolute"><axis xyz="0 0 1"/><mimic joint="hinge" {}/>')


@pytest.mark.parametrize(("replace", "message"), [
    (('<origin xyz="1.0 0 0"', '<origin xyz="1e308 0 0"'), "joint 'weld': <origin xyz>: must be within ±1000 m"),
    (('<origin xyz="0.5 0 0"/>', '<origin xyz="0.5 -2e3 0"/>'),
     "link 'arm': <inertial>: <origin xyz>: must be within ±1000 m"),
    (('<mass value="2.0"/>', '<mass value="1e308"/>'),
     "link 'arm': <inertial>: <mass value>: must be within ±1e+06 kg"),
    (('ixx="0.01" iyy="0.02" izz="0.03"', 'ixx="1e308" iyy="1e308" izz="1e308"'),
     "link 'arm': inertia: must be within ±1e+12 kg m²"),
    ((_MIMIC[0], _MIMIC[1].format('multiplier="1e308"')),
     "joint 'weld': <mimic>: <mimic multiplier>: must be within ±1000"),
    ((_MIMIC[0], _MIMIC[1].format('offset="-1e308"')),
     "joint 'weld': <mimic>: <mimic offset>: must be within ±1000 rad or m"),
])
def test_implausible_numbers_are_refused_naming_the_element_and_the_bound(replace, message):
    """Finite but beyond physics (a 1e308 mass, origin or mimic multiplier overflows M(q) to nan): refused at
    load, like pushing's 1 km footprint bound."""
    with pytest.raises(ModelError) as error:
        model_from_urdf(_bad(replace).format(effort=1))
    assert message in str(error.value) and "\n" not in str(error.value), str(error.value)


_HOSTILE = st.sampled_from([1e308, -1e308, 1e300, 1e12, 2e3, 1e3, 1.0, 1e-300, 5e-324, 0.0])


@settings(max_examples=60, deadline=None)
@given(mass=_HOSTILE, origin=_HOSTILE, com=_HOSTILE, inertia=_HOSTILE, multiplier=_HOSTILE)
def test_any_number_is_refused_in_one_line_or_gives_a_finite_mass_matrix(mass, origin, com, inertia, multiplier):
    """Before the bounds, a 1e308 mass or origin passed the finiteness check and M(q) came out nan."""
    text = _bad((_MIMIC[0], _MIMIC[1].format(f'multiplier="{multiplier!r}"'))).format(effort=1) \
        .replace('<mass value="2.0"/>', f'<mass value="{abs(mass)!r}"/>') \
        .replace('<origin xyz="1.0 0 0"', f'<origin xyz="{origin!r} 0 0"') \
        .replace('<origin xyz="0.5 0 0"/>', f'<origin xyz="{com!r} 0 0"/>') \
        .replace('izz="0.03"', f'izz="{abs(inertia)!r}"')
    try:
        model = model_from_urdf(text)
    except ModelError as error:
        assert "\n" not in str(error)
        return
    assert np.all(np.isfinite(RigidBodySystem(model).mass_matrix(np.array([0.3]))))


def test_a_mimic_within_the_bounds_still_loads():
    model = model_from_urdf(_bad((_MIMIC[0], _MIMIC[1].format('multiplier="-2.5" offset="0.1"'))).format(effort=1))
    assert (model.mimic[0].multiplier, model.mimic[0].offset) == (-2.5, 0.1)


def test_a_bidirectional_override_in_a_name_reaches_the_message_escaped():
    text = _bad(('<parent link="arm"/>', '<parent link="ar\u202em"/>')).format(effort=1)
    with pytest.raises(ModelError) as error:
        model_from_urdf(text)
    assert "'ar\\u202em' is not a link" in str(error.value) and "\u202e" not in str(error.value)


def test_model_size_is_counted_from_the_file_before_the_model_is_built():
    assert model_from_urdf(chain_urdf(64)).dof == 64
    with pytest.raises(ModelError, match=r"65 joints need 2.86e\+08 bytes per discrete step, more than the "
                                         r"2.68e\+08 a step may use \(16 n\^4 bytes: at most 64 joints\)"):
        model_from_urdf(chain_urdf(65))
    fixed = chain_urdf(1).replace("</robot>", "".join(
        f'<link name="f{i}"/><joint name="w{i}" type="fixed"><parent link="l1"/><child link="f{i}"/></joint>'
        for i in range(1000)) + "</robot>")
    with pytest.raises(ModelError, match="robot_description: 1002 links, more than the 1000 a model may have"):
        model_from_urdf(fixed)


def test_unresolvable_mesh_is_a_warning_not_an_error():
    text = _PENDULUM.format(effort=1).replace(
        '<link name="arm">', '<link name="arm"><visual><geometry><mesh filename="package://nowhere/arm.stl"/>'
        '</geometry></visual>')
    with pytest.warns(MeshWarning, match="link 'arm': <mesh filename> 'package://nowhere/arm.stl'"):
        model = model_from_urdf(text)
    assert model.urdf == text


def test_example_meshes_resolve():
    with warnings.catch_warnings():
        warnings.simplefilter("error", MeshWarning)
        load_model(example_robot_path("ur5"))


def test_xacro_arguments_pass_through(tmp_path):
    xacro_text = """<robot name="xbot" xmlns:xacro="http://www.ros.org/wiki/xacro">
      <xacro:arg name="arm_mass" default="1.0"/>
      <link name="base"/>
      <joint name="hinge" type="continuous"><parent link="base"/><child link="arm"/><axis xyz="0 0 1"/></joint>
      <link name="arm"><inertial><origin xyz="0.5 0 0"/><mass value="$(arg arm_mass)"/>
        <inertia ixx="0" iyy="0" izz="0" ixy="0" ixz="0" iyz="0"/></inertial></link>
    </robot>"""
    path = tmp_path / "xbot.urdf.xacro"
    path.write_text(xacro_text)
    assert load_model(path).links[0].mass == 1.0
    model = load_model(path, xacro_args={"arm_mass": 4.0})
    assert model.links[0].mass == 4.0
    assert RigidBodySystem(model).mass_matrix(np.zeros(1))[0, 0] == pytest.approx(4.0 * 0.25)


_XACRO = """<robot name="xbot" xmlns:xacro="http://www.ros.org/wiki/xacro">{}
  <link name="base"/>
  <joint name="hinge" type="continuous"><parent link="base"/><child link="arm"/><axis xyz="0 0 1"/></joint>
  <link name="arm"><inertial><origin xyz="0.5 0 0"/><mass value="${{mass}}"/>
    <inertia ixx="0" iyy="0" izz="0" ixy="0" ixz="0" iyz="0"/></inertial></link>
</robot>"""


def test_xacro_includes_regular_files_and_refuses_a_fifo_or_a_device(tmp_path):
    (tmp_path / "mass.xacro").write_text('<robot xmlns:xacro="http://www.ros.org/wiki/xacro">'
                                          '<xacro:property name="mass" value="3.0"/></robot>')
    path = tmp_path / "robot.urdf.xacro"
    path.write_text(_XACRO.format('<xacro:include filename="mass.xacro"/>'))
    assert load_model(path).links[0].mass == 3.0
    os.mkfifo(tmp_path / "fifo")
    for name, reason in (("fifo", "a FIFO"), ("/dev/zero", "a character device")):
        path.write_text(_XACRO.format(f'<xacro:include filename="{name}"/>'))
        with pytest.raises(ModelError) as error:      # the child never opens it: no writer, no hang
            load_model(path)
        assert str(error.value).startswith(f"xacro file {path}: included file ") and reason in str(error.value)


def test_env_is_allowed_and_its_value_is_in_the_published_urdf(tmp_path, monkeypatch):
    """As the xacro command: $(env ...) expands (docs/model_format.md says its value is published)."""
    monkeypatch.setenv("ARM_MASS_FOR_TEST", "2.5")
    path = tmp_path / "env.urdf.xacro"
    path.write_text(_XACRO.format('<xacro:property name="mass" value="$(env ARM_MASS_FOR_TEST)"/>'))
    model = load_model(path)
    assert model.links[0].mass == 2.5 and '<mass value="2.5"/>' in robot_description(model)


def test_a_stopping_process_ends_a_runaway_xacro_expansion(tmp_path):
    path = tmp_path / "runaway.urdf.xacro"
    path.write_text(_XACRO.format('<xacro:property name="mass" value="${9**9**9}"/>'))
    stop = threading.Timer(0.5, budget.STOP.set)     # as a node's SIGINT handler sets it
    stop.start()
    try:
        with pytest.raises(ModelError, match=r"runaway.urdf.xacro: expansion stopped \(the process is stopping\)"):
            load_model(path)
    finally:
        stop.cancel()
        budget.STOP.clear()


def test_a_xacro_expression_that_allocates_without_bound_names_the_memory_limit(tmp_path):
    path = tmp_path / "huge.urdf.xacro"
    path.write_text(_XACRO.format('<xacro:property name="mass" value="${len(\'x\' * 10 ** 10)}"/>'))
    with pytest.raises(ModelError, match=r"huge.urdf.xacro: expansion needs more than the memory limit of 1024 MB"):
        load_model(path)


def test_floating_joint_from_world_makes_a_floating_base():
    text = _PENDULUM.format(effort=1).replace('<link name="base"/>', '''<link name="world"/>
      <joint name="free" type="floating"><parent link="world"/><child link="base"/></joint>
      <link name="base"><inertial><mass value="10"/>
        <inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial></link>''')
    model = model_from_urdf(text)
    assert model.base.floating and model.base.name == "base"
    np.testing.assert_array_equal(model.gravity, np.zeros(3))


def test_ros2_control_tags_name_the_command_interfaces():
    control = ('<ros2_control name="arm" type="system"><hardware><plugin>mock_components/GenericSystem</plugin>'
               '</hardware><joint name="hinge"><command_interface name="position"/><command_interface name="effort"/>'
               '<state_interface name="position"/></joint></ros2_control></robot>')
    model = model_from_urdf(_PENDULUM.format(effort=1).replace("</robot>", control))
    assert model.command_interfaces == (("hinge", ("position", "effort")),)
    with pytest.raises(ModelError, match="<ros2_control> <joint name> 'elbow' is not a movable joint"):
        model_from_urdf(_PENDULUM.format(effort=1).replace("</robot>", control.replace('"hinge"', '"elbow"')))
