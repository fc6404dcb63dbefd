"""Compile every numba kernel into the on-disk cache (run by ``make setup``; ``python -m discrete_robot.warmup``).

Each module named in :data:`WARM_UP_MODULES` exposes ``warm_up()``, which calls its
kernels once on a small model with every argument type the package uses, so a node
or CLI started afterwards loads compiled code instead of compiling (see
:mod:`discrete_robot.jit`). A module that holds kernels adds itself here.
"""

import importlib
import time

#: modules with a ``warm_up()`` that compiles their kernels
WARM_UP_MODULES: list[str] = [
    "discrete_robot.space.compiled",
    "discrete_robot.discrete.compiled",
    "discrete_robot.planning.reachability",
    "discrete_robot.pushing.compiled",
]


def main() -> int:
    start = time.perf_counter()
    for name in WARM_UP_MODULES:
        importlib.import_module(name).warm_up()
    print(f"warmup: {len(WARM_UP_MODULES)} kernel modules ready in {time.perf_counter() - start:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
