"""Real robot descriptions nobody here wrote: the URDFs of the ``example-robot-data`` wheel (requirements.txt),
used by the tests, the benchmarks and the README's examples."""

import sysconfig
from pathlib import Path

from discrete_robot.errors import ModelError

#: name -> the URDF's path inside example-robot-data's ``robots`` directory
EXAMPLE_ROBOTS = {
    "ur5": "ur_description/urdf/ur5_robot.urdf",
    "panda": "panda_description/urdf/panda.urdf",              # mimic fingers
    "xarm7": "xarm_description/urdf/xarm7.urdf",
    "z1": "z1_description/urdf/z1.urdf",
    "kinova": "kinova_description/robots/kinova.urdf",         # continuous joints
    "so101": "so_arm_description/urdf/so101.urdf",             # a 5-DOF hobby arm and its gripper
    "baxter": "baxter_description/urdf/baxter.urdf",           # two arms and a head: a tree, mimic fingers
}


def robots_directory() -> Path:
    """example-robot-data's ``robots`` directory (installed by its wheel under the cmeel prefix)."""
    return Path(sysconfig.get_paths()["purelib"]) / "cmeel.prefix" / "share" / "example-robot-data" / "robots"


def example_robot_path(name: str) -> Path:
    """The URDF file of example robot ``name`` (:data:`EXAMPLE_ROBOTS`); ModelError when it is not installed."""
    if name not in EXAMPLE_ROBOTS:
        raise ModelError(f"example robot: '{name}' is not one of {sorted(EXAMPLE_ROBOTS)}")
    path = robots_directory() / EXAMPLE_ROBOTS[name]
    if not path.is_file():
        raise ModelError(f"example robot '{name}': {path} not found (install example-robot-data: "
                         "pip install -r requirements.txt)")
    return path
