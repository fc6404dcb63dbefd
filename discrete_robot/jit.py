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
runs :mod:`discrete_robot.warmup`) leaves every kernel compiled.

Inside it, one subdirectory per version of the kernels' sources (a hash of every module
that imports this one). Numba re-validates a cache entry only against its own source
file, but a kernel compiled into another module's caller (``newton.step`` calling
``compiled.step_terms``) is cached with that caller: after an edit of the callee alone,
numba would go on loading the caller with the old callee inlined. A new hash starts an
empty cache instead; caches of other versions unused for a week are removed.

Importing this module imports numba (~0.3 s); modules that hold kernels are therefore
imported lazily by the CLI and the nodes, so ``--help`` never pays for it.
"""

import hashlib
import os
import shutil
import time
from pathlib import Path

#: a cache of another version of the kernels unused for this long (s) is removed
STALE_CACHE_AGE = 7 * 24 * 3600.0


def cache_dir() -> Path:
    """Where compiled kernels are cached (see the module docstring): the root of every version's cache."""
    explicit = os.environ.get("DISCRETE_ROBOT_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "discrete_robot" / "numba"


def kernel_sources_hash(package: Path = Path(__file__).parent) -> str:
    """A hash of the source of every module of ``package`` that compiles kernels (imports this module)."""
    digest = hashlib.sha1()
    for path in sorted(package.rglob("*.py")):
        text = path.read_bytes()
        if b"discrete_robot.jit" in text:
            digest.update(path.relative_to(package).as_posix().encode() + b"\0" + text)
    return digest.hexdigest()[:16]


def versioned_cache_dir(root: Path) -> Path:
    """``root``/<kernel sources hash>, created; other versions' caches under ``root`` unused for
    :data:`STALE_CACHE_AGE` are removed (best effort: another process may be using or removing them)."""
    current = root / kernel_sources_hash()
    try:
        current.mkdir(parents=True, exist_ok=True)
        os.utime(current)
        for other in root.iterdir():
            if other != current and other.is_dir() and time.time() - other.stat().st_mtime > STALE_CACHE_AGE:
                shutil.rmtree(other, ignore_errors=True)
    except OSError:
        pass        # a read-only cache root: numba then compiles in memory
    return current


if "NUMBA_CACHE_DIR" not in os.environ:
    os.environ["NUMBA_CACHE_DIR"] = str(versioned_cache_dir(cache_dir()))

import numba  # noqa: E402  (after NUMBA_CACHE_DIR: numba reads its configuration at import)
from numba.core import types  # noqa: E402
from numba.experimental import structref  # noqa: E402
from numba.extending import overload  # noqa: E402, F401  (re-exported: the compiled form of a Python function)


def njit(function=None, *, allocates: bool = True, **options):
    """``numba.njit`` with the project's options: cached on disk and releasing the GIL (``nogil``).

    Releasing the GIL lets a multi-threaded executor serve other callbacks while a
    kernel runs. Use as ``@njit`` or ``@njit(**options)``.

    ``allocates=False`` compiles the kernel without numba's runtime (its ``_nrt`` option, which numba's
    documentation does not list; the flag it sets, ``nrt``, is the one numba turns on for every nopython
    function). The runtime counts references: every array a call receives, every field read from a Model or
    Data and every view is an atomic increment and, later, a decrement. In the rigid-body terms, which the
    1 kHz steps call at every Newton iteration, that was a quarter of a planar_2link step (12.3 → 8.7 µs) and
    of an arm_6dof step (62 → 47 µs). Without the runtime numba also refuses to compile anything that
    allocates, so the option checks the kernel's no-allocation rule at compile time. Array-to-array assignment
    (``out[:] = a``) is one such thing (numba may copy through a temporary when the two overlap): such a kernel
    copies with :func:`.geometry3d.copy_into` instead.
    """
    options = {"cache": True, "nogil": True, **options}
    if not allocates:
        options["_nrt"] = False
    if function is None:
        return numba.njit(**options)
    return numba.njit(**options)(function)


@structref.register
class _BindingType(types.StructRef):
    def preprocess_fields(self, fields):
        return tuple((name, types.unliteral(kind)) for name, kind in fields)


class Binding(structref.StructRefProxy):
    """A compiled capability's Model and its Data as one numba object, ``Binding(model, data)``, for the calls from
    Python into kernels (each module's private ``_bound_*`` functions take it).

    numba types a NamedTuple argument field by field at every call from Python (about 1 µs per array it holds; a
    plain array takes its C fast path), and a Model/Data pair holds tens of arrays; a structref is typed once.
    Its arrays are ``data``'s, so results are read from the Python ``data``."""


structref.define_proxy(Binding, _BindingType, ["model", "data"])


@njit
def bind(model, data):
    """``Binding(model, data)`` built by a compiled function, cached on disk like every kernel: the proxy class's
    own constructor is compiled anew in every process (1-2 s per Model/Data pair, uninterruptible: a node's start-up
    and its Ctrl-C during a first plan waited on it)."""
    return Binding(model, data)
