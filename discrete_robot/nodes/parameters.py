"""Node parameters declared from specs: checked at start-up (one line naming the parameter and its range) and at
set time (the set fails with the reason), so a node never runs with a value it cannot use.

Nodes declare their parameters as a list of :class:`ParameterSpec`; each spec carries its description (shown by
``ros2 param describe``), an optional range and a check.
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from rcl_interfaces.msg import FloatingPointRange, IntegerRange, ParameterDescriptor, SetParametersResult
from rclpy.exceptions import ParameterException, ParameterUninitializedException
from rclpy.node import Node
from rclpy.parameter import Parameter

from discrete_robot.errors import DiscreteRobotError
from discrete_robot.validation import ros_name_problem


class StartupError(DiscreteRobotError):
    """The node cannot start with its parameters; the message says which and why."""


Check = Callable[[Any], str | None]


@dataclass(frozen=True)
class ParameterSpec:
    """One declared parameter.

    ``default`` fixes the type; an array parameter that defaults to empty needs
    ``type`` (an empty YAML/Python list carries no element type). ``check``
    returns the reason a value is invalid, or None.
    """

    name: str
    default: Any
    description: str
    check: Check | None = None
    value_range: tuple[float, float] | None = None
    type: Parameter.Type | None = None
    read_only: bool = False


def positive(value) -> str | None:
    return None if value > 0 else "must be > 0"


def non_negative(value) -> str | None:
    return None if value >= 0 else "must be >= 0"


def finite_values(value) -> str | None:
    values = np.atleast_1d(np.asarray(value, dtype=float))
    return None if np.all(np.isfinite(values)) else "must be finite (no NaN or inf)"


def ros_name(relative_only: bool = False, trailing_slash: bool = False, empty: bool = False) -> Check:
    """A check of a name parameter against the ROS naming rules (validation.ros_name_problem); ``empty``: ""
    is allowed (no prefix)."""

    def check(value) -> str | None:
        if empty and value == "":
            return None
        return ros_name_problem(value, relative_only, trailing_slash)

    return check


def one_of(*choices: str) -> Check:
    def check(value) -> str | None:
        return None if value in choices else f"must be one of {', '.join(choices)} (got {value!r})"

    return check


def model_file(default_model: str) -> ParameterSpec:
    """``model_file``: a fixed-base node's robot model file; empty = the shipped ``config/<default_model>``."""
    return ParameterSpec("model_file", "", "robot model: YAML (docs/model_format.md, fixed base), URDF or xacro; "
                                           f"empty = the shipped config/{default_model}", read_only=True)


#: the robot as robot_state_publisher and gz_ros2_control take it: every node with a ``model_file`` takes this too
ROBOT_DESCRIPTION = ParameterSpec("robot_description", "", "the robot's URDF text; non-empty: used instead of "
                                  "model_file (model/sources.py)", read_only=True)
#: a URDF arm's tool link or frame as its fingertip (planning and pushing), with ``finger_radius``
TIP_LINK = ParameterSpec("tip_link", "", "link or fixed frame whose origin is the fingertip (e.g. tool0); empty = "
                         "the model file's fingertip", read_only=True)


def node_model(values: dict, default_file, floating_base: bool = False):
    """The node's robot (:func:`discrete_robot.model.sources.robot_model`) from its ``robot_description``,
    ``model_file`` (else ``default_file``), ``tip_link`` and ``finger_radius`` parameters, where declared."""
    from discrete_robot.model.sources import robot_model

    return robot_model(values.get("model_file", ""), values.get("robot_description", ""), default_file,
                       values.get("tip_link", ""), values.get("finger_radius", 0.0), floating_base)


def _descriptor(spec: ParameterSpec) -> ParameterDescriptor:
    descriptor = ParameterDescriptor(description=spec.description, read_only=spec.read_only)
    if spec.value_range is not None:
        low, high = spec.value_range
        if isinstance(spec.default, bool):
            pass
        elif isinstance(spec.default, int):
            descriptor.integer_range = [IntegerRange(from_value=int(low), to_value=int(high), step=0)]
        elif isinstance(spec.default, float):
            descriptor.floating_point_range = [FloatingPointRange(from_value=low, to_value=high, step=0.0)]
    return descriptor


def parameter_value(node: Node, name: str):
    """The parameter's value; an empty array parameter that was never set reads as []."""
    try:
        return node.get_parameter(name).value
    except ParameterUninitializedException:
        return []


def declare_parameters(node: Node, specs: Sequence[ParameterSpec],
                       cross_check: Callable[[dict], str | None] | None = None) -> dict[str, Any]:
    """Declare ``specs`` on ``node``, validate their values, and guard later sets.

    Returns the values by name. Raises :class:`StartupError` listing every
    invalid value. ``cross_check(values)`` validates rules that span several
    parameters (e.g. one initial position per joint); it also runs at set time.
    """
    by_name = {spec.name: spec for spec in specs}
    for spec in specs:
        default = spec.type if spec.type is not None and spec.default in (None, []) else spec.default
        try:
            node.declare_parameter(spec.name, default, _descriptor(spec))
        except (ParameterException, TypeError, ValueError) as error:
            raise StartupError(f"{node.get_name()}: invalid parameter {spec.name}: {_allowed(spec)} "
                               f"({type(error).__name__})") from None
    values = {spec.name: parameter_value(node, spec.name) for spec in specs}
    errors = _problems(by_name, values, cross_check)
    if errors:
        raise StartupError(f"{node.get_name()}: invalid parameters: " + "; ".join(errors))

    def on_set(parameters: list[Parameter]) -> SetParametersResult:
        proposed = {name: parameter_value(node, name) for name in by_name}
        proposed.update({p.name: p.value for p in parameters if p.name in by_name})
        problems = _problems(by_name, proposed, cross_check, only={p.name for p in parameters})
        return SetParametersResult(successful=not problems, reason="; ".join(problems))

    node.add_on_set_parameters_callback(on_set)
    return values


def _allowed(spec: ParameterSpec) -> str:
    """What ``spec`` accepts, for a one-line start-up error: its type and range."""
    kind = type(spec.default).__name__ if spec.type is None else spec.type.name.lower()
    allowed = f"expected a {kind}"
    if spec.value_range is not None:
        allowed += f" in [{spec.value_range[0]}, {spec.value_range[1]}]"
    return allowed


def _problems(by_name, values, cross_check, only=None) -> list[str]:
    problems = []
    for name, spec in by_name.items():
        if only is not None and name not in only:
            continue
        reason = spec.check(values[name]) if spec.check else None
        if reason:
            problems.append(f"{name} {reason}")
    if not problems and cross_check is not None:
        reason = cross_check(values)
        if reason:
            problems.append(reason)
    return problems
