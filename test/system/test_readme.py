"""README.md and docs/nodes.md document what the package really has: the commands, every node and parameter."""

import importlib
from pathlib import Path

import pytest

from discrete_robot.ros.bringup import COMPONENTS

REPO = Path(__file__).resolve().parents[2]
README = (REPO / "README.md").read_text()
#: the nodes' reference: topics, services and the parameter tables (the README links it)
NODES = (REPO / "docs" / "nodes.md").read_text()


def test_readme_gives_the_two_commands_and_ci_runs_the_test_command():
    assert "make setup" in README and "make test" in README and "make demo" in README
    assert "make test" in (REPO / ".ci" / "run").read_text()
    assert "(docs/nodes.md)" in README, "the README no longer links the nodes' reference"


@pytest.mark.parametrize("component", COMPONENTS, ids=lambda c: c.node)
def test_docs_list_every_node_and_parameter(component):
    assert f"`{component.node}`" in README
    assert f"`{component.node}`" in NODES
    module = importlib.import_module(component.module)
    missing = [spec.name for spec in module.PARAMETERS if f"`{spec.name}`" not in NODES]
    assert not missing, f"docs/nodes.md does not document {component.node}'s parameters {missing}"
