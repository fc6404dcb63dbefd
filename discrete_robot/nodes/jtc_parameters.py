"""joint_trajectory_controller's parameters on a node: JTC's names and defaults, a MoveIt ``ros2_controllers.yaml``.

The parameters carry JTC's names and defaults (:data:`CONTROLLER_PARAMETERS`, plus ``constraints.<joint>.
trajectory`` and ``.goal`` per joint); ``controllers_file`` names a ros2_controllers.yaml (a MoveIt config's)
whose ``<name>`` section supplies them where the node's own parameters do not.
"""

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np
import yaml
from rclpy.parameter import Parameter

from discrete_robot.control.joint_trajectory_controller import ControllerSettings
from discrete_robot.control.trajectory import Interpolation
from discrete_robot.nodes.common import ParameterSpec, StartupError, declare_parameters, non_negative, one_of

CONTROLLERS_FILE = ParameterSpec("controllers_file", "", "a ros2_controllers.yaml (e.g. a MoveIt config's): every "
                                                          "controller under controller_manager is created from its "
                                                          "type, its parameters under <name>. (controller_name's "
                                                          "unprefixed; the node's own values first); without that "
                                                          "list, the <controller_name> section's; empty = none",
                                 read_only=True)
#: JTC's ``joints`` (yaml 2-11: read-only, unique); empty here means "from the model" (controller_joints)
JOINTS = ParameterSpec("joints", [], "the controller's joints (JTC's joints); empty = controllers_file's, else "
                                     "those the URDF's <ros2_control> tags give a command interface, else every "
                                     "joint; the others hold where they are while the controller drives",
                       type=Parameter.Type.STRING_ARRAY, read_only=True)
#: JTC's parameters, same names and defaults (joint_trajectory_controller_parameters.yaml 75-127, 203-236)
CONTROLLER_PARAMETERS = [
    ParameterSpec("constraints.goal_time", 0.0, "time after the last point to come within the goal tolerances, s "
                                                "(0 = no limit; a goal's goal_time_tolerance 0)", check=non_negative,
                  value_range=(0.0, 1e6)),
    ParameterSpec("constraints.stopped_velocity_tolerance", 0.01, "goal velocity tolerance of every joint, rad/s "
                                                                  "or m/s (a goal's 0)", check=non_negative,
                  value_range=(0.0, 1e6)),
    ParameterSpec("allow_partial_joints_goal", False, "accept goals naming only some joints (the rest hold)"),
    ParameterSpec("allow_nonzero_velocity_at_trajectory_end", False, "accept trajectories whose last point moves"),
    ParameterSpec("allow_integration_in_goal_trajectories", False, "accept points without positions (or "
                                                                   "velocities): integrated from the velocities "
                                                                   "and accelerations"),
    ParameterSpec("constraints.decelerate_on_cancel", False, "on a cancel or an abort, stop at each joint's "
                                                             "max_deceleration_on_cancel instead of holding where "
                                                             "the joints are (needs every joint's deceleration > 0 "
                                                             "and URDF velocity limit)", read_only=True),
    ParameterSpec("speed_scaling.initial_scaling_factor", 1.0, "JTC's; with an effort command interface JTC "
                                                               "keeps the factor at 1.0 (and warns when this is "
                                                               "not 1.0), as this node does", check=non_negative,
                  value_range=(0.0, 1e6), read_only=True),
    ParameterSpec("cmd_timeout", 0.0, "s after a trajectory's last point before the controller holds where the "
                                      "robot is (a running goal then succeeds, as in JTC); 0 = off; must exceed "
                                      "constraints.goal_time, else off; read when the controller starts",
                  check=non_negative, value_range=(0.0, 1e6), read_only=True),
    ParameterSpec("action_monitor_rate", 20.0, "rate of the action's feedback, Hz (wall time)",
                  value_range=(0.1, 1000.0), read_only=True),
    ParameterSpec("interpolation_method", Interpolation.SPLINES.value, "splines (linear, cubic or quintic as the "
                                                                       "points carry positions, velocities, "
                                                                       "accelerations) or none",
                  check=one_of(*(m.value for m in Interpolation)), read_only=True),
]
#: per joint, JTC's constraints.<joint>.trajectory and .goal (position tolerances, rad or m, 0 = unchecked) and
#: .max_deceleration_on_cancel
JOINT_CONSTRAINTS = {"trajectory": "path position tolerance of {joint} while moving, rad or m (0 = unchecked)",
                     "goal": "goal position tolerance of {joint}, rad or m (0 = unchecked)",
                     "max_deceleration_on_cancel": "deceleration of {joint} when it stops with "
                                                   "constraints.decelerate_on_cancel, rad/s² or m/s²"}


#: per joint, JTC's gains.<joint>.p and .d (yaml 136-152, default 0.0); here the gains of the computed-torque law
GAINS = {"p": "position gain of {joint}, 1/s² (the computed-torque law's kp for it: ë + d ė + p e = 0; 0 = the "
              "node's kp)",
         "d": "velocity gain of {joint}, 1/s (the computed-torque law's kd for it; 0 = the node's kd)"}


