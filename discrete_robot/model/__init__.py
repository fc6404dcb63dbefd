"""Robot models: YAML description, kinematics, rigid-body dynamics, URDF and the LagrangianSystem protocol."""

from discrete_robot.model.description import (
    Base,
    Joint,
    JointType,
    Link,
    RobotModel,
    load_model,
    model_from_dict,
    package_config_path,
)
from discrete_robot.model.lagrangian import LagrangianSystem

__all__ = ["Base", "Joint", "JointType", "LagrangianSystem", "Link", "RobotModel", "load_model", "model_from_dict",
           "package_config_path"]
