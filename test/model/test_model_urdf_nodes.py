"""The nodes on a robot nobody here wrote: discrete_robot_node runs the UR5 from its URDF file (the URDF's joint
names, its own robot_description with the meshes, tool0 on TF) and a min-time plan of trajectory_planner_node on
the same file, executed through FollowJointTrajectory, ends at its goal; the planner also takes the URDF as its
robot_description parameter."""

import numpy as np
import pytest

from discrete_robot.model.example_robots import example_robot_path

pytestmark = pytest.mark.ros

GOAL = [0.6, -1.2, 1.0, -0.5, 0.4, 0.3]


def _point(positions):
    from trajectory_msgs.msg import JointTrajectoryPoint

    return JointTrajectoryPoint(positions=list(positions))


def test_ur5_from_its_urdf_runs_publishes_its_description_and_tool0_and_executes_a_plan(ros):
    from discrete_robot_interfaces.srv import PlanTrajectory
    from sensor_msgs.msg import JointState
    from std_msgs.msg import String
    from tf2_msgs.msg import TFMessage

    from discrete_robot.nodes.common import LATCHED_QOS

    path = example_robot_path("ur5")
    text = path.read_text()
    simulator = ros.start("discrete_robot_node", params={"model_file": str(path), "time_step": 0.002,
                                                          "publish_rate": 50.0})
    planner = ros.start("trajectory_planner_node", params={"robot_description": text, "grid_points": 100})
    state = ros.wait_for_message("joint_states", JointState, timeout=60.0)
    assert list(state.name) == ["shoulder_pan_joint", "shoulder_lift_joint", "elbow_joint", "wrist_1_joint",
                                "wrist_2_joint", "wrist_3_joint"]
    description = ros.wait_for_message("robot_description", String, qos=LATCHED_QOS, timeout=10.0)
    assert description.data == text and "package://example-robot-data/robots/ur_description/meshes" in text
    static = ros.wait_for_message("/tf_static", TFMessage, qos=LATCHED_QOS, timeout=10.0,
                                  predicate=lambda m: any(t.child_frame_id == "tool0" for t in m.transforms))
    tool0 = next(t for t in static.transforms if t.child_frame_id == "tool0")
    assert tool0.header.frame_id == "wrist_3_link"
    assert [tool0.transform.translation.x, tool0.transform.translation.y, tool0.transform.translation.z] == \
        pytest.approx([0.0, 0.0823, 0.0], abs=1e-12)     # the file's wrist_3_link-tool0_fixed_joint origin

    ros.spin_until(lambda: ros.node.count_subscribers("joint_states") >= 2, 20.0)
    response = ros.call(PlanTrajectory, "plan_trajectory",
                        PlanTrajectory.Request(waypoints=[_point(GOAL)], method="min_time", execute=True),
                        timeout=240.0)
    assert response.success, f"{response.message}\n{ros.logs()}"
    assert response.execution_error_code == 0
    final = ros.wait_for_message("joint_states", JointState)
    error = np.abs(np.subtract(final.position, GOAL)).max()
    print(f"UR5 min-time plan of {response.duration:.2f} s executed; final error {error:.4f} rad")
    assert error < 0.02
    assert simulator.alive() and planner.alive()
