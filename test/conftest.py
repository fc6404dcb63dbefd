"""Shared fixtures: the ROS 2 integration harness.

ROS tests start node executables as subprocesses on a ROS_DOMAIN_ID unique to
this test session and talk to them with rclpy from the test process (the
package's own RosSession). Every process a test starts is stopped (SIGINT,
then SIGKILL) when the test ends, pass or fail. Without rclpy (a machine with
neither the embedded runtime nor a system ROS 2) the ROS tests skip with the
reason.
"""

import os
import signal
import tempfile
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
VENV = REPO / ".venv"

# One domain per test process: parallel runs on one machine, and the workers of one `pytest -n N` run
# (pytest-xdist; `make test`), never see each other's nodes. A session takes a block of domains from its pid (the
# xdist controller's for its workers) and each worker the next one in it. Domain ids 1..101 are the range every
# DDS vendor maps to distinct ports.
DOMAINS = 101
#: s: the waits a test leaves to the session's defaults, long enough for a loaded machine (a node loading its
#: kernels on a first request while bringup or `stress` runs beside the tests)
DEFAULT_TIMEOUTS = {"call": 120.0, "wait_for_message": 60.0}


def ros_domain_id(environ=os.environ, pid: int | None = None, parent_pid: int | None = None) -> int:
    """This process's ROS_DOMAIN_ID: from its pid, or for an xdist worker ``gwK`` the controller's pid + K."""
    worker = environ.get("PYTEST_XDIST_WORKER", "")
    if worker.startswith("gw"):
        base = os.getppid() if parent_pid is None else parent_pid
        return 1 + (base + int(worker[2:])) % DOMAINS
    return 1 + (os.getpid() if pid is None else pid) % DOMAINS


os.environ["ROS_DOMAIN_ID"] = str(ros_domain_id())
# A suite started in the background by a script (`make test &`, nohup) inherits SIGINT ignored, and so would every
# process a test starts. Python installs its KeyboardInterrupt over a default SIGINT only, so the commands that
# rely on it (`sweep run`) ignored the tests' Ctrl-C. The test processes take the default back: their children
# start with it (a handler, unlike an ignored signal, is reset by exec).
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)
os.environ.setdefault("RMW_IMPLEMENTATION", "rmw_fastrtps_cpp")
os.environ["AMENT_PREFIX_PATH"] = os.pathsep.join(
    p for p in (str(VENV), os.environ.get("AMENT_PREFIX_PATH", "")) if p)


class RosHarness:
    """A RosSession in the test process plus the node processes a test started.

    Waiting that times out fails the test with the started nodes' logs.
    """

    def __init__(self, workdir: Path):
        from discrete_robot.ros.session import RosSession

        self.session = RosSession("test_client")
        self.node = self.session.node
        self.workdir = workdir
        self.processes = []

    def start(self, executable: str, params: dict | None = None, params_file: Path | None = None, args=(),
              ros_args=()):
        """Start ``executable`` with ``params`` (applied whatever the node's name) and an optional YAML file."""
        from discrete_robot.ros.processes import NodeProcess

        process = NodeProcess(executable, self.workdir, params=params, params_file=params_file, args=args,
                              ros_args=ros_args)
        self.processes.append(process)
        return process

    def __getattr__(self, name):
        """wait_for_message, collect, call, publish, spin_until, ... of the session, with logs on timeout (and
        :data:`DEFAULT_TIMEOUTS` where the test gives none)."""
        from discrete_robot.ros.session import RosTimeoutError

        method = getattr(self.session, name)

        def with_logs(*args, **kwargs):
            if name in DEFAULT_TIMEOUTS:
                kwargs.setdefault("timeout", DEFAULT_TIMEOUTS[name])
            try:
                return method(*args, **kwargs)
            except RosTimeoutError as timeout:
                pytest.fail(f"{timeout}\n{self.logs()}")

        return with_logs

    def collect_until(self, topic: str, msg_type, enough, timeout: float, qos=10) -> list[tuple[float, object]]:
        """Every message on ``topic`` with its receive time (monotonic s) until ``enough(received)`` holds, which
        must happen within ``timeout`` s: a count or a span of simulated time, never a wall-clock duration (a
        loaded machine makes the test wait longer, it does not fail it)."""
        received = []
        sub = self.node.create_subscription(msg_type, topic, lambda m: received.append((time.monotonic(), m)), qos)
        try:
            if not self.session.spin_until(lambda: enough(received), timeout):
                pytest.fail(f"{len(received)} messages on {topic} in {timeout} s, not enough\n{self.logs()}")
        finally:
            self.node.destroy_subscription(sub)
        return received

    @staticmethod
    def seconds(stamp) -> float:
        """A builtin_interfaces/Time (a header's stamp, a /clock message's clock) in seconds."""
        return stamp.sec + 1e-9 * stamp.nanosec

    @staticmethod
    def cpu_seconds(process) -> float:
        """CPU time (user + system, s) the running node ``process`` has used: unlike wall time, a loaded machine
        does not inflate it (a process waiting for a core uses none), so it bounds work in a load-robust test."""
        fields = Path(f"/proc/{process.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")   # utime, stime (proc(5))

    @staticmethod
    def wait_exit(process, timeout: float) -> tuple[int, float]:
        """Wait for the node ``process`` to exit: its exit status and the CPU time (s) it used in all (wait4's
        resource usage); fails the test if it runs on for ``timeout`` s."""
        deadline = time.monotonic() + timeout
        while True:
            pid, status, usage = os.wait4(process.process.pid, os.WNOHANG)
            if pid:
                process.process.returncode = os.waitstatus_to_exitcode(status)
                return process.process.returncode, usage.ru_utime + usage.ru_stime
            if time.monotonic() > deadline:
                pytest.fail(f"{process.name} still running {timeout} s on\n{process.log()[-3000:]}")
            time.sleep(0.02)

    def logs(self) -> str:
        return "\n".join(f"--- {p.name} log ---\n{p.log()[-3000:]}" for p in self.processes)

    def close(self) -> None:
        for process in self.processes:
            process.stop()
        self.session.close()


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
