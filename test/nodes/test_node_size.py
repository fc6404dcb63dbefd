"""Issue 37: a node declares its parameters, creates its endpoints and delegates, so every file of
discrete_robot/nodes/ stays short (at most 250 lines); the logic lives in the core and in control/."""

from pathlib import Path

NODES = Path(__file__).resolve().parents[2] / "discrete_robot" / "nodes"
MAX_LINES = 250


def test_every_node_file_is_at_most_250_lines():
    lengths = {path.name: len(path.read_text().splitlines()) for path in sorted(NODES.glob("*.py"))}
    assert len(lengths) > 20
    assert {name: n for name, n in lengths.items() if n > MAX_LINES} == {}
