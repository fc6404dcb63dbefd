"""A free-floating robot from URDF: a base with two arms, one of them branching (a tree), fixed links lumped;
its kinetic energy against the fixed-base dynamics of the same file, and momentum conserved in free motion; and
space_robot_node on the same URDF given as its robot_description. With prismatic joints (the satellite with
sliders, Baxter with its grippers): M(q) against Pinocchio's CRBA on the same URDF, momentum in free motion,
``space simulate`` and the node."""

import re
import subprocess
import sys
from dataclasses import replace

import numpy as np
import pytest

from discrete_robot.errors import ModelError
from discrete_robot.geometry3d import hat
from discrete_robot.model.dynamics import RigidBodySystem
from discrete_robot.model.example_robots import example_robot_path
from discrete_robot.model.urdf_reader import model_from_urdf
from discrete_robot.space.recursive import equation_terms, forward_dynamics, momentum_report
from discrete_robot.space.robot import JointKind, SpaceRobot
from discrete_robot.space.simulation import simulate
from discrete_robot.space.state import random_state, rest_state


def _link(name: str, mass: float, com: str, inertia: tuple[float, float, float]) -> str:
    ixx, iyy, izz = inertia
    return (f'<link name="{name}"><inertial><origin xyz="{com}" rpy="0.1 0.2 0.3"/><mass value="{mass}"/>'
            f'<inertia ixx="{ixx}" iyy="{iyy}" izz="{izz}" ixy="0" ixz="0" iyz="0"/></inertial></link>')


def _joint(name: str, kind: str, parent: str, child: str, xyz: str, rpy: str = "0 0 0", axis: str = "0 0 1") -> str:
    return (f'<joint name="{name}" type="{kind}"><parent link="{parent}"/><child link="{child}"/>'
            f'<origin xyz="{xyz}" rpy="{rpy}"/><axis xyz="{axis}"/></joint>')


#: base (with a fixed camera), arm "left" of three links, arm "right" of one link that carries two fingers
SATELLITE = "<robot name='satellite'>" + "".join([
    _link("bus", 200.0, "0.01 -0.02 0.03", (30.0, 40.0, 35.0)),
    _link("camera", 5.0, "0 0 0.05", (0.02, 0.02, 0.01)),
    _joint("camera_mount", "fixed", "bus", "camera", "0.5 0 0.5", "0 0.3 0"),
    _link("left_1", 8.0, "0.3 0 0", (0.05, 0.3, 0.3)),
    _joint("left_shoulder", "revolute", "bus", "left_1", "0.6 0.4 0", "0 0 0.2", "0 0 1"),
    _link("left_2", 6.0, "0.25 0 0", (0.04, 0.2, 0.2)),
    _joint("left_elbow", "continuous", "left_1", "left_2", "0.6 0 0", "0.3 0 0", "0 1 0"),
    _link("left_3", 2.0, "0.1 0 0", (0.01, 0.03, 0.03)),
    _joint("left_wrist", "revolute", "left_2", "left_3", "0.5 0 0", "0 0 0", "1 0 0"),
    _link("left_tool", 0.5, "0.02 0 0", (0.001, 0.001, 0.001)),
    _joint("left_tool_mount", "fixed", "left_3", "left_tool", "0.2 0 0"),
    _link("right_1", 7.0, "0.3 0 0", (0.05, 0.25, 0.25)),
    _joint("right_shoulder", "revolute", "bus", "right_1", "-0.6 -0.4 0", "0 0 3.0", "0 0 1"),
    _link("right_finger_a", 1.0, "0.1 0 0", (0.005, 0.01, 0.01)),
    _joint("right_a", "revolute", "right_1", "right_finger_a", "0.6 0.05 0", "0 0 0", "0 0 1"),
    _link("right_finger_b", 1.0, "0.1 0 0", (0.005, 0.01, 0.01)),
    _joint("right_b", "revolute", "right_1", "right_finger_b", "0.6 -0.05 0", "0 0 0", "0 1 0"),
]) + "</robot>"


