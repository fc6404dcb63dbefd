"""The multi-arm free-floating space robot: simulator, robot_state_publisher (frames space_robot/*), RViz.

ros2 launch discrete_robot space_robot.launch.py [model_file:=...] [config_file:=...] [rviz:=true]
    [use_sim_time:=true] [publish_tf:=true] [publish_clock:=false]

publish_clock:=false makes the simulator follow another world's /clock (bringup.launch.py: the arm's).
"""

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch_ros.actions import Node

from discrete_robot.ros.launch_support import common_arguments, robot_state_publisher, rviz, simulator_parameters


def generate_launch_description():
    simulator = Node(
        package="discrete_robot", executable="space_robot_node", name="space_robot_node", output="screen",
        parameters=simulator_parameters("model_file", "publish_clock"),
        remappings=[("space_robot/robot_description", "space_robot/simulator/robot_description")],
    )
    return LaunchDescription([
        *common_arguments("space_robot.yaml", model_file="space_robot_dual_arm.yaml"),
        DeclareLaunchArgument("publish_clock", default_value="true",
                              description="publish /clock; false: follow the /clock another simulator publishes"),
        simulator,
        # In namespace space_robot it reads space_robot/joint_states and publishes space_robot/robot_description.
        robot_state_publisher(namespace="space_robot", frame_prefix="space_robot/"),
        rviz(),
    ])
