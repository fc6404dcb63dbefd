"""package.xml, setup.py and setup.cfg follow the ROS 2 ament_python conventions."""

import ast
import importlib
import importlib.metadata
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
NODES = ["discrete_robot_node", "space_robot_node", "push_predictor_node", "trajectory_planner_node",
         "manipulation_node"]
# Python module -> rosdep key that provides it.
PYTHON_DEPENDENCIES = {"numpy": "python3-numpy", "scipy": "python3-scipy", "transforms3d": "python3-transforms3d",
                       "yaml": "python3-yaml", "matplotlib": "python3-matplotlib"}


def imported_top_level_modules(folder: Path) -> set[str]:
    modules = set()
    for path in folder.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                modules.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                modules.add(node.module.split(".")[0])
    return modules


@pytest.fixture(scope="module")
def manifest():
    catkin_pkg = pytest.importorskip("catkin_pkg.package")
    return catkin_pkg.parse_package(str(REPO / "package.xml"))


def test_manifest_is_format_3_ament_python(manifest):
    assert manifest.package_format == 3
    assert manifest.name == "discrete_robot"
    assert manifest.get_build_type() == "ament_python"
    manifest.validate()


def test_every_imported_ros_package_and_library_is_declared(manifest):
    declared = {d.name for d in manifest.exec_depends}
    imported = imported_top_level_modules(REPO / "discrete_robot") | imported_top_level_modules(REPO / "launch")
    ros_packages = {m for m in imported if m.endswith(("_msgs", "_srvs", "_interfaces"))
                    or m in {"rclpy", "ament_index_python", "launch", "launch_ros", "tf2_ros"}}
    assert ros_packages, "the scan found no ROS imports: it would check nothing"
    assert ros_packages <= declared, f"undeclared: {sorted(ros_packages - declared)}"
    needed = {key for module, key in PYTHON_DEPENDENCIES.items() if module in imported}
    assert needed <= declared, f"undeclared: {sorted(needed - declared)}"


def test_version_agrees(manifest):
    import discrete_robot

    assert manifest.version == discrete_robot.__version__ == importlib.metadata.version("discrete_robot")


def test_console_scripts_are_the_nodes_and_each_has_main():
    entry_points = {ep.name: ep for ep in importlib.metadata.distribution("discrete_robot").entry_points
                    if ep.group == "console_scripts"}
    assert set(NODES) <= set(entry_points)
    for entry_point in entry_points.values():
        assert callable(entry_point.load()), entry_point.value


def test_setup_cfg_installs_scripts_where_ros2_run_looks():
    text = (REPO / "setup.cfg").read_text()
    assert "script_dir=$base/lib/discrete_robot" in text
    assert "install_scripts=$base/lib/discrete_robot" in text
    assert (REPO / "resource" / "discrete_robot").exists()


def test_interfaces_package_declares_its_services():
    catkin_pkg = pytest.importorskip("catkin_pkg.package")
    interfaces = catkin_pkg.parse_package(str(REPO / "discrete_robot_interfaces" / "package.xml"))
    assert "rosidl_interface_packages" in {g.name for g in interfaces.member_of_groups}
    cmake = (REPO / "discrete_robot_interfaces" / "CMakeLists.txt").read_text()
    for srv in (REPO / "discrete_robot_interfaces" / "srv").glob("*.srv"):
        assert f'"srv/{srv.name}"' in cmake, f"{srv.name} is not generated"
