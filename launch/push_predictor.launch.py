"""Quasistatic pushing prediction: the predict_push / simulate_push services and their markers.

ros2 launch discrete_robot push_predictor.launch.py [config_file:=...] [rviz:=true]
"""

from launch import LaunchDescription
from launch_ros.actions import Node

from discrete_robot.ros.launch_support import common_arguments, node_parameters, rviz


def generate_launch_description():
    predictor = Node(
        package="discrete_robot", executable="push_predictor_node", name="push_predictor_node", output="screen",
        parameters=node_parameters(),
    )
    return LaunchDescription([*common_arguments("push_predictor.yaml"), predictor, rviz()])
