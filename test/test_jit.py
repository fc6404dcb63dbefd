"""The compile cache: one directory per version of the kernels' sources (discrete_robot/jit.py); kernels that
allocate nothing."""

import os
import time

import numpy as np
import pytest
from numba.core.errors import NumbaError

from discrete_robot import geometry3d, jit


def _package(root, kernel_text):
    (root / "pkg" / "sub").mkdir(parents=True, exist_ok=True)
    (root / "pkg" / "sub" / "kernels.py").write_text(kernel_text)
    (root / "pkg" / "plain.py").write_text("x = 1\n")
    return root / "pkg"


def test_editing_any_kernel_module_starts_a_new_cache_and_other_modules_do_not(tmp_path):
    package = _package(tmp_path, "from discrete_robot.jit import njit\n")
    first = jit.kernel_sources_hash(package)
    (package / "plain.py").write_text("x = 2\n")
    assert jit.kernel_sources_hash(package) == first        # no kernel there: nodes and docs edits keep the cache
    (package / "sub" / "kernels.py").write_text("from discrete_robot.jit import njit\n# edited\n")
    assert jit.kernel_sources_hash(package) != first


def test_caches_of_other_versions_unused_for_a_week_are_removed(tmp_path):
    root = tmp_path / "cache"
    stale, recent = root / "0000000000000000", root / "1111111111111111"
    for directory in (stale, recent):
        directory.mkdir(parents=True)
    week_ago = time.time() - jit.STALE_CACHE_AGE - 60.0
    os.utime(stale, (week_ago, week_ago))
    current = jit.versioned_cache_dir(root)
    assert current == root / jit.kernel_sources_hash()
    assert current.is_dir() and recent.is_dir() and not stale.exists()


def _allocating(x):
    return np.empty(3) + x


def _assigning(x, out):
    out[:] = x


def _copying(x, out):
    geometry3d.copy_into(x, out)


@pytest.mark.parametrize(("function", "arguments"), [(_allocating, (1.0,)), (_assigning, (np.ones(3), np.zeros(3)))])
def test_a_kernel_said_to_allocate_nothing_does_not_compile_if_it_allocates(function, arguments):
    """allocates=False compiles without numba's runtime: an allocation, or an array assignment (which may copy
    through a temporary), is a compile error rather than a hidden cost at 1 kHz."""
    with pytest.raises(NumbaError):
        jit.njit(function, allocates=False, cache=False)(*arguments)


def test_a_kernel_said_to_allocate_nothing_copies_element_by_element():
    out = np.zeros(3)
    jit.njit(_copying, allocates=False, cache=False)(np.arange(3.0), out)
    assert out.tolist() == [0.0, 1.0, 2.0]
