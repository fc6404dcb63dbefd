"""Compile every numba kernel into the on-disk cache (run by ``make setup``; ``python -m discrete_robot.warmup``).

Each module named in :data:`WARM_UP_MODULES` exposes ``warm_up()``, which calls its
kernels once on a small model with the argument types the package uses, so a node
or CLI started afterwards loads compiled code instead of compiling (see
:mod:`discrete_robot.jit`). A module that holds kernels adds itself here.

The modules compile in parallel processes, one per core (numba compiles in one thread, and each module's
kernels are cached in files of their own), the longest first so that the last to finish starts early.
"""

import importlib
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor

#: modules with a ``warm_up()`` that compiles their kernels, the longest to compile first
WARM_UP_MODULES: list[str] = [
    "discrete_robot.space.compiled",
    "discrete_robot.discrete.compiled",
    "discrete_robot.pushing.compiled",
    "discrete_robot.planning.reachability",
    "discrete_robot.planning.dmoc_compiled",
]


def warm_up(name: str) -> float:
    """Compile one module's kernels; the seconds it took."""
    start = time.perf_counter()
    importlib.import_module(name).warm_up()
    return time.perf_counter() - start


def main(workers: int | None = None) -> int:
    workers = workers or min(len(WARM_UP_MODULES), os.cpu_count() or 1)
    start = time.perf_counter()
    if workers > 1:
        with ProcessPoolExecutor(workers) as pool:
            seconds = list(pool.map(warm_up, WARM_UP_MODULES))
    else:
        seconds = [warm_up(name) for name in WARM_UP_MODULES]
    each = ", ".join(f"{name.split('.', 1)[1]} {s:.0f} s" for name, s in zip(WARM_UP_MODULES, seconds, strict=True))
    print(f"warmup: {len(WARM_UP_MODULES)} kernel modules ready in {time.perf_counter() - start:.1f} s "
          f"({workers} processes: {each})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(int(sys.argv[1]) if len(sys.argv) > 1 else None))