_LIMIT = '<limit lower="-0.5" upper="0.5" effort="10" velocity="1"/></joint>'
#: the satellite with sliders: the left elbow (links hang below it) and a finger
SLIDER = SATELLITE.replace(
    _joint("left_elbow", "continuous", "left_1", "left_2", "0.6 0 0", "0.3 0 0", "0 1 0"),
    _joint("left_elbow", "prismatic", "left_1", "left_2", "0.6 0 0", "0.3 0 0", "0.6 0.8 0").replace("</joint>",
                                                                                                     _LIMIT),
).replace(
    _joint("right_b", "revolute", "right_1", "right_finger_b", "0.6 -0.05 0", "0 0 0", "0 1 0"),
    _joint("right_b", "prismatic", "right_1", "right_finger_b", "0.6 -0.05 0", "0.2 0 0", "0 1 0").replace("</joint>",
                                                                                                           _LIMIT))


def floating_baxter(with_world: bool = True, mimic: bool = False) -> str:
    """example-robot-data's Baxter without its fingers' <mimic> (each finger an independent prismatic joint; with
    ``mimic``, as it ships), hung from ``world`` by a floating joint (or, ``with_world=False``, its root ``base``
    as it is)."""
    text = example_robot_path("baxter").read_text()
    text = text if mimic else re.sub(r"<mimic[^>]*/>", "", text)
    if not with_world:
        return text
    floating = ('<link name="world"/><joint name="float" type="floating"><parent link="world"/>'
                '<child link="base"/></joint>')
    return re.sub(r"(<robot[^>]*>)", lambda m: m.group(1) + floating, text, count=1)


@pytest.fixture(scope="module")
def satellite() -> SpaceRobot:
    return SpaceRobot.from_model(model_from_urdf(SATELLITE, "satellite", floating_base=True))


def test_urdf_bodies_and_arms_keep_their_names(satellite):
    assert [link.name for link in satellite.links] == ["left_1", "left_2", "left_3", "right_1", "right_finger_a",
                                                       "right_finger_b"]
    assert len(satellite.arms) == 2 and len(satellite.arms[1]) == 3     # the right arm branches
    assert satellite.base_mass == pytest.approx(205.0)                   # the camera lumped into the bus
    assert satellite.total_mass == pytest.approx(205.0 + 8 + 6 + 2 + 0.5 + 7 + 1 + 1)


def test_kinetic_energy_with_the_base_at_rest_is_the_fixed_base_dynamics_of_the_same_file(satellite):
    """Base held at rest, joints moving: the space robot's T (its recursive kinematics) equals ½ q̇ᵀ M(q) q̇ of the
    same URDF as a fixed-base arm (the composite-rigid-body kernel), a second formulation."""
    fixed = RigidBodySystem(model_from_urdf(SATELLITE, "satellite"))
    rng = np.random.default_rng(0)
    for _ in range(3):
        q, qd = rng.uniform(-1.0, 1.0, satellite.dof), rng.uniform(-1.0, 1.0, satellite.dof)
        state = replace(rest_state(satellite), joint_angles=q, joint_rates=qd)
        expected = 0.5 * qd @ fixed.mass_matrix(q) @ qd
        assert momentum_report(satellite, state).kinetic_energy == pytest.approx(expected, rel=1e-12)


def test_free_motion_conserves_linear_and_angular_momentum(satellite):
    rng = np.random.default_rng(1)
    state = replace(rest_state(satellite), joint_rates=rng.uniform(-1.0, 1.0, satellite.dof),
                    base_angular_velocity=np.array([0.02, -0.01, 0.03]), base_velocity=np.array([0.01, 0.0, -0.02]))
    start = momentum_report(satellite, state)
    samples = simulate(satellite, state, duration=5.0, dt=0.01, times=np.linspace(0.0, 5.0, 6))
    for sample in samples:
        np.testing.assert_allclose(sample.momentum.linear, start.linear, rtol=0,
                                   atol=1e-10 * np.linalg.norm(start.linear))
        np.testing.assert_allclose(sample.momentum.angular, start.angular, rtol=0,
                                   atol=1e-10 * np.linalg.norm(start.angular))
    assert np.abs(samples[-1].joint_positions - samples[0].joint_positions).max() > 0.5   # the arms moved


