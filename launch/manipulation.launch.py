"""Simulated manipulation: the push_object action, the object following the arm's fingertip, its markers.

ros2 launch discrete_robot manipulation.launch.py [model_file:=...] [config_file:=...] [rviz:=true]
    [use_sim_time:=true]

Needs the arm's simulator (discrete_robot.launch.py with the same model_file): bringup.launch.py starts both.
"""

from launch import LaunchDescription
from launch_ros.actions import Node

from discrete_robot.ros.launch_support import common_arguments, node_parameters, rviz


def generate_launch_description():
    manipulation = Node(
        package="discrete_robot", executable="manipulation_node", name="manipulation_node", output="screen",
        parameters=node_parameters("model_file"),
    )
    return LaunchDescription([
        *common_arguments("manipulation.yaml", model_file="planar_2link.yaml"),
        manipulation,
        rviz(),
    ])
