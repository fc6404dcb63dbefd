"""Each pytest-xdist worker of one run gets a ROS domain of its own, and a run without xdist one from its pid."""

import importlib.util
import os
import subprocess
import sys
from pathlib import Path


def _conftest():
    spec = importlib.util.spec_from_file_location("_conftest", Path(__file__).resolve().parents[1] / "conftest.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_workers_of_one_run_have_distinct_domains_in_the_portable_range():
    conftest = _conftest()
    domains = [conftest.ros_domain_id({"PYTEST_XDIST_WORKER": f"gw{k}"}, parent_pid=4242) for k in range(8)]
    assert len(set(domains)) == 8
    assert all(1 <= d <= conftest.DOMAINS for d in domains)
    assert conftest.ros_domain_id({}, pid=4242) == 1 + 4242 % conftest.DOMAINS


def _one_line_refusal(command, environ, status):
    result = subprocess.run(command, capture_output=True, text=True, timeout=300, env={**os.environ, **environ})
    output = (result.stdout + result.stderr).strip()
    assert result.returncode == status, output
    assert len(output.splitlines()) == 1 and "Traceback" not in output, output
    return output


def test_a_domain_id_above_232_is_refused_in_one_line_by_a_node_bringup_and_an_experiment():
    """Fast DDS ends a process whose ROS_DOMAIN_ID puts its ports past 65535 itself, at the first node, in its own
    two log lines ("Calculated port number is too high"), and bringup then logged one failure per node."""
    venv_bin = Path(sys.executable).parent
    environ = {"ROS_DOMAIN_ID": "240", "RMW_IMPLEMENTATION": "rmw_fastrtps_cpp"}
    for command, status in (([str(venv_bin / "discrete_robot_node")], 1), ([str(venv_bin / "bringup")], 1),
                            ([sys.executable, "-m", "discrete_robot", "experiment", "plan-execute", "--no-record",
                              "--start-bringup"], 2)):
        line = _one_line_refusal(command, environ, status)
        assert "ROS_DOMAIN_ID" in line and "must be in [0, 232], got 240" in line, line
        assert "RTPS" not in line, line