def test_floating_base_needs_mass_and_takes_mimic_joints():
    massless = SATELLITE.replace('<mass value="200.0"/>', '<mass value="0"/>').replace(
        '<mass value="5.0"/>', '<mass value="0"/>')
    with pytest.raises(ModelError, match="link 'bus': a free-floating base needs a mass > 0"):
        model_from_urdf(massless, "satellite", floating_base=True)
    right_b = _joint("right_b", "revolute", "right_1", "right_finger_b", "0.6 -0.05 0", "0 0 0", "0 1 0")
    mimic = SATELLITE.replace(right_b, right_b.replace("</joint>", '<mimic joint="right_a"/></joint>'))
    robot = SpaceRobot.from_model(model_from_urdf(mimic, "satellite", floating_base=True))
    (relation,) = robot.mimic
    assert robot.links[relation.follower - 1].joint_name == "right_b" and relation.multiplier == 1.0
    assert robot.links[relation.leader - 1].joint_name == "right_a"


def test_space_simulate_takes_a_urdf(tmp_path):
    path = tmp_path / "satellite.urdf"
    path.write_text(SATELLITE)
    result = subprocess.run([sys.executable, "-m", "discrete_robot", "space", "simulate", "--config", str(path),
                             "--duration", "1", "--times", "0,1", "--json"], capture_output=True, text=True, check=True)
    assert '"robot": "satellite"' in result.stdout


@pytest.mark.ros
def test_space_robot_node_simulates_a_floating_base_urdf(ros):
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray, String
    from tf2_msgs.msg import TFMessage

    from discrete_robot.nodes.common import LATCHED_QOS

    ros.start("space_robot_node", params={"robot_description": SATELLITE, "publish_rate": 50.0, "time_step": 0.01})
    states = ros.wait_for_message("space_robot/joint_states", JointState, timeout=60.0)
    assert list(states.name) == ["left_shoulder", "left_elbow", "left_wrist", "right_shoulder", "right_a", "right_b"]
    description = ros.wait_for_message("space_robot/robot_description", String, qos=LATCHED_QOS, timeout=10.0)
    assert description.data == SATELLITE
    static = ros.wait_for_message("/tf_static", TFMessage, qos=LATCHED_QOS, timeout=10.0)
    assert {t.child_frame_id for t in static.transforms} >= {"space_robot/camera", "space_robot/left_tool"}

    ros.publish("space_robot/joint_torque_commands", Float64MultiArray(data=[5.0, -3.0, 1.0, 4.0, 0.5, -0.5]))
    moved = ros.wait_for_message("space_robot/joint_states", JointState, timeout=20.0,
                                 predicate=lambda m: np.abs(m.position).max() > 0.05)
    assert moved is not None
    momentum = ros.wait_for_message("space_robot/momentum", Float64MultiArray)
    assert momentum.data[6] > 0.0                                   # the arms move ...
    np.testing.assert_allclose(momentum.data[:6], 0.0, atol=1e-9)   # ... and the whole stays at zero momentum


