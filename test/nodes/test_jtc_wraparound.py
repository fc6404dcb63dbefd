"""joint_trajectory_controller on a URDF wheel (discrete_robot_node): angle wraparound, a continuous joint one turn
on from its goal moving the short way with its goal error the shortest angle (joint_trajectory_controller.cpp,
kilted, 90-116 and 1488-1500; trajectory.cpp 78-96); decelerate_on_cancel (cpp 136-172, 1847-1933)."""

import numpy as np
import pytest

pytestmark = pytest.mark.ros

#: one horizontal wheel (axis along gravity: no gravity torque), continuous
URDF = """<robot name="wheel"><link name="base"/>
  <joint name="wheel" type="continuous"><parent link="base"/><child link="disc"/><axis xyz="0 0 1"/>
    <limit effort="100" velocity="10"/></joint>
  <link name="disc"><inertial><origin xyz="0.2 0 0"/><mass value="1"/>
    <inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link></robot>"""


def test_a_continuous_joint_one_turn_on_goes_the_short_way_and_reaches_its_goal(ros, tmp_path):
    from action_msgs.msg import GoalStatus
    from control_msgs.action import FollowJointTrajectory
    from sensor_msgs.msg import JointState

    from jtc_goals import follow_joint_trajectory_goal

    path = tmp_path / "wheel.urdf"
    path.write_text(URDF)
    start = 2.0 * np.pi - 0.1                   # -0.1 rad, one turn on
    node = ros.start("discrete_robot_node", params={
        "model_file": str(path), "initial_positions": [start], "time_step": 0.002, "publish_rate": 50.0,
        "constraints.wheel.trajectory": 0.3, "constraints.wheel.goal": 0.01, "constraints.goal_time": 2.0})
    ros.wait_for_message("joint_states", JointState, timeout=30.0)
    # to 0.1 rad in 1 s: 0.2 rad forward; without wraparound the arm goes the long way, 6.08 rad back to 0.1 rad
    handle = ros.send_goal(FollowJointTrajectory, "joint_trajectory_controller/follow_joint_trajectory",
                           follow_joint_trajectory_goal(["wheel"], [(1.0, [0.1])]))
    assert handle.accepted
    response = ros.goal_result(handle, 60.0)
    assert response.status == GoalStatus.STATUS_SUCCEEDED, response.result.error_string
    final = ros.wait_for_message("joint_states", JointState, timeout=10.0)
    assert abs(final.position[0] - (2.0 * np.pi + 0.1)) < 0.02, "it moved 0.2 rad forward, one turn on"
    assert node.alive()


def test_a_cancel_with_decelerate_on_cancel_stops_the_wheel_at_its_deceleration(ros, tmp_path):
    from action_msgs.msg import GoalStatus
    from control_msgs.action import FollowJointTrajectory
    from sensor_msgs.msg import JointState

    from jtc_goals import follow_joint_trajectory_goal

    path = tmp_path / "wheel.urdf"
    path.write_text(URDF)
    node = ros.start("discrete_robot_node", params={
        "model_file": str(path), "initial_positions": [0.0], "time_step": 0.002, "publish_rate": 50.0,
        "constraints.decelerate_on_cancel": True, "constraints.wheel.max_deceleration_on_cancel": 0.25})
    states = []
    ros.node.create_subscription(JointState, "joint_states", states.append, 1000)
    ros.wait_for_message("joint_states", JointState, timeout=30.0)
    handle = ros.send_goal(FollowJointTrajectory, "joint_trajectory_controller/follow_joint_trajectory",
                           follow_joint_trajectory_goal(["wheel"], [(k, [k]) for k in range(1, 21)]))   # 1 rad/s
    assert handle.accepted
    assert ros.spin_until(lambda: states and states[-1].position[0] > 1.0, 60.0)
    cancel = handle.cancel_goal_async()
    assert ros.spin_until(cancel.done, 60.0)
    assert ros.goal_result(handle, 60.0).status == GoalStatus.STATUS_CANCELED
    # the cancel found the wheel after the last state at full speed; the stop takes |q̇|/a = 4 s of simulated time
    moving = [m for m in states if m.velocity[0] > 0.98][-1]
    stop = ros.seconds(moving.header.stamp) + 6.0
    ros.spin_until(lambda: ros.seconds(states[-1].header.stamp) >= stop, 120.0)
    rest = states[-1]
    # at 0.25 rad/s² the wheel stops q̇²/(2a) on from that state: 2 rad from 1 rad/s, 1.92 rad from 0.98 rad/s (the
    # state may already be in the ramp); holding instead would stop it within the tracking error, 2a in 1 rad
    travelled = rest.position[0] - moving.position[0]
    expected = moving.velocity[0] ** 2 / (2.0 * 0.25)
    assert abs(travelled - expected) < 0.05, (travelled, expected)
    assert abs(rest.velocity[0]) < 1e-2
    assert node.alive()
