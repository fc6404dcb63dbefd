"""xacro expanded in a bounded child process: CPU time, memory and wall clock limited, every file it reads checked.

A xacro file is a program: its ``${...}`` expressions are Python (xacro's filter is no sandbox: a lambda reaches
``__import__``), ``$(env ...)`` reads the environment, ``xacro:include`` and ``xacro.load_yaml`` read any file.
The ``xacro`` command runs it with the user's rights, and so does this: load only files you trust
(docs/model_format.md). What this module adds is that no file, trusted or not, can hang or exhaust the
process that loads it:

- the expansion runs in a child (``python -c`` running this file, which imports xacro, PyYAML and
  :mod:`discrete_robot.config_files`, not numpy) with ``RLIMIT_CPU`` = :data:`CPU_SECONDS` and ``RLIMIT_AS`` =
  :data:`MEMORY_BYTES` (or less when the caller's own limit is lower), and is killed after
  :data:`WALL_SECONDS` of wall-clock time or when :data:`discrete_robot.budget.STOP` is set (Ctrl-C);
- every file xacro opens (the top file, each ``xacro:include`` after ``$(find pkg)`` is resolved, each
  ``load_yaml``) is read through :func:`discrete_robot.config_files.read_text`: a regular file of at most 10 MB
  of UTF-8, never blocking on a FIFO or a device;
- the URDF it produces is at most :data:`~discrete_robot.config_files.MAX_FILE_BYTES`.

A refusal is one :class:`~discrete_robot.errors.ModelError` line naming the file and the limit.
"""

import json
import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

#: s of CPU time the expansion may use (a large robot's xacro expands in well under 1 s)
CPU_SECONDS = 8
#: s of wall-clock time before the child is killed (CPU time plus waiting on a loaded machine)
WALL_SECONDS = 15
#: bytes of address space the child may map (Python and xacro take about 60 MB of it)
MEMORY_BYTES = 2 ** 30
#: s between two looks at the stop flag while the child runs
_POLL_SECONDS = 0.1
#: the child's exit status for a refusal it explains on its last line of stderr
_REFUSED = 2


def expand(path, args: dict | None = None) -> str:
    """The URDF text of the xacro file ``path`` with its ``xacro:arg`` s set from ``args`` (name -> value),
    expanded within the limits above; ModelError naming the file and the reason (or the limit) otherwise."""
    from discrete_robot import budget
    from discrete_robot.errors import ModelError

    mappings = {str(key): str(value) for key, value in (args or {}).items()}
    where = f"xacro file {path}"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(Path(__file__).resolve().parents[2]),
                                                                    os.environ.get("PYTHONPATH")])))
    child = subprocess.Popen(  # noqa: S603 -- this interpreter running this file, arguments as a list
        [sys.executable, "-c", "import runpy, sys; sys.argv.pop(0); runpy.run_path(sys.argv[0], run_name='__main__')",
         __file__, str(path), json.dumps(mappings)],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    deadline = time.monotonic() + WALL_SECONDS
    try:
        while True:
            try:
                output, errors = child.communicate(timeout=_POLL_SECONDS)
                break
            except subprocess.TimeoutExpired:
                if budget.STOP.is_set():
                    raise ModelError(f"{where}: expansion stopped (the process is stopping)") from None
                if time.monotonic() >= deadline:
                    raise ModelError(f"{where}: expansion took longer than the wall-clock limit of "
                                     f"{WALL_SECONDS} s") from None
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    if child.returncode == 0:
        return output.decode("utf-8")
    if child.returncode in (-signal.SIGXCPU, -signal.SIGKILL):
        raise ModelError(f"{where}: expansion used more than the CPU-time limit of {CPU_SECONDS} s")
    lines = errors.decode("utf-8", "replace").strip().splitlines()
    if child.returncode == _REFUSED and lines:
        raise ModelError(f"{where}: {lines[-1]}")
    last = f": {lines[-1]}" if lines else ""
    raise ModelError(f"{where}: expansion failed (exit status {child.returncode}){last}")


# ----------------------------------------------------------------------------------------------- the child


def _limit(kind: int, value: int) -> None:
    """Lower the soft and hard limit ``kind`` to ``value`` (never raise one the parent set lower)."""
    soft, hard = resource.getrlimit(kind)
    value = value if hard == resource.RLIM_INFINITY else min(value, hard)
    resource.setrlimit(kind, (value if soft == resource.RLIM_INFINITY else min(value, soft), value))


def _reason(error: BaseException) -> str:
    """One line for an expansion's failure: the limit for a MemoryError, the file for a refused file (both
    wrapped by xacro, as its ``exc``, or chained), else the error itself."""
    from discrete_robot.errors import ModelError

    seen, stack = set(), [error]
    while stack:
        current = stack.pop()
        if current is None or id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, MemoryError):
            return f"expansion needs more than the memory limit of {MEMORY_BYTES / 2 ** 20:g} MB"
        if isinstance(current, ModelError):
            return str(current)
        stack += [getattr(current, "exc", None), current.__cause__, current.__context__]
    text = " ".join(str(error).split()) or repr(error)
    return f"{type(error).__name__}: {text}"


def _child(path: str, mappings: dict) -> int:
    _limit(resource.RLIMIT_AS, MEMORY_BYTES)
    _limit(resource.RLIMIT_CPU, CPU_SECONDS)
    import io

    import xacro

    from discrete_robot.config_files import MAX_FILE_BYTES, read_text
    from discrete_robot.errors import ModelError

    def checked_open(file, mode="r", *args, **kwargs):
        """xacro's ``open`` (a module global shadows the builtin for all its functions): a file read through
        the start-up file rules."""
        if mode not in ("r", "rt"):
            raise ModelError(f"file {file}: xacro may only read files, not open them with mode {mode!r}")
        return io.StringIO(read_text(file, "included file" if str(file) != path else "file"))

    xacro.open = checked_open
    try:
        text = xacro.process_file(path, mappings=mappings).toprettyxml(indent="  ")
        data = text.encode("utf-8")
        if len(data) > MAX_FILE_BYTES:
            raise ModelError(f"the expanded URDF is larger than {MAX_FILE_BYTES} bytes "
                             f"({MAX_FILE_BYTES / 2 ** 20:g} MB), the most a start-up file may hold")
    except Exception as error:  # noqa: BLE001 -- xacro raises XacroException, NameError, OSError, ...: one line
        print(_reason(error), file=sys.stderr)
        return _REFUSED
    sys.stdout.buffer.write(data)
    return 0


if __name__ == "__main__":
    sys.exit(_child(sys.argv[1], json.loads(sys.argv[2])))
