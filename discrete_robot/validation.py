"""Boundary checks shared by the core, the CLI and the nodes."""

import math
import re
import unicodedata

import numpy as np

from discrete_robot.errors import InputError, ModelError

#: m: the largest length, origin or centre of mass a model may give (1 km, as pushing's footprint bound,
#: pushing/polygon.py MAX_VERTEX_DISTANCE; the largest in example-robot-data is 1.6 m)
MAX_LENGTH = 1e3
#: kg: the largest mass of a link or base (1000 t; the largest in example-robot-data is 200 kg)
MAX_MASS = 1e6
#: kg m²: the largest inertia entry, the largest mass at the largest length (example-robot-data: 9.2 kg m²)
MAX_INERTIA = MAX_MASS * MAX_LENGTH ** 2
#: the largest |multiplier| of a URDF mimic joint (a gear ratio; example-robot-data's largest is 1.06)
MAX_MIMIC_MULTIPLIER = 1e3
#: the most URDF links (fixed frames included) or YAML links a model may have; counted before it is built
MAX_LINKS = 1000
#: bytes the discrete model's step may need (256 MB), the simulator node's bound and every entry point's
MAX_STEP_BYTES = 2 ** 28


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



def plausible(values, bound: float, what: str, unit: str):
    """``values`` (a number or an array) when every |value| <= ``bound`` (in ``unit``), else ModelError naming
    ``what`` and the bound: a finite number beyond it (1e308) is a typo or a probe, and squared in M(q) it
    overflows to inf and nan."""
    array = np.asarray(values, dtype=float)
    if not np.all(np.abs(array) <= bound):
        shown = array.tolist() if array.ndim else float(array)
        raise ModelError(f"{what}: must be within ±{bound:g} {unit} (the plausibility bound of a robot model), "
                         f"got {shown}")
    return values


def discrete_step_bytes(dof: int) -> int:
    """Bytes of the discrete model's step Jacobian for ``dof`` coordinates: ∂a/∂q (dof³ doubles) at each of the
    2·dof distinct vertices of the two symmetric partial-difference paths (discrete.compiled), 16·dof⁴ bytes:
    20 kB for 6 joints, 130 GB for a 300-link chain."""
    return 8 * 2 * dof * dof ** 3


def model_size(links: int, dof: int, what: str) -> None:
    """ModelError naming ``what`` when a model of ``links`` links (URDF links, fixed frames included) and ``dof``
    coordinates, counted from the parsed file, is beyond :data:`MAX_LINKS` or needs more than
    :data:`MAX_STEP_BYTES` per discrete step (:func:`discrete_step_bytes`): checked before any n² or n³ array is
    built, in every entry point (CLI, nodes, sweeps)."""
    if links > MAX_LINKS:
        raise ModelError(f"{what}: {links} links, more than the {MAX_LINKS} a model may have")
    if discrete_step_bytes(dof) > MAX_STEP_BYTES:
        most = int((MAX_STEP_BYTES / 16) ** 0.25)
        raise ModelError(f"{what}: {dof} joints need {discrete_step_bytes(dof):.3g} bytes per discrete step, more "
                         f"than the {MAX_STEP_BYTES:.3g} a step may use (16 n^4 bytes: at most {most} joints)")


#: Unicode categories escaped in names shown in messages: controls (Cc) and formats (Cf: the bidirectional
#: overrides U+202A-U+202E and isolates U+2066-U+2069, zero-width characters), line and paragraph separators
_UNPRINTABLE = {"Cc", "Cf", "Zl", "Zp"}


def printable(name) -> str:
    """``name`` as it may reach a log or an error message: control, format and bidirectional characters
    (a right-to-left override U+202E would reverse the rest of the line) escaped as ``\\u202e``."""
    text = str(name)
    if all(unicodedata.category(character) not in _UNPRINTABLE for character in text):
        return text
    return "".join(character.encode("unicode_escape").decode("ascii")
                   if unicodedata.category(character) in _UNPRINTABLE else character for character in text)


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


#: the largest ROS_DOMAIN_ID a DDS middleware can use: the UDP ports 7400 + 250 id + offsets must stay below 65536
#: (docs.ros.org, Concepts, "About Domain ID"); above it Fast DDS ends the process itself at the first node
LARGEST_DDS_DOMAIN_ID = 232
#: the middlewares that derive their ports from the domain id that way (Kilted's default is rmw_fastrtps_cpp)
DDS_MIDDLEWARES = ("rmw_fastrtps", "rmw_cyclonedds", "rmw_connextdds")


def dds_domain_id(environ) -> None:
    """InputError when the environment's ROS_DOMAIN_ID is above :data:`LARGEST_DDS_DOMAIN_ID` under a DDS
    middleware (RMW_IMPLEMENTATION, by default Fast DDS), where Fast DDS would end the process in its own log
    line. A value that is not a number is left to rcl, which refuses it in one line itself."""
    middleware = environ.get("RMW_IMPLEMENTATION") or "rmw_fastrtps_cpp"
    text = environ.get("ROS_DOMAIN_ID", "").strip()
    if middleware.startswith(DDS_MIDDLEWARES) and text.isdigit():
        whole_number(int(text), f"ROS_DOMAIN_ID (with {middleware}; 0-101 is safe everywhere)", 0,
                     LARGEST_DDS_DOMAIN_ID)


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