@pytest.mark.filterwarnings("ignore::UserWarning")     # Baxter's meshes are not resolved, and need not be
@pytest.mark.parametrize("name", ["slider", "baxter"])
def test_mass_matrix_with_prismatic_joints_agrees_with_pinocchio(name, tmp_path):
    """M(q) of the floating model against pinocchio.crba with a free-flyer root on the same URDF. Pinocchio's base
    velocity is the base frame origin's, v_o (base frame); ours the base CoM's, V0 = v_o − [c0] ω0, so
    M_pinocchio = Pᵀ M P with P the map from its velocity to ours (and its joint order to ours)."""
    pin = pytest.importorskip("pinocchio")
    # urdfdom (Pinocchio's parser) wants limits on revolute joints; they do not enter M
    text = (SLIDER.replace('type="revolute">', 'type="revolute"><limit lower="-3" upper="3" effort="1" velocity="1"/>')
            if name == "slider" else floating_baxter(with_world=False))
    path = tmp_path / f"{name}.urdf"
    path.write_text(text)
    robot = SpaceRobot.from_model(model_from_urdf(text, name, floating_base=True))
    assert any(link.kind is JointKind.PRISMATIC for link in robot.links)
    pmodel = pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer())
    pdata = pmodel.createData()
    rng = np.random.default_rng(35)
    for _ in range(3):
        state = random_state(robot, rng)
        state = replace(state, joint_angles=rng.uniform(-0.5, 0.5, robot.angle_count))
        base_rotation = state.base_rotation()
        q = pin.neutral(pmodel)
        q[:3] = state.base_position - base_rotation @ robot.base_com
        w, x, y, z = state.base_orientation
        q[3:7] = [x, y, z, w]
        P = np.zeros((6 + robot.dof, pmodel.nv))
        P[:6, :6] = np.eye(6)
        P[:3, 3:6] = -hat(robot.base_com)
        for link in robot.links:
            joint = pmodel.joints[pmodel.getJointId(link.joint_name)]
            q[joint.idx_q] = state.joint_angles[link.angles][0]
            P[6 + link.rates.start, joint.idx_v] = 1.0
        theirs = pin.crba(pmodel, pdata, q)
        theirs = np.triu(theirs) + np.triu(theirs, 1).T
        ours = P.T @ equation_terms(robot, state).mass_matrix @ P
        assert np.abs(ours - theirs).max() <= 1e-8 * np.abs(theirs).max()


@pytest.fixture(scope="module")
def baxter() -> SpaceRobot:
    return SpaceRobot.from_model(model_from_urdf(floating_baxter(), "baxter"))


@pytest.fixture(scope="module")
def stock_baxter() -> SpaceRobot:
    """example-robot-data's Baxter as it ships, its fingers' <mimic> included, floating from ``world``."""
    return SpaceRobot.from_model(model_from_urdf(floating_baxter(mimic=True), "baxter"))


