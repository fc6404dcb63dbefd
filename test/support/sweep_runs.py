"""The sweep command line as the sweep tests run it, and the wait for its first kept part."""

import sys
import time
from pathlib import Path

from discrete_robot.sweep.results import PART_SUFFIX, PARTS


def command(spec: Path, output: Path, *options) -> list[str]:
    return [sys.executable, "-m", "discrete_robot", "sweep", "run", str(spec), "--output-dir", str(output),
            "--json", "--no-progress", *options]


def wait_for_first_part(process, output: Path, stderr: Path, limit: float = 600.0) -> None:
    """Until the sweep ``process`` has kept its first part in ``output``; the end of ``stderr`` if it ends first.
    Bounded only so that a hang ends the test (the first result's time depends on the machine's load)."""
    deadline = time.monotonic() + limit
    while not list((output / PARTS).glob(f"*{PART_SUFFIX}")):
        assert process.poll() is None, stderr.read_text()[-3000:]
        assert time.monotonic() < deadline, f"no result in {limit:g} s"
        time.sleep(0.1)
