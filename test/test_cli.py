"""The command line builds every capability's parser (what ``--help`` needs) without importing a numerical
library, compiled kernels, plotting or ROS: those load only when a command runs."""

import subprocess
import sys

import pytest

from discrete_robot.cli import CAPABILITIES

HEAVY = ("scipy", "numba", "matplotlib", "rclpy", "discrete_robot.jit")


@pytest.mark.parametrize("capability", list(CAPABILITIES))
def test_building_a_capabilitys_parser_imports_nothing_heavy(capability):
    probe = (f"import sys; from discrete_robot.cli import build_parser; build_parser({capability!r}); "
             f"print(','.join(m for m in {HEAVY!r} if m in sys.modules))")
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout.strip()
    assert loaded == "", f"building the {capability} parser imported {loaded}"
