"""The output folder (issue 41): ``--resume`` with another spec is refused and leaves the folder byte for byte
as it was; a folder that cannot be written (under a regular file, under /proc, on a read-only file system) is
one ``error:`` line with status 2; a disk that fills up mid-sweep ends it naming the error, with the rows written
before kept and nothing half written left.

The folders of a finished sweep are made in process (the worker's function :func:`engine.run_cases` and the
store, no Ray), so that the CLI runs here start no Ray unless the test is about a running sweep. The read-only
and full file systems are real: a tmpfs mounted in a user and mount namespace of its own (``unshare -rm``; the
tests are skipped where unprivileged namespaces are not allowed)."""

import errno
import hashlib
import importlib.util
import pickle
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from discrete_robot.sweep.commands import prepare
from discrete_robot.sweep.engine import Batch, run_cases
from discrete_robot.sweep.results import PART_SUFFIX, PARTS, RESULTS, SPEC, FolderError, ResultStore
from discrete_robot.sweep.spec import spec_digest, spec_text

pytestmark = pytest.mark.skipif(importlib.util.find_spec("ray") is None, reason="needs ray (make setup)")

PUSHES = {"experiment": "predict-push", "seed": 5, "samples": 3,
          "random": {"contact_fraction": {"uniform": [0.0, 1.0]}}}


def command(spec: Path, output: Path, *options) -> list[str]:
    return [sys.executable, "-m", "discrete_robot", "sweep", "run", str(spec), "--output-dir", str(output),
            "--no-progress", *options]


def finished_folder(folder: Path, raw: dict) -> dict[str, bytes]:
    """``folder`` as a finished sweep of ``raw`` leaves it (every case computed by the worker's function, merged
    into results.parquet); the bytes of each of its files."""
    _, experiment, cases = prepare(raw)
    store = ResultStore(folder, experiment, False, spec_text(raw), spec_digest(raw))
    part, _, _ = run_cases(experiment, pickle.dumps(Batch.of(cases)), 60.0)
    store.write(part, len(cases))
    store.consolidate()
    return folder_bytes(folder)


def folder_bytes(folder: Path) -> dict[str, bytes]:
    return {str(path.relative_to(folder)): path.read_bytes() for path in sorted(folder.rglob("*")) if path.is_file()}


def one_error_line(result: subprocess.CompletedProcess) -> str:
    """The one line of a refused command (status 2, no traceback)."""
    assert result.returncode == 2, result.stderr[-3000:]
    lines = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr[-3000:]
    return lines[0]


