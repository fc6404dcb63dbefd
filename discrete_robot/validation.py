"""Boundary checks shared by the core, the CLI and the nodes."""

import numpy as np

from discrete_robot.errors import InputError


def finite_vector(values, length: int, what: str) -> np.ndarray:
    """``values`` as a float vector of ``length`` finite entries, or InputError naming ``what`` and the problem."""
    array = np.asarray(values, dtype=float)
    if array.shape != (length,):
        shape = f" (shape {array.shape})" if array.ndim > 1 else ""
        raise InputError(f"{what}: expected {length} values, got {array.size}{shape}")
    if not np.all(np.isfinite(array)):
        raise InputError(f"{what}: values must be finite (no NaN or infinity), got {array.tolist()}")
    return array


def per_joint_values(values, default: np.ndarray, what: str, joint_names) -> np.ndarray:
    """One finite value per joint, or ``default`` when ``values`` is None or empty (rad or m, rad/s or m/s)."""
    if values is None or len(values) == 0:
        return default
    return finite_vector(values, default.size, f"{what} (one per joint: {', '.join(joint_names)})")
