"""README.md documents what the package really has: the two commands, every node and parameter."""

import importlib
from pathlib import Path

import pytest

from discrete_robot.ros.bringup import COMPONENTS

REPO = Path(__file__).resolve().parents[2]
README = (REPO / "README.md").read_text()


def test_readme_gives_the_two_commands_and_ci_runs_the_test_command():
    assert "make demo" in README and "make test" in README
    assert "make test" in (REPO / ".ci" / "run").read_text()


@pytest.mark.parametrize("component", COMPONENTS, ids=lambda c: c.node)
def test_readme_lists_every_node_and_parameter(component):
    assert f"`{component.node}`" in README
    module = importlib.import_module(component.module)
    missing = [spec.name for spec in module.PARAMETERS if f"`{spec.name}`" not in README]
    assert not missing, f"README does not document {component.node}'s parameters {missing}"
