from glob import glob

from setuptools import find_packages, setup

package_name = "discrete_robot"

NODES = ["discrete_robot_node", "space_robot_node", "push_predictor_node", "trajectory_planner_node",
         "manipulation_node"]

setup(
    name=package_name,
    version="0.1.0",
    packages=find_packages(include=[package_name, f"{package_name}.*"]),
    data_files=[
        ("share/ament_index/resource_index/packages", [f"resource/{package_name}"]),
        (f"share/{package_name}", ["package.xml"]),
        (f"share/{package_name}/launch", glob("launch/*.launch.py")),
        (f"share/{package_name}/config", glob("config/*.yaml")),
        (f"share/{package_name}/urdf", glob("urdf/*.urdf")),
        (f"share/{package_name}/rviz", glob("rviz/*.rviz")),
    ],
    install_requires=["setuptools"],
    zip_safe=True,
    maintainer="discrete_robot maintainers",
    maintainer_email="maintainers@discrete-robot.example.org",
    description="Discrete-time robot dynamics for ROS 2.",
    license="Apache-2.0",
    entry_points={
        "console_scripts": [f"{node} = {package_name}.nodes.{node}:main" for node in NODES]
        + [f"bringup = {package_name}.ros.bringup:main"],
    },
)
