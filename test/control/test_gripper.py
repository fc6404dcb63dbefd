"""The gripper action controllers (discrete_robot.control.gripper) on a simulated two-finger hand.

The hand: two prismatic fingers sliding horizontally (gravity does not act along them), the second a URDF mimic
of the first, so the leader carries both masses: under a force F from rest it accelerates at F / (m1 + m2).
Physics by the model's forward dynamics and a semi-implicit Euler step in the test; a closing finger meets an
inelastic stop the test imposes (held at the stop, its velocity zeroed)."""

import numpy as np
import pytest

from discrete_robot import dynamics
from discrete_robot.control.gripper import GripperActionController, GripperParameters
from discrete_robot.model.urdf_reader import model_from_urdf

M1, M2 = 0.12, 0.08           # kg, the fingers' masses
DT = 1e-3                     # s


def _link(name, mass):
    return (f'<link name="{name}"><inertial><mass value="{mass}"/>'
            '<inertia ixx="1e-4" iyy="1e-4" izz="1e-4" ixy="0" ixz="0" iyz="0"/></inertial></link>')


HAND = ('<robot name="hand"><link name="world"/>' + _link("palm", 0.5) + _link("left", M1) + _link("right", M2)
        + '<joint name="mount" type="fixed"><parent link="world"/><child link="palm"/></joint>'
        + '<joint name="finger_joint1" type="prismatic"><parent link="palm"/><child link="left"/>'
          '<axis xyz="0 1 0"/><limit lower="0" upper="0.04" effort="100" velocity="0.2"/></joint>'
        + '<joint name="finger_joint2" type="prismatic"><parent link="palm"/><child link="right"/>'
          '<axis xyz="0 -1 0"/><limit lower="0" upper="0.04" effort="100" velocity="0.2"/>'
          '<mimic joint="finger_joint1"/></joint></robot>')


@pytest.fixture(scope="module")
def hand():
    model = dynamics.build_model(model_from_urdf(HAND))
    return model, model.create_data()


def _run(hand, controller, q0, duration, stop=None):
    """Simulate until the goal ends or ``duration`` s; (t, q, v, efforts) at the end."""
    model, data = hand
    q, v, t, efforts = np.array([q0]), np.zeros(1), 0.0, []
    while t < duration and (controller.active_goal or not efforts):
        tau = controller.update(t, q, v)
        efforts.append(tau[0])
        a = dynamics.forward_dynamics(model, data, q, v, tau)
        v = v + a * DT
        q = q + v * DT
        if stop is not None and q[0] < stop:
            q, v = np.array([stop]), np.zeros(1)
        t += DT
    return t, q, v, np.array(efforts)


def test_the_leader_carries_its_mimic_follower(hand):
    """The effort on finger_joint1 moves both fingers: a = F / (m1 + m2) from rest."""
    model, data = hand
    a = dynamics.forward_dynamics(model, data, np.array([0.02]), np.zeros(1), np.array([5.0]))
    assert a[0] == pytest.approx(5.0 / (M1 + M2), rel=1e-9)


def test_a_free_finger_reaches_the_goal(hand):
    """The issue's case: goal 0.01 m, max_effort 20 N, goal_tolerance 0.001: reached_goal, and the fingers
    settle within 2 mm of 0.01 m (both: the follower is the leader's mimic with multiplier 1)."""
    controller = GripperActionController(0, GripperParameters(goal_tolerance=0.001, p=2000.0, d=25.0), 100.0)
    controller.activate(np.array([0.04]))
    controller.set_goal(0.0, 0.01, 20.0)
    t, q, _, efforts = _run(hand, controller, 0.04, 5.0)
    result = controller.result
    assert result is not None and (result.reached_goal, result.stalled, result.succeeded) == (True, False, True)
    assert abs(result.position - 0.01) < 0.001 and abs(q[0] - 0.01) < 0.001
    # the PD saturates at max_effort while far (2000 N/m x 0.03 m = 60 N > 20 N), never beyond it
    assert np.max(np.abs(efforts)) == pytest.approx(20.0) and efforts[0] == pytest.approx(-20.0)
    _, q_end, _, _ = _run(hand, controller, q[0], t + 1.0)
    assert abs(q_end[0] - 0.01) < 0.002


@pytest.mark.parametrize("allow_stalling", [False, True])
def test_a_blocked_finger_stalls_after_the_timeout(hand, allow_stalling):
    """Closing on an object at 0.02 m (goal 0.0): the finger stops there, pushes with max_effort, and after
    stall_timeout the goal ends stalled, not reached; it succeeds only with allow_stalling (upstream)."""
    parameters = GripperParameters(goal_tolerance=0.001, stall_timeout=0.5, allow_stalling=allow_stalling,
                                   p=2000.0, d=25.0)
    controller = GripperActionController(0, parameters, 100.0)
    controller.activate(np.array([0.04]))
    controller.set_goal(0.0, 0.0, 15.0)
    # free travel 0.02 m at most 15 N on 0.2 kg takes at least sqrt(2 * 0.02 / 75) = 0.023 s
    t, _, _, _ = _run(hand, controller, 0.04, 5.0, stop=0.02)
    result = controller.result
    assert result is not None
    assert (result.stalled, result.reached_goal, result.succeeded) == (True, False, allow_stalling)
    assert result.position == pytest.approx(0.02) and result.effort == pytest.approx(-15.0)
    assert 0.5 + 0.023 < t < 1.0


def test_the_default_max_effort_zero_means_the_joints_limit():
    """gripper_controllers' max_effort default is 0.0; a position-interface gripper still moves."""
    controller = GripperActionController(0, GripperParameters(p=1e4), effort_limit=100.0)
    controller.activate(np.array([0.04]))
    controller.set_goal(0.0, 0.0, 0.0)
    assert controller.update(0.0, np.array([0.04]), np.zeros(1))[0] == pytest.approx(-100.0)


def test_a_new_goal_preempts_and_a_cancel_holds():
    controller = GripperActionController(0, GripperParameters(max_effort=7.0, p=100.0, d=0.0))
    controller.activate(np.array([0.03]))
    controller.set_goal(0.0, 0.0, 50.0)
    controller.set_goal(0.1, 0.01, 50.0)
    assert controller.update(0.1, np.array([0.03]), np.zeros(1))[0] == pytest.approx(-2.0)
    controller.cancel(np.array([0.025]))
    assert not controller.active_goal and controller.limit() == 7.0
    assert controller.update(0.2, np.array([0.03]), np.zeros(1))[0] == pytest.approx(-0.5)


def test_the_parallel_variant_takes_one_position_and_its_effort():
    controller = GripperActionController(0, GripperParameters(max_effort=10.0))
    assert "exactly one value" in controller.set_parallel_goal(0.0, [0.01, 0.01])
    assert not controller.active_goal
    assert controller.set_parallel_goal(0.0, [0.01], [3.0]) is None
    assert (controller.position, controller.limit()) == (0.01, 3.0)
    assert controller.set_parallel_goal(0.0, [0.02]) is None and controller.limit() == 10.0
