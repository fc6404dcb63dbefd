"""The discrete dynamic robot model: simulator, robot_state_publisher, optional RViz.

ros2 launch discrete_robot discrete_robot.launch.py [model_file:=...] [config_file:=...] [rviz:=true]
    [use_sim_time:=true] [publish_tf:=true] [scene_file:=default|/path/scene.yaml]
"""

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch_ros.actions import Node

from discrete_robot.ros.launch_support import common_arguments, robot_state_publisher, rviz, simulator_parameters


def generate_launch_description():
    simulator = Node(
        package="discrete_robot", executable="discrete_robot_node", name="discrete_robot_node", output="screen",
        parameters=simulator_parameters("model_file", "scene_file"),
        # robot_state_publisher owns robot_description here; the simulator's own copy stays available.
        remappings=[("robot_description", "discrete_robot/robot_description")],
    )
    return LaunchDescription([
        *common_arguments("discrete_robot.yaml", model_file="planar_2link.yaml"),
        DeclareLaunchArgument("scene_file", default_value="", description="table scene whose objects the "
                              "fingertip pushes: default = the arm's own, empty = none"),
        simulator,
        robot_state_publisher(),
        rviz(),
    ])
