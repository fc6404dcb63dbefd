"""Run every benchmark module (bench/bench_*.py) and write their entries to one JSON file.

Each module exposes ``run() -> list[dict]``; an entry states a ratio measured
against a baseline in the same run (absolute times on shared machines are
noisy; ratios much less so), named in its ``baseline`` (and ``peer``, the library). One direction for every
ratio against a peer: how many times faster (or more accurate) ours is, the peer's time (error) / ours, above
1 when ours is better, as docs/benchmarks.md's tables show it; ratios that are not comparisons (growth with size, a
drift, an overhead) say so in their ``unit``. Usage: ``python bench/run.py [--output F] [--only NAME ...]``.
"""

import argparse
import importlib.util
import json
import platform
import sys
import time
import traceback
from pathlib import Path

import numpy as np
import scipy

from discrete_robot.cli import to_jsonable

BENCH_DIR = Path(__file__).resolve().parent


def load(path: Path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", type=Path, default=Path("results/bench.json"))
    parser.add_argument("--only", nargs="*", help="module names without bench_ (e.g. discrete push)")
    args = parser.parse_args()
    report = {"machine": {"python": platform.python_version(), "numpy": np.__version__, "scipy": scipy.__version__,
                          "processor": platform.processor() or platform.machine()},
              "started": time.strftime("%Y-%m-%dT%H:%M:%S"), "benchmarks": {}, "failed": {}}
    for path in sorted(BENCH_DIR.glob("bench_*.py")):
        name = path.stem.removeprefix("bench_")
        if args.only and name not in args.only:
            continue
        print(f"bench: {name} ...", file=sys.stderr, flush=True)
        start = time.perf_counter()
        try:
            report["benchmarks"][name] = load(path).run()
        except Exception:  # one broken benchmark must not hide the others' figures
            report["failed"][name] = traceback.format_exc()
        print(f"bench: {name} done in {time.perf_counter() - start:.1f} s", file=sys.stderr, flush=True)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(to_jsonable(report), indent=2))
    for name, entries in report["benchmarks"].items():
        for entry in entries:
            print(f"{name:10s} {entry['name']:50s} ratio {entry.get('ratio', float('nan')):10.3g}  "
                  f"vs {entry.get('baseline', '')} ({entry.get('unit', 'the peer / ours')})")
    print(f"wrote {args.output}")
    return 1 if report["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
