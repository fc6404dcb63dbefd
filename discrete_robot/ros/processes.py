"""Node executables run as child processes (the demo's bringup, the ROS tests' nodes)."""

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import yaml


def ament_environment() -> None:
    """Put this interpreter's prefix on AMENT_PREFIX_PATH when it holds an ament index (the embedded runtime's
    venv) and it is missing, for this process and the nodes it starts.

    A sourced ROS 2 workspace sets the variable; ``make`` exports it for the venv; a user running
    ``.venv/bin/python -m discrete_robot ...`` by hand has neither, and the ament index then finds no message
    definitions (an MCAP recording without schemas) and no package files.
    """
    prefix = str(Path(sys.prefix))
    if not (Path(prefix) / "share" / "ament_index" / "resource_index" / "packages").is_dir():
        return
    paths = [p for p in os.environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep) if p]
    if prefix not in paths:
        os.environ["AMENT_PREFIX_PATH"] = os.pathsep.join([prefix, *paths])


def find_executable(name: str) -> str:
    """A console-script executable: next to this interpreter (the venv), under lib/discrete_robot, or on PATH."""
    prefix = Path(sys.executable).parent
    for candidate in (prefix / name, prefix.parent / "lib" / "discrete_robot" / name):
        if candidate.exists():
            return str(candidate)
    found = shutil.which(name)
    if found is None:
        raise FileNotFoundError(f"executable {name!r} not found: run `make setup`")
    return found


class NodeProcess:
    """An executable started with ROS arguments; its output goes to ``log_path``.

    ``params`` (a dict) become a parameter file under ``/**`` so they apply
    whatever the node is called; ``params_file`` is passed as it is.
    """

    def __init__(self, executable: str, log_dir: Path, params: dict | None = None, params_file: Path | None = None,
                 args=(), ros_args=()):
        log_dir = Path(log_dir)
        log_dir.mkdir(parents=True, exist_ok=True)
        self.name = executable
        command = [find_executable(executable), *args, "--ros-args"]
        if params_file is not None:
            command += ["--params-file", str(params_file)]
        if params:
            override = log_dir / f"{executable}_overrides.yaml"
            override.write_text(yaml.safe_dump({"/**": {"ros__parameters": params}}))
            command += ["--params-file", str(override)]
        command += list(ros_args)
        self.log_path = log_dir / f"{executable}.log"
        self._log = open(self.log_path, "w")  # noqa: SIM115 - closed in stop()
        self.process = subprocess.Popen(command, stdout=self._log, stderr=subprocess.STDOUT,
                                        env=dict(os.environ, PYTHONUNBUFFERED="1"))

    def log(self) -> str:
        if not self._log.closed:
            self._log.flush()
        return self.log_path.read_text()

    def alive(self) -> bool:
        return self.process.poll() is None

    def wait(self, timeout: float) -> int:
        return self.process.wait(timeout=timeout)

    def stop(self, timeout: float = 5.0) -> int | None:
        """SIGINT (as Ctrl-C), then SIGKILL if it has not exited after ``timeout`` s; returns the exit status."""
        if self.alive():
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if not self._log.closed:
            self._log.close()
        return self.process.returncode
