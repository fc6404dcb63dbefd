"""The whole system: every capability launch file, one RViz.

ros2 launch discrete_robot bringup.launch.py [model_file:=...] [rviz:=true] [use_sim_time:=false]
    [publish_tf:=false] [foxglove:=true] [foxglove_port:=8765]

The planner, the simulator and the manipulation node load the same arm model (model_file), so the
planner -> joint_trajectory -> simulator -> joint_states -> robot_state_publisher
-> RViz chain is consistent. One clock: the arm's simulator publishes /clock and
the space robot's follows it (publish_clock:=false). Each include runs in its own
scope: their config_file arguments do not leak into each other.
"""

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, GroupAction, IncludeLaunchDescription
from launch.substitutions import LaunchConfiguration

from discrete_robot.ros.launch_support import foxglove_arguments, foxglove_bridge, package_file, rviz

#: each include: the bringup arguments it forwards, and fixed arguments
CAPABILITIES = {
    # the object manipulation_node pushes lives in the arm's simulator: the arm's own scene
    "discrete_robot.launch.py": (("model_file", "publish_tf"), {"scene_file": "default"}),
    "trajectory_planner.launch.py": (("model_file",), {}),
    "space_robot.launch.py": (("publish_tf",), {"publish_clock": "false"}),
    "push_predictor.launch.py": ((), {}),
    "manipulation.launch.py": (("model_file",), {}),
}


def include(launch_file: str, forwarded: tuple[str, ...], fixed: dict) -> GroupAction:
    arguments = {"use_sim_time": LaunchConfiguration("use_sim_time"), "rviz": "false", **fixed}
    arguments.update({name: LaunchConfiguration(name) for name in forwarded})
    return GroupAction(scoped=True, forwarding=False, actions=[
        IncludeLaunchDescription(package_file("launch", launch_file), launch_arguments=arguments.items()),
    ])


def generate_launch_description():
    return LaunchDescription([
        DeclareLaunchArgument("model_file", default_value=package_file("config", "planar_2link.yaml"),
                              description="arm model for the simulator and the planner"),
        DeclareLaunchArgument("use_sim_time", default_value="false", description="every node on /clock"),
        DeclareLaunchArgument("publish_tf", default_value="false",
                              description="the simulators publish every link's TF (no robot_state_publisher)"),
        DeclareLaunchArgument("rviz", default_value="true", description="start RViz"),
        *foxglove_arguments(),
        *(include(name, forwarded, fixed) for name, (forwarded, fixed) in CAPABILITIES.items()),
        rviz(),
        foxglove_bridge(),
    ])
