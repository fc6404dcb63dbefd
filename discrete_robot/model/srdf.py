"""The start pose as a MoveIt stack gives it: an SRDF ``<group_state>`` and ``initial_positions`` by joint name.

An SRDF (MoveIt's semantic robot description) names poses of a planning group::

    <group_state name="ready" group="panda_arm">
        <joint name="panda_joint1" value="0"/>
        <joint name="panda_joint4" value="-2.356"/>
    </group_state>

Parsed as :mod:`discrete_robot.model.urdf_reader` parses a URDF: the standard library's ElementTree on text that
:func:`discrete_robot.config_files.read_text` read with its size limit (expat refuses entity expansion bombs and
external entities); every error is one :class:`ModelError` line naming the element and the field.
"""

import math
from dataclasses import dataclass

import numpy as np

from discrete_robot.config_files import read_text
from discrete_robot.errors import ModelError
from discrete_robot.model.urdf_reader import robot_element


@dataclass(frozen=True)
class GroupState:
    """One ``<group_state>``: its ``name``, its planning ``group`` and ``values`` {joint: rad or m}."""

    name: str
    group: str
    values: dict[str, float]


def group_states(text: str, source: str = "srdf") -> list[GroupState]:
    """Every ``<group_state>`` of SRDF ``text``, in file order."""
    root = robot_element(text, source)
    states = []
    for element in root.findall("group_state"):
        name, group = element.get("name"), element.get("group")
        if not name or not group:
            raise ModelError(f"{source}: a <group_state> needs both name and group, got name={name!r} "
                             f"group={group!r}")
        values = {}
        for joint in element.findall("joint"):
            where = f"{source}: group_state '{name}'"
            joint_name = joint.get("name")
            if not joint_name:
                raise ModelError(f"{where}: a <joint> has no name")
            if joint_name in values:
                raise ModelError(f"{where}: joint '{joint_name}' is given twice")
            values[joint_name] = _value(joint.get("value"), f"{where}: joint '{joint_name}' <value>")
        states.append(GroupState(name, group, values))
    return states


def _value(text: str | None, where: str) -> float:
    """A finite number; SRDF allows one value per single-DOF joint (multi-DOF joints are not modelled here)."""
    try:
        value = float(text)
    except (TypeError, ValueError):
        raise ModelError(f"{where} must be one number, got {text!r}") from None
    if not math.isfinite(value):
        raise ModelError(f"{where} must be finite, got {text!r}")
    return value


def load_group_state(path, name: str) -> GroupState:
    """The ``<group_state name=...>`` of the SRDF file ``path``; ModelError listing the names there otherwise."""
    states = group_states(read_text(path, "initial_pose_srdf"), f"initial_pose_srdf {path}")
    for state in states:
        if state.name == name:
            return state
    known = ", ".join(sorted({state.name for state in states})) or "none"
    raise ModelError(f"initial_pose_srdf {path}: no group_state '{name}' (it has: {known})")


@dataclass(frozen=True)
class StartPose:
    """``positions``, shape (dof,), rad or m, inside the limits; ``warnings``: one line per clamped joint."""

    positions: np.ndarray
    warnings: list[str]


def start_pose(joint_names, lower, upper, base, by_name: dict[str, float], source: str = "initial_positions"
               ) -> StartPose:
    """``base`` (shape (dof,)) with the ``by_name`` entries set over it, clamped into [lower, upper].

    A name that is no joint of the model is a ModelError naming it and the joints (a mimic follower is no joint
    here: it follows its leader). Each clamped joint gives a warning that names it, its value and its limits.
    """
    joints = list(joint_names)
    q = np.array(base, dtype=float)
    for joint, value in by_name.items():
        if joint not in joints:
            raise ModelError(f"{source}: '{joint}' is not a joint of the model (joints: {', '.join(joints)})")
        q[joints.index(joint)] = value
    lower, upper = np.asarray(lower, dtype=float), np.asarray(upper, dtype=float)
    clamped = np.clip(q, lower, upper)
    warnings = [f"{source}: {joints[i]} = {q[i]:g} is outside its limits [{lower[i]:g}, {upper[i]:g}]; "
                f"it starts at {clamped[i]:g}" for i in np.flatnonzero(clamped != q)]
    return StartPose(clamped, warnings)
