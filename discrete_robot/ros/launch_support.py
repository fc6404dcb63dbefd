"""Launch actions shared by the files in launch/ (imported only by them: needs launch and launch_ros).

robot_state_publisher takes the URDF as a parameter, so it is generated here,
when the launch runs, from the same model file the simulator loads: the robot
RViz shows is always the robot that is simulated.
"""

import sys

from launch.actions import DeclareLaunchArgument, ExecuteProcess, OpaqueFunction
from launch.conditions import IfCondition, UnlessCondition
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.substitutions import FindPackageShare

PACKAGE = "discrete_robot"


def package_file(*parts: str) -> PathJoinSubstitution:
    """A file installed under share/discrete_robot."""
    return PathJoinSubstitution([FindPackageShare(PACKAGE), *parts])


def common_arguments(config_file: str, model_file: str | None = None) -> list[DeclareLaunchArgument]:
    """The arguments every capability launch file takes: config_file, use_sim_time, publish_tf, rviz (and
    model_file)."""
    arguments = [
        DeclareLaunchArgument("config_file", default_value=package_file("config", config_file),
                              description="YAML file with the node's parameters"),
        DeclareLaunchArgument("use_sim_time", default_value="false",
                              description="every node on /clock (the simulators publish it)"),
        DeclareLaunchArgument("publish_tf", default_value="false",
                              description="true: the simulator publishes every link's TF and robot_state_publisher "
                                          "is not started; false: robot_state_publisher does it"),
        DeclareLaunchArgument("rviz", default_value="false", description="start RViz with the shipped config"),
    ]
    if model_file is not None:
        arguments.append(DeclareLaunchArgument("model_file", default_value=package_file("config", model_file),
                                               description="robot model YAML (docs/model_format.md)"))
    return arguments


def node_parameters(*overrides: str) -> list:
    """The node's parameters: the config file, then use_sim_time and the named launch arguments on top."""
    values = {name: LaunchConfiguration(name) for name in ("use_sim_time", *overrides)}
    return [LaunchConfiguration("config_file"), values]


def simulator_parameters(*overrides: str) -> list:
    """A simulator's parameters: node_parameters plus publish_tf and the named launch arguments."""
    return node_parameters("publish_tf", *overrides)


def robot_state_publisher(namespace: str = "", frame_prefix: str = "") -> OpaqueFunction:
    """robot_state_publisher fed the URDF of the launch argument model_file, unless the simulator
    publishes the TF itself (launch argument publish_tf)."""

    def create(context):
        from discrete_robot.model.description import load_model
        from discrete_robot.model.sources import robot_description

        # a URDF or xacro model file: its own URDF (meshes and all); a YAML one: the URDF generated from it
        urdf = robot_description(load_model(LaunchConfiguration("model_file").perform(context)))
        return [Node(package="robot_state_publisher", executable="robot_state_publisher", namespace=namespace,
                     output="screen",
                     parameters=[{"robot_description": urdf, "frame_prefix": frame_prefix,
                                  "use_sim_time": LaunchConfiguration("use_sim_time")}],
                     condition=UnlessCondition(LaunchConfiguration("publish_tf")))]

    return OpaqueFunction(function=create)


def rviz() -> Node:
    """RViz with the shipped display config, when the launch argument rviz is true."""
    return Node(package="rviz2", executable="rviz2", output="screen",
                arguments=["-d", package_file("rviz", "discrete_robot.rviz")],
                parameters=[{"use_sim_time": LaunchConfiguration("use_sim_time")}],
                condition=IfCondition(LaunchConfiguration("rviz")))


def foxglove_arguments() -> list[DeclareLaunchArgument]:
    """``foxglove`` (serve every topic to Foxglove) and ``foxglove_port``."""
    return [DeclareLaunchArgument("foxglove", default_value="false",
                                  description="serve every topic over the Foxglove WebSocket protocol (live 3D view)"),
            DeclareLaunchArgument("foxglove_port", default_value="8765", description="its port on 127.0.0.1")]


def foxglove_bridge() -> ExecuteProcess:
    """discrete_robot.ros.foxglove_bridge (as ``bringup --foxglove``), when the launch argument foxglove is
    true."""
    return ExecuteProcess(cmd=[sys.executable, "-m", "discrete_robot.ros.foxglove_bridge",
                               "--port", LaunchConfiguration("foxglove_port")],
                          output="screen", condition=IfCondition(LaunchConfiguration("foxglove")))
