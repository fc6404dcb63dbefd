"""The space robot's arms as joint_trajectory_controllers: MoveIt-style goals to each arm's
``<arm>_controller/follow_joint_trajectory``, JTC's rejection, preemption and cancel; torque-driven on the
free-floating base, so the system's momenta stay what they were while the arms move (the torques are internal;
with the arms reaching their targets and the momenta unchanged, the base must have reacted)."""

import numpy as np
import pytest

from jtc_goals import follow_joint_trajectory_goal as _goal
from jtc_goals import rest_to_rest_points

pytestmark = pytest.mark.ros

ARMS = {"arm1_link1_controller": [f"arm1_joint{j}_{k}" for j in (1, 2) for k in range(3)],
        "arm2_link1_controller": [f"arm2_joint{j}_{k}" for j in (1, 2) for k in range(3)]}


def test_each_arm_is_a_controller_and_the_momenta_stay_while_the_arms_execute(ros):
    from action_msgs.msg import GoalStatus
    from control_msgs.action import FollowJointTrajectory
    from control_msgs.msg import JointTrajectoryControllerState
    from discrete_robot_interfaces.srv import SetSimulationState
    from geometry_msgs.msg import Pose, Twist, Vector3
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray

    node = ros.start("space_robot_node", params={"time_step": 0.002, "publish_rate": 25.0})
    ros.wait_for_message("space_robot/joint_states", JointState, timeout=600.0)   # kernels may compile first
    # drifting and turning, so that both momenta are far from zero and "relative" means something
    request = SetSimulationState.Request(set_base=True, base_pose=Pose(), base_twist=Twist(
        linear=Vector3(x=0.05, y=-0.02, z=0.01), angular=Vector3(x=0.0, y=0.01, z=0.02)))
    request.base_pose.orientation.w = 1.0
    assert ros.call(SetSimulationState, "space_robot/simulation/set_state", request, timeout=300.0).success

    momenta = []
    ros.node.create_subscription(Float64MultiArray, "space_robot/momentum", lambda m: momenta.append(
        np.array(m.data[:6])), 100)
    ros.spin_until(lambda: len(momenta) > 2, 30.0)
    start = len(momenta) - 1

    targets = {"arm1_link1_controller": [0.3, -0.2, 0.1, 0.2, 0.0, -0.1],
               "arm2_link1_controller": [-0.2, 0.1, 0.2, 0.0, 0.3, 0.1]}
    handles = {}
    for name, joints in ARMS.items():
        order = list(reversed(range(6)))                          # joints in another order than the controller's
        handles[name] = ros.send_goal(FollowJointTrajectory, f"{name}/follow_joint_trajectory",
                                      _goal([joints[i] for i in order],
                                            rest_to_rest_points(np.zeros(6), np.array(targets[name])[order], 2.0)))
        assert handles[name].accepted
    for handle in handles.values():
        response = ros.goal_result(handle, 120.0)
        assert response.status == GoalStatus.STATUS_SUCCEEDED, response.result.error_string
        assert response.result.error_string.startswith("Goal successfully reached!")
    state = ros.wait_for_message("space_robot/joint_states", JointState)
    reached = dict(zip(state.name, state.position, strict=True))
    for name, joints in ARMS.items():
        np.testing.assert_allclose([reached[j] for j in joints], targets[name], atol=0.02)
    controller_state = ros.wait_for_message("arm2_link1_controller/controller_state", JointTrajectoryControllerState)
    assert list(controller_state.joint_names) == ARMS["arm2_link1_controller"]

    moved = np.array(momenta[start:])
    assert len(moved) > 25, "momenta sampled all along the motion"
    for part, columns in (("linear", slice(0, 3)), ("angular", slice(3, 6))):
        scale = np.linalg.norm(moved[0, columns])
        drift = np.abs(moved[:, columns] - moved[0, columns]).max()
        assert drift <= 1e-10 * scale, f"{part} momentum drifted {drift:.3g} (of {scale:.3g})"

    # JTC's rejection, preemption and cancel on one arm, with its codes and strings
    arm, joints = "arm1_link1_controller", ARMS["arm1_link1_controller"]
    action = f"{arm}/follow_joint_trajectory"
    assert not ros.send_goal(FollowJointTrajectory, action, _goal(joints[:3], [(1.0, [0.0] * 3)])).accepted
    assert not ros.send_goal(FollowJointTrajectory, action,
                             _goal(ARMS["arm2_link1_controller"], [(1.0, [0.0] * 6)])).accepted
    first = ros.send_goal(FollowJointTrajectory, action, _goal(joints, [(5.0, [0.0] * 6)]))
    ros.spin_until(lambda: False, 0.5)
    second = ros.send_goal(FollowJointTrajectory, action, _goal(joints, [(5.0, [0.1] * 6)]))
    preempted = ros.goal_result(first, 30.0)
    assert preempted.status == GoalStatus.STATUS_ABORTED
    assert preempted.result.error_string == "Current goal preempted by new incoming action."
    cancel = second.cancel_goal_async()
    assert ros.spin_until(cancel.done, 30.0) and cancel.result().goals_canceling
    assert ros.goal_result(second, 30.0).status == GoalStatus.STATUS_CANCELED
    assert node.alive()