def _kkt_accelerations(robot: SpaceRobot, state, torques) -> np.ndarray:
    """u̇ of the tree with the mimic constraints u_f − m u_l = 0 as Lagrange multipliers, a second formulation of
    the folded equations: [[M, Cᵀ], [C, 0]] [u̇; λ] = [Q − h; 0] (the constraint is linear, so C u̇ = 0)."""
    terms = equation_terms(robot, state, joint_torques=torques)
    nu = terms.mass_matrix.shape[0]
    C = np.zeros((len(robot.mimic), nu))
    for row, m in enumerate(robot.mimic):
        C[row, 6 + robot.links[m.follower - 1].rates.start] = 1.0
        C[row, 6 + robot.links[m.leader - 1].rates.start] = -m.multiplier
    kkt = np.block([[terms.mass_matrix, C.T], [C, np.zeros((len(C), len(C)))]])
    rhs = np.concatenate([terms.generalized_forces - terms.bias, np.zeros(len(C))])
    return np.linalg.solve(kkt, rhs)[:nu]


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_stock_baxter_folds_its_mimic_fingers_as_the_constrained_tree_does(stock_baxter):
    """Issue 35: the fingers' <mimic> kept. The folded forward dynamics (Sᵀ M S ẋ = Sᵀ (Q − h)) equals the tree's
    with the mimic constraints as Lagrange multipliers (a KKT solve of the full M, h, Q), and the followers'
    accelerations are their leaders' times the multiplier (−1: the fingers close together)."""
    assert [(stock_baxter.links[m.follower - 1].joint_name, m.multiplier) for m in stock_baxter.mimic] == [
        ("r_gripper_r_finger_joint", -1.0), ("l_gripper_r_finger_joint", -1.0)]
    rng = np.random.default_rng(11)
    for _ in range(3):
        state = random_state(stock_baxter, rng, speed=0.5)
        torques = rng.uniform(-5.0, 5.0, stock_baxter.dof)     # a follower's own torque acts through its leader
        ours = forward_dynamics(stock_baxter, state, joint_torques=torques)
        theirs = _kkt_accelerations(stock_baxter, state, torques)
        assert np.abs(ours - theirs).max() <= 1e-9 * np.abs(theirs).max()
        for m in stock_baxter.mimic:
            f, leader = (6 + stock_baxter.links[b - 1].rates.start for b in (m.follower, m.leader))
            assert ours[f] == m.multiplier * ours[leader]


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_stock_baxter_floating_conserves_linear_momentum_with_mirrored_fingers(stock_baxter):
    rng = np.random.default_rng(7)
    state = replace(rest_state(stock_baxter), joint_rates=stock_baxter.followed(
        rng.uniform(-1.0, 1.0, stock_baxter.dof) * 0.5, offsets=False),
        base_velocity=np.array([0.02, -0.01, 0.03]), base_angular_velocity=np.array([0.0, 0.05, -0.02]))
    start = momentum_report(stock_baxter, state).linear
    samples = simulate(stock_baxter, state, duration=0.2, dt=0.01, times=np.array([0.0, 0.1, 0.2]))
    leader, follower = (stock_baxter.dof_names.index(n) for n in ("l_gripper_l_finger_joint",
                                                                  "l_gripper_r_finger_joint"))
    assert abs(samples[-1].joint_positions[leader] - samples[0].joint_positions[leader]) > 1e-3
    for sample in samples:
        assert sample.joint_positions[follower] == pytest.approx(-sample.joint_positions[leader], abs=1e-12)
        assert np.linalg.norm(sample.momentum.linear - start) <= 1e-10 * np.linalg.norm(start)


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_floating_baxter_conserves_linear_momentum_with_its_grippers_sliding(baxter):
    """Free motion, no gravity or loads: P is a first integral of the RKMK4 map (it integrates P itself), so it
    holds to round-off while the arms and the fingers move."""
    assert sum(link.kind is JointKind.PRISMATIC for link in baxter.links) == 4 and len(baxter.arms) == 3
    rng = np.random.default_rng(7)
    state = replace(rest_state(baxter), joint_rates=rng.uniform(-1.0, 1.0, baxter.dof) * 0.5,
                    base_velocity=np.array([0.02, -0.01, 0.03]), base_angular_velocity=np.array([0.0, 0.05, -0.02]))
    start = momentum_report(baxter, state).linear
    samples = simulate(baxter, state, duration=0.2, dt=0.01, times=np.array([0.0, 0.1, 0.2]))
    fingers = [baxter.dof_names.index(n) for n in ("l_gripper_l_finger_joint", "r_gripper_r_finger_joint")]
    assert np.abs(samples[-1].joint_positions[fingers] - samples[0].joint_positions[fingers]).min() > 1e-3
    for sample in samples:
        assert np.linalg.norm(sample.momentum.linear - start) <= 1e-10 * np.linalg.norm(start)


@pytest.mark.parametrize("mimic", [False, True])
def test_space_simulate_runs_floating_baxter(tmp_path, mimic):
    path = tmp_path / "baxter.urdf"
    path.write_text(floating_baxter(mimic=mimic))
    result = subprocess.run([sys.executable, "-W", "ignore", "-m", "discrete_robot", "space", "simulate", "--config",
                             str(path), "--duration", "0.05", "--times", "0,0.05", "--json"],
                            capture_output=True, text=True, check=True)
    assert '"robot": "baxter"' in result.stdout and '"r_gripper_r_finger"' in result.stdout


@pytest.mark.ros
def test_space_robot_node_takes_prismatic_joints(ros):
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray

    ros.start("space_robot_node", params={"robot_description": SLIDER, "publish_rate": 50.0, "time_step": 0.01})
    states = ros.wait_for_message("space_robot/joint_states", JointState, timeout=60.0)
    names = list(states.name)
    assert names == ["left_shoulder", "left_elbow", "left_wrist", "right_shoulder", "right_a", "right_b"]
    ros.publish("space_robot/joint_torque_commands", Float64MultiArray(data=[0.0, 20.0, 0.0, 0.0, 0.0, -5.0]))
    slid = ros.wait_for_message("space_robot/joint_states", JointState, timeout=20.0,
                                predicate=lambda m: abs(m.position[1]) > 0.01 and abs(m.position[5]) > 0.01)
    assert slid is not None                                         # both sliders moved (m)
    momentum = ros.wait_for_message("space_robot/momentum", Float64MultiArray)
    np.testing.assert_allclose(momentum.data[:6], 0.0, atol=1e-9)   # the whole stays at zero momentum
