"""Trajectory planning on the discrete model: the plan_trajectory service, plans out on joint_trajectory.

ros2 launch discrete_robot trajectory_planner.launch.py [model_file:=...] [config_file:=...]
"""

from launch import LaunchDescription
from launch_ros.actions import Node

from discrete_robot.ros.launch_support import common_arguments, node_parameters, rviz


def generate_launch_description():
    planner = Node(
        package="discrete_robot", executable="trajectory_planner_node", name="trajectory_planner_node",
        output="screen", parameters=node_parameters("model_file"),
    )
    return LaunchDescription([
        *common_arguments("trajectory_planner.yaml", model_file="planar_2link.yaml"),
        planner,
        rviz(),
    ])
