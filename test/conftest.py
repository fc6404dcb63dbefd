"""Shared fixtures: the ROS 2 integration harness.

ROS tests start node executables as subprocesses on a ROS_DOMAIN_ID unique to
this test session and talk to them with rclpy from the test process. Every
process a test starts is stopped (SIGINT, then SIGKILL) when the test ends,
pass or fail. Without rclpy (a machine with neither the embedded runtime nor
a system ROS 2) the ROS tests skip with the reason.
"""

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parent.parent
VENV = REPO / ".venv"

# One domain per test session, chosen from the pid so parallel runs on one machine do not see each other.
# Domain ids 1..101 are the range every DDS vendor maps to distinct ports.
os.environ["ROS_DOMAIN_ID"] = str(1 + os.getpid() % 101)
os.environ.setdefault("RMW_IMPLEMENTATION", "rmw_fastrtps_cpp")
os.environ["AMENT_PREFIX_PATH"] = os.pathsep.join(
    p for p in (str(VENV), os.environ.get("AMENT_PREFIX_PATH", "")) if p)


def find_executable(name: str) -> str:
    """The node executable: next to this interpreter, in the venv, or on PATH."""
    for folder in (Path(sys.executable).parent, VENV / "bin", VENV / "lib" / "discrete_robot"):
        candidate = folder / name
        if candidate.exists():
            return str(candidate)
    found = shutil.which(name)
    if found is None:
        pytest.fail(f"executable {name!r} not found: run `make setup`")
    return found


class NodeProcess:
    """A node executable running as a subprocess, its output kept in a log file."""

    def __init__(self, executable: str, params: dict | None, params_file: Path | None, extra_args, workdir: Path):
        self.name = executable
        args = [find_executable(executable), "--ros-args"]
        if params_file is not None:
            args += ["--params-file", str(params_file)]
        if params:
            override = workdir / f"{executable}_overrides.yaml"
            override.write_text(yaml.safe_dump({"/**": {"ros__parameters": params}}))
            args += ["--params-file", str(override)]
        args += list(extra_args)
        self.log_path = workdir / f"{executable}.log"
        self._log = open(self.log_path, "w")  # noqa: SIM115 - closed in stop()
        self.process = subprocess.Popen(args, stdout=self._log, stderr=subprocess.STDOUT,
                                        env=dict(os.environ, PYTHONUNBUFFERED="1"))

    def log(self) -> str:
        self._log.flush()
        return self.log_path.read_text()

    def alive(self) -> bool:
        return self.process.poll() is None

    def wait(self, timeout: float) -> int:
        return self.process.wait(timeout=timeout)

    def stop(self, timeout: float = 5.0) -> int | None:
        """SIGINT (as Ctrl-C) and wait; SIGKILL if it does not stop in time."""
        if self.alive():
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._log.close()
        return self.process.returncode


class RosHarness:
    """An rclpy node in the test process plus the node processes a test started."""

    def __init__(self, workdir: Path):
        import rclpy
        from rclpy.executors import SingleThreadedExecutor

        self.rclpy = rclpy
        self.context = rclpy.Context()
        rclpy.init(context=self.context)
        self.node = rclpy.create_node(f"test_client_{os.getpid()}", context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self.workdir = workdir
        self.processes: list[NodeProcess] = []
        self._publishers = {}

    def start(self, executable: str, params: dict | None = None, params_file: Path | None = None,
              args=()) -> NodeProcess:
        """Start ``executable`` with ``params`` (node-name independent overrides) and optional YAML file."""
        process = NodeProcess(executable, params, params_file, args, self.workdir)
        self.processes.append(process)
        return process

    def spin_until(self, condition, timeout: float, step: float = 0.05) -> bool:
        """Spin the test node until ``condition()`` is true or ``timeout`` seconds pass."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if condition():
                return True
            self.executor.spin_once(timeout_sec=step)
        return bool(condition())

    def collect(self, topic: str, msg_type, duration: float, qos=10) -> list[tuple[float, object]]:
        """Every message on ``topic`` during ``duration`` seconds, with its receive time (monotonic s)."""
        received = []
        sub = self.node.create_subscription(msg_type, topic, lambda m: received.append((time.monotonic(), m)), qos)
        try:
            self.spin_until(lambda: False, duration)
        finally:
            self.node.destroy_subscription(sub)
        return received

    def wait_for_message(self, topic: str, msg_type, timeout: float = 15.0, qos=10, predicate=None):
        """The first message on ``topic`` that satisfies ``predicate``; fails the test on timeout."""
        received = []

        def keep(msg):
            if predicate is None or predicate(msg):
                received.append(msg)

        sub = self.node.create_subscription(msg_type, topic, keep, qos)
        try:
            if not self.spin_until(lambda: received, timeout):
                pytest.fail(f"no message on {topic} within {timeout} s\n{self._logs()}")
        finally:
            self.node.destroy_subscription(sub)
        return received[0]

    def publish(self, topic: str, msg, qos=10) -> None:
        """Publish ``msg`` on ``topic`` (the publisher is kept so subscribers stay matched)."""
        key = (topic, type(msg))
        if key not in self._publishers:
            self._publishers[key] = self.node.create_publisher(type(msg), topic, qos)
            self.spin_until(lambda: self._publishers[key].get_subscription_count() > 0, 5.0)
        self._publishers[key].publish(msg)

    def call(self, srv_type, name: str, request, timeout: float = 30.0):
        """Call service ``name`` and return its response; fails the test if it is not up or does not answer."""
        client = self.node.create_client(srv_type, name)
        try:
            if not client.wait_for_service(timeout_sec=timeout):
                pytest.fail(f"service {name} not available within {timeout} s\n{self._logs()}")
            future = client.call_async(request)
            if not self.spin_until(future.done, timeout):
                pytest.fail(f"service {name} did not answer within {timeout} s\n{self._logs()}")
            return future.result()
        finally:
            self.node.destroy_client(client)

    def _logs(self) -> str:
        return "\n".join(f"--- {p.name} log ---\n{p.log()[-3000:]}" for p in self.processes)

    def close(self) -> None:
        for process in self.processes:
            process.stop()
        self.executor.shutdown()
        self.node.destroy_node()
        self.rclpy.try_shutdown(context=self.context)


@pytest.fixture
def ros():
    """The ROS harness; skips the test where rclpy cannot be imported."""
    pytest.importorskip("rclpy", reason="needs ROS 2 (run `make setup` for the embedded runtime)")
    with tempfile.TemporaryDirectory(prefix="discrete_robot_ros_") as workdir:
        harness = RosHarness(Path(workdir))
        try:
            yield harness
        finally:
            harness.close()
