"""The one entry point to numba for the compiled kernels (``from discrete_robot.jit import njit``).

Hot loops (rigid-body recursions, Newton solves of the discrete model, planner passes)
are free functions over flat float/int arrays compiled with numba: per-call numpy
overhead (~1 µs per small operation, hundreds per evaluation) otherwise dominates, and
numba keeps the math in Python syntax next to its docstring with no compiler needed at
install time.

Compile cache. Kernels are compiled on first call and cached on disk (``cache=True``).
The cache lives in one user directory, ``$DISCRETE_ROBOT_CACHE_DIR`` or else
``$XDG_CACHE_HOME/discrete_robot/numba`` (default ``~/.cache/discrete_robot/numba``),
set as ``NUMBA_CACHE_DIR`` unless the caller already set that: so it works where the
package is installed read-only (a system ROS 2 install) and one ``make setup`` (which
runs :mod:`discrete_robot.warmup`) leaves every kernel compiled. Numba re-validates
entries against the source file's time stamp, so an edited kernel recompiles by itself.

Importing this module imports numba (~0.3 s); modules that hold kernels are therefore
imported lazily by the CLI and the nodes, so ``--help`` never pays for it.
"""

import os
from pathlib import Path


def cache_dir() -> Path:
    """Where compiled kernels are cached (see the module docstring)."""
    explicit = os.environ.get("DISCRETE_ROBOT_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "discrete_robot" / "numba"


os.environ.setdefault("NUMBA_CACHE_DIR", str(cache_dir()))

import numba  # noqa: E402  (after NUMBA_CACHE_DIR: numba reads its configuration at import)
from numba.extending import overload  # noqa: E402, F401  (re-exported: the compiled form of a Python function)


def njit(function=None, **options):
    """``numba.njit`` with the project's options: cached on disk and releasing the GIL (``nogil``).

    Releasing the GIL lets a multi-threaded executor serve other callbacks while a
    kernel runs. Use as ``@njit`` or ``@njit(**options)``.
    """
    options = {"cache": True, "nogil": True, **options}
    if function is None:
        return numba.njit(**options)
    return numba.njit(**options)(function)
