"""The compile cache: one directory per version of the kernels' sources (discrete_robot/jit.py)."""

import os
import time

from discrete_robot import jit


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
