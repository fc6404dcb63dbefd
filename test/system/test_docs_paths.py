"""The developer documents name files that exist: references.md's "used in" column and CONTRIBUTING.md."""

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
#: a backticked relative path of a Python module, e.g. `space/kernels.py` or `bench/bench_space.py`
PATH = re.compile(r"`([\w/]+\.py)`")


def _exists(path: str) -> bool:
    """A path given from the repository root or, as the docs write core modules, from discrete_robot/."""
    return (REPO / path).is_file() or (REPO / "discrete_robot" / path).is_file()


@pytest.mark.parametrize("document", ["docs/references.md", "CONTRIBUTING.md"])
def test_every_module_a_document_names_exists(document):
    named = set(PATH.findall((REPO / document).read_text()))
    assert named, f"{document} names no module: the pattern no longer matches its style"
    missing = sorted(path for path in named if not _exists(path))
    assert not missing, f"{document} names modules that do not exist: {missing}"
