"""Boundary checks shared by the core, the CLI and the nodes."""

import math
import re

import numpy as np

from discrete_robot.errors import InputError


def finite_vector(values, length: int, what: str) -> np.ndarray:
    """``values`` as a float vector of ``length`` finite entries, or InputError naming ``what`` and the problem."""
    array = np.asarray(values, dtype=float)
    if array.shape != (length,):
        shape = f" (shape {array.shape})" if array.ndim > 1 else ""
        raise InputError(f"{what}: expected {length} values, got {array.size}{shape}")
    if not np.isfinite(array).all():      # the method: numpy's module function costs microseconds of dispatch
        raise InputError(f"{what}: values must be finite (no NaN or infinity), got {array.tolist()}")
    return array


def per_joint_values(values, default: np.ndarray, what: str, joint_names) -> np.ndarray:
    """One finite value per joint, or ``default`` when ``values`` is None or empty (rad or m, rad/s or m/s)."""
    if values is None or len(values) == 0:
        return default
    return finite_vector(values, default.size, f"{what} (one per joint: {', '.join(joint_names)})")


def finite_scalar(value, what: str, low: float = -np.inf, high: float = np.inf) -> float:
    """``value`` as a finite float in [low, high], or InputError naming ``what``."""
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        raise InputError(f"{what}: expected a number, got {value!r}") from None
    if not np.isfinite(number):
        raise InputError(f"{what}: must be finite (no NaN or infinity), got {number}")
    if not low <= number <= high:
        raise InputError(f"{what}: must be in [{low:g}, {high:g}], got {number:g}")
    return number


def positive_scalar(value, what: str) -> float:
    """``value`` as a finite float > 0 (a friction coefficient, a force, a gain), or InputError naming ``what``."""
    number = finite_scalar(value, what)
    if number <= 0.0:
        raise InputError(f"{what}: must be > 0, got {number:g}")
    return number


def positive_step(value, what: str, smallest: float = 1e-9, largest: float = np.inf) -> float:
    """A time or length step: finite and in [smallest, largest] (a denormal step would make the step count
    overflow), or InputError naming ``what``."""
    return finite_scalar(value, what, low=smallest, high=largest)


def bounded_count(count: float, limit: int, what: str, limit_name: str, hint: str = "") -> int:
    """A derived number of steps/points/iterations as an int, or InputError naming ``what`` (and ``hint``, what
    to change) when it is not finite or exceeds ``limit`` (named ``limit_name``), before anything that large
    is allocated."""
    hint = f"; {hint}" if hint else ""
    if not np.isfinite(count):
        raise InputError(f"{what}: the number of steps is not finite ({count}){hint}")
    if count > limit:
        raise InputError(f"{what}: needs {count:.3g} steps, more than {limit_name} = {limit}{hint}")
    return int(count)



_ROS_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def ros_name_problem(name: str, relative_only: bool = False, trailing_slash: bool = False) -> str | None:
    """Why ``name`` is not a valid ROS 2 topic, service or action name (None when it is), after the ROS 2 design
    article "Topic and Service name mapping to DDS": '/'-separated tokens of letters, digits and underscores, a
    token not starting with a digit, no empty token (no '//'), an optional leading '/' (absolute; refused when
    ``relative_only``) or '~/', and no trailing '/' unless ``trailing_slash`` (a TF frame prefix such as
    ``space_robot/``)."""
    if not isinstance(name, str) or not name:
        return "must be a non-empty name"
    body = name
    if body.startswith("~/"):
        body = body[2:]
    elif body.startswith("/"):
        if relative_only:
            return f"must be a relative name (no leading '/'), got {name!r}"
        body = body[1:]
    if trailing_slash and body.endswith("/"):
        body = body[:-1]
    bad = [token for token in body.split("/") if not _ROS_TOKEN.fullmatch(token)]
    if bad:
        return (f"must be '/'-separated tokens of letters, digits and '_', each starting with a letter or '_' "
                f"(ROS naming rules), got {name!r}")
    return None


def energy_in_proportion(energy: float, mass: float, reach: float, time_step: float, what: str) -> float:
    """``energy`` (J) when it is finite and |energy| <= m (L / h)², else InputError naming ``what``.

    m (L / h)² (kg, m, s) is twice the kinetic energy of the robot's whole mass ``mass`` crossing its whole
    reach ``reach`` in one step ``time_step``: a state with more energy moves (or, its potential energy says,
    falls) farther than the robot in one step, which no step of that size resolves; its first step would fail
    and leave a world stopped at its start."""
    bound = mass * (reach / time_step) ** 2
    if not np.isfinite(energy):
        raise InputError(f"{what}: the state's energy is not finite ({energy})")
    if abs(energy) > bound:
        raise InputError(f"{what}: the state's energy {energy:.3g} J is out of proportion to the model: above "
                         f"m (L/h)^2 = {bound:.3g} J (mass {mass:g} kg crossing its reach {reach:g} m in one "
                         f"time_step {time_step:g} s)")
    return energy


def one_of(value, choices, what: str):
    """``value`` when it is one of ``choices``, or InputError naming ``what`` and the choices."""
    if isinstance(value, str | int | float | bool) and value in choices:
        return value
    raise InputError(f"{what}: expected one of {', '.join(map(str, choices))}, got {value!r}")


def whole_number(value, what: str, low: float = -np.inf, high: float = np.inf) -> int:
    """``value`` as an int in [low, high] (a float with an integral value is accepted; a bool is not), or
    InputError naming ``what``."""
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
        raise InputError(f"{what}: expected a whole number, got {value!r}")
    # a Python int of any size is whole (numpy's isfinite and float() overflow on one past 2**64 or 1e308)
    if not isinstance(value, int) and not (np.isfinite(value) and float(value).is_integer()):
        raise InputError(f"{what}: expected a whole number, got {value!r}")
    if not low <= value <= high:
        shown = int(value) if abs(value) < 10 ** 30 else f"about 1e{math.floor(math.log10(abs(value)))}"
        raise InputError(f"{what}: must be in [{_bound(low)}, {_bound(high)}], got {shown}")
    return int(value)


def _bound(value) -> str:
    """A range bound as a person reads it: an int in full (2**64 - 1), a float in %g."""
    return str(value) if isinstance(value, int) else f"{value:g}"