def gain_specs(joints: Sequence[str]) -> list[ParameterSpec]:
    """``gains.<joint>.p`` and ``.d`` for each joint (0.0: the node's ``kp``, ``kd``)."""
    return [ParameterSpec(f"gains.{joint}.{kind}", 0.0, description.format(joint=joint), check=non_negative,
                          value_range=(0.0, 1e6))
            for joint in joints for kind, description in GAINS.items()]


def joint_constraint_specs(joints: Sequence[str]) -> list[ParameterSpec]:
    """``constraints.<joint>.trajectory`` and ``.goal`` for each joint (0.0: unchecked)."""
    return [ParameterSpec(f"constraints.{joint}.{kind}", 0.0, description.format(joint=joint), check=non_negative,
                          value_range=(0.0, 1e6))
            for joint in joints for kind, description in JOINT_CONSTRAINTS.items()]


def _flatten(section: dict, prefix: str = "") -> dict:
    flat = {}
    for key, value in section.items():
        if isinstance(value, dict):
            flat.update(_flatten(value, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = value
    return flat


def controllers_file_values(path: str, name: str, joints: Sequence[str] | None = None) -> dict:
    """The ``<name>.ros__parameters`` of a ros2_controllers.yaml, flattened (``constraints.goal_time``, ...);
    StartupError when the file cannot be read, has no such section, or lists other joints than ``joints`` (when
    given)."""
    try:
        document = yaml.safe_load(Path(path).read_text()) or {}
    except (OSError, yaml.YAMLError) as error:
        raise StartupError(f"controllers_file: cannot read {path}: {error}") from None
    section = document.get(name, {}) if isinstance(document, dict) else {}
    if not isinstance(section, dict) or "ros__parameters" not in section:
        sections = [key for key, value in document.items() if isinstance(value, dict)] if isinstance(
            document, dict) else []
        raise StartupError(f"controllers_file: {path} has no '{name}: ros__parameters:' section (it has {sections});"
                           f" set controller_name to the controller's name")
    values = _flatten(section["ros__parameters"] or {})
    listed = values.get("joints")
    if joints is not None and listed is not None and sorted(listed) != sorted(joints):
        raise StartupError(f"controllers_file: {path}: {name}.joints {listed} are not the controller's joints "
                           f"{list(joints)} (set joints, or the URDF's <ros2_control> tags, to the same)")
    return values


def controllers_file_joints(path: str, name: str) -> list[str]:
    """The ``<name>.joints`` of a ros2_controllers.yaml: [] when ``path`` is empty or the section lists none."""
    return list(controllers_file_values(path, name).get("joints") or []) if path else []


def declare_controller_parameters(node, name: str, joints: Sequence[str], controllers_file: str,
                                  prefix: str = "", gains: bool = False) -> dict:
    """Declare the controller's parameters (``prefix`` before each name; with ``gains``, ``gains.<joint>.p`` and
    ``.d`` too) with ``controllers_file``'s values as their defaults; their values by unprefixed name."""
    from_file = controllers_file_values(controllers_file, name, joints) if controllers_file else {}
    specs = []
    for spec in [*CONTROLLER_PARAMETERS, *joint_constraint_specs(joints), *(gain_specs(joints) if gains else ())]:
        default = from_file.get(spec.name, spec.default)
        if isinstance(spec.default, float) and isinstance(default, int) and not isinstance(default, bool):
            default = float(default)         # YAML's 1 for a double parameter
        specs.append(replace(spec, name=prefix + spec.name, default=default))
    values = declare_parameters(node, specs)
    return {key[len(prefix):]: value for key, value in values.items()}


def controller_settings(joints: Sequence[str], values: dict, wraparound: np.ndarray | None = None,
                        cmd_timeout: float = 0.0, deceleration: np.ndarray | None = None,
                        update_period: float = 0.01) -> ControllerSettings:
    """ControllerSettings from the parameters' values by name; ``wraparound``: the continuous joints (bool each);
    ``cmd_timeout`` and ``deceleration`` as they took effect when the controller started (effective_cmd_timeout,
    effective_deceleration); ``update_period``: s between the controller's updates."""
    return ControllerSettings(
        tuple(joints), np.array([values[f"constraints.{j}.trajectory"] for j in joints], dtype=float),
        np.array([values[f"constraints.{j}.goal"] for j in joints], dtype=float),
        values["constraints.goal_time"], values["constraints.stopped_velocity_tolerance"],
        values["allow_partial_joints_goal"], values["allow_nonzero_velocity_at_trajectory_end"],
        Interpolation(values["interpolation_method"]), values["allow_integration_in_goal_trajectories"],
        cmd_timeout=cmd_timeout, wraparound=wraparound, deceleration=deceleration, update_period=update_period)
