"""Boundary checks shared by the core, the CLI and the nodes."""

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

