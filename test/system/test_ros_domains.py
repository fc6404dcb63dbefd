"""Each pytest-xdist worker of one run gets a ROS domain of its own, and a run without xdist one from its pid."""

import importlib.util
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
