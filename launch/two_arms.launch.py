"""Two arms in one system: each simulator under its own namespace and TF frame prefix, one /clock.

ros2 launch discrete_robot two_arms.launch.py [model_file:=...] [publish_tf:=false] [rviz:=true]

arm1's simulator publishes /clock and arm2's follows it (publish_clock false), so both worlds advance on one
simulated time; their topics are /arm1/... and /arm2/..., their frames arm1/* and arm2/* on the shared /tf
(both bases at the world origin). Without a launch install, the same system is two bringups:

    bringup --only discrete_robot_node --namespace arm1
    bringup --only discrete_robot_node --namespace arm2 --ros-args -p publish_clock:=false
"""

from launch import LaunchDescription
from launch_ros.actions import Node

from discrete_robot.ros.launch_support import common_arguments, robot_state_publisher, rviz, simulator_parameters

#: namespace of each arm, and whether its simulator publishes the system's /clock
ARMS = {"arm1": True, "arm2": False}


def arm(namespace: str, publishes_clock: bool) -> list:
    simulator = Node(
        package="discrete_robot", executable="discrete_robot_node", name="discrete_robot_node", namespace=namespace,
        output="screen",
        parameters=[*simulator_parameters("model_file"),
                    {"frame_prefix": f"{namespace}/", "publish_clock": publishes_clock}],
        remappings=[("robot_description", "discrete_robot/robot_description")],
    )
    return [simulator, robot_state_publisher(namespace=namespace, frame_prefix=f"{namespace}/")]


def generate_launch_description():
    return LaunchDescription([
        *common_arguments("discrete_robot.yaml", model_file="planar_2link.yaml"),
        *(action for namespace, clock in ARMS.items() for action in arm(namespace, clock)),
        rviz(),
    ])