def test_resume_with_another_spec_is_refused_and_leaves_the_folder_as_it_was(tmp_path):
    folder = tmp_path / "out"
    before = finished_folder(folder, PUSHES)
    digest = hashlib.sha256(before[RESULTS]).hexdigest()
    other = tmp_path / "other.yaml"
    other.write_text(yaml.safe_dump({**PUSHES, "samples": 4}))
    result = subprocess.run(command(other, folder, "--resume"), capture_output=True, text=True, timeout=300)
    line = one_error_line(result)
    assert line.startswith(f"error: --resume: {folder} holds the results of another spec ({folder / SPEC} sha256 "
                           f"{spec_digest(PUSHES)[:12]}, this spec {spec_digest({**PUSHES, 'samples': 4})[:12]})")
    after = folder_bytes(folder)
    assert after == before and hashlib.sha256(after[RESULTS]).hexdigest() == digest

    # the same spec, written otherwise (key order, a comment, flow style): every case is kept, none computed (and
    # so no Ray started)
    same = tmp_path / "same.yaml"
    same.write_text("# the same sweep\n" + yaml.safe_dump(dict(reversed(PUSHES.items())), default_flow_style=True))
    result = subprocess.run(command(same, folder, "--resume", "--json"), capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    summary = yaml.safe_load(result.stdout)
    assert (summary["cases"], summary["reused"], summary["computed"]) == (3, 3, 0)
    assert folder_bytes(folder)[RESULTS] == before[RESULTS]


def test_resume_is_refused_where_the_spec_of_the_results_is_unknown(tmp_path):
    folder = tmp_path / "out"
    finished_folder(folder, PUSHES)
    (folder / SPEC).unlink()
    before = folder_bytes(folder)
    spec = tmp_path / "spec.yaml"
    spec.write_text(yaml.safe_dump(PUSHES))
    line = one_error_line(subprocess.run(command(spec, folder, "--resume"), capture_output=True, text=True,
                                         timeout=300))
    assert line.startswith(f"error: --resume: {folder} holds results but its spec cannot be read (spec "
                           f"{folder / SPEC}: cannot be read (No such file or directory))")
    assert folder_bytes(folder) == before


def unshare_works() -> bool:
    if shutil.which("unshare") is None:
        return False
    return subprocess.run(["unshare", "-rm", "true"], capture_output=True).returncode == 0


def in_a_tmpfs(mount_point: Path, options: str, argv: list[str], timeout: float) -> subprocess.CompletedProcess:
    """``argv`` run with a tmpfs (``options``) mounted at ``mount_point`` in a namespace of its own (gone with
    the command)."""
    script = f'mount -t tmpfs -o {options} tmpfs "$1" && shift && exec "$@"'
    return subprocess.run(["unshare", "-rm", "sh", "-c", script, "sh", str(mount_point), *argv],
                          capture_output=True, text=True, timeout=timeout)


@pytest.mark.parametrize("where", ["under a file", "a file", "under /proc", "read-only"])
def test_a_folder_that_cannot_be_written_is_one_line_with_status_2(tmp_path, where):
    spec = tmp_path / "spec.yaml"
    spec.write_text(yaml.safe_dump(PUSHES))
    (tmp_path / "file").write_text("not a folder")
    folder, reason = {"under a file": (tmp_path / "file" / "out", f"cannot create {tmp_path}/file/out/{PARTS} "
                                                                  "(Not a directory)"),
                      "a file": (tmp_path / "file", f"{tmp_path}/file is a file, not a folder"),
                      "under /proc": (Path("/proc/self/out"), f"cannot create /proc/self/out/{PARTS} (No such file "
                                                              "or directory)"),
                      "read-only": (tmp_path / "ro" / "out", f"cannot create {tmp_path}/ro/out/{PARTS} (Read-only "
                                                             "file system)")}[where]
    if where == "read-only":
        if not unshare_works():
            pytest.skip("unprivileged user and mount namespaces are not allowed here")
        (tmp_path / "ro").mkdir()
        result = in_a_tmpfs(tmp_path / "ro", "ro,size=1m", command(spec, folder), 300)
    else:
        result = subprocess.run(command(spec, folder), capture_output=True, text=True, timeout=300)
    assert one_error_line(result) == f"error: --output-dir: {reason}"


def test_a_write_that_fails_leaves_nothing_half_written(tmp_path, monkeypatch):
    """The seam every file of the folder goes through: a write that fills the disk half way is removed, and the
    error names the file; the rows written before stay readable."""
    _, experiment, cases = prepare(PUSHES)
    store = ResultStore(tmp_path, experiment, False, spec_text(PUSHES), spec_digest(PUSHES))
    part, _, _ = run_cases(experiment, pickle.dumps(Batch.of(cases)), 60.0)
    store.write(part, len(cases))
    write_bytes = Path.write_bytes

    def half_then_full(path, data):
        write_bytes(path, data[:len(data) // 2])
        raise OSError(errno.ENOSPC, "No space left on device", str(path))

    monkeypatch.setattr(Path, "write_bytes", half_then_full)
    with pytest.raises(FolderError) as error:
        store.write(part, len(cases))
    assert str(error.value).startswith(f"--output-dir: cannot write {tmp_path}/{PARTS}/{store.run}-000002"
                                       f"{PART_SUFFIX} (No space left on device); the 3 rows this run wrote before")
    with pytest.raises(FolderError, match=rf"cannot write {tmp_path}/{RESULTS} \(No space left on device\)"):
        store.consolidate()
    monkeypatch.undo()
    assert [path.name for path in sorted(tmp_path.rglob("*")) if path.is_file()] == [
        f"{store.run}-000001{PART_SUFFIX}", SPEC]
    assert [row["case"] for row in store.read().to_pylist()] == [case.id for case in cases]


@pytest.mark.slow
def test_a_disk_that_fills_up_ends_the_sweep_naming_the_error_and_keeps_the_rows(tmp_path):
    """A real full file system: a 64 kB tmpfs, 3000 cases in tasks of 50 (11 kB a part). The sweep ends with one
    line naming the part it could not write; the parts written before hold whole rows; nothing ``.tmp`` is left;
    and the same spec resumes from them where there is room."""
    if not unshare_works():
        pytest.skip("unprivileged user and mount namespaces are not allowed here")
    raw = {**PUSHES, "samples": 3000, "batch": 50}
    spec = tmp_path / "spec.yaml"
    spec.write_text(yaml.safe_dump(raw))
    mount = tmp_path / "small"
    mount.mkdir()
    copy = tmp_path / "kept"
    script = [sys.executable, "-c", "import shutil, subprocess, sys; "
              "done = subprocess.run(sys.argv[3:]); shutil.copytree(sys.argv[1], sys.argv[2]); "
              "sys.exit(done.returncode)", str(mount / "out"), str(copy), *command(spec, mount / "out", "--workers",
                                                                                   "1")]
    line = one_error_line(in_a_tmpfs(mount, "size=64k", script, 600))
    assert line.startswith(f"error: --output-dir: cannot write {mount}/out/{PARTS}/")
    assert "(No space left on device); the " in line and "--resume goes on from them" in line
    files = sorted(path.name for path in copy.rglob("*") if path.is_file())
    assert not [name for name in files if name.endswith(".tmp")] and SPEC in files and RESULTS not in files
    _, experiment, cases = prepare(raw)
    rows = ResultStore(copy, experiment, True).read().to_pylist()
    assert rows and len(rows) % 50 == 0 and all(row["status"] == "ok" for row in rows)
    assert {row["case"] for row in rows} <= {case.id for case in cases}
    result = subprocess.run(command(spec, copy, "--resume", "--workers", "1", "--json"), capture_output=True,
                            text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    summary = yaml.safe_load(result.stdout)
    assert (summary["reused"], summary["computed"]) == (len(rows), 3000 - len(rows))
