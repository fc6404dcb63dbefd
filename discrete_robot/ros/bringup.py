"""Bringup: every discrete_robot node, each in its own process, as bringup.launch.py starts them.

For machines with rclpy but no launch system. It starts the nodes that
launch/bringup.launch.py starts, with the same config/*.yaml files (a test
checks that the two name the same nodes, executables and files), each as its
own process, as ``ros2 launch`` does: the nodes' Python then runs on every core.
(In one process, one interpreter lock serialised them all: the simulators fell
behind their publish rates once everything else ran beside them.)
A node that fails to start is reported by name, with its own one-line reason, and the
others run on. Ctrl-C or SIGTERM stops every node cleanly; the exit status is 1 if any node failed.

    bringup [--only discrete_robot_node ...] [--model-file /path/arm.yaml] [--namespace NS]
            [--foxglove [PORT]] [--ros-args ...]

``--model-file`` goes to the arm's simulator and planner only, as bringup.launch.py's
``model_file`` argument does (``-p model_file:=`` would reach the space robot too).
``--namespace NS`` puts every node under /NS (``-r __ns:=/NS``) and prefixes the arm's TF frames with ``NS/``,
so two systems share one /tf; arguments after ``--ros-args`` go to every node unchanged.
``--foxglove [PORT]`` also serves every topic over the Foxglove WebSocket protocol on 127.0.0.1:PORT (8765)
(:mod:`discrete_robot.ros.foxglove_bridge`): a live 3D view in Foxglove without a system ROS 2.
"""

import argparse
import contextlib
import ctypes
import importlib
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass

from discrete_robot.errors import InputError
from discrete_robot.model.description import package_config_path
from discrete_robot.ros.processes import find_executable
from discrete_robot.validation import dds_domain_id

#: the Foxglove bridge's port when ``--foxglove`` names none (Foxglove's default)
FOXGLOVE_PORT = 8765
#: s to wait for the nodes after a stop (each sees its stop flag within 0.1 s and shuts down within 1 s)
STOP_WAIT_S = 1.5
_PR_SET_PDEATHSIG = 1


@dataclass(frozen=True)
class Component:
    """One node of the system: its name (= console_scripts executable), config and launch file.

    ``arm_model`` marks the nodes that load the arm model given as bringup's model file; ``overrides`` are
    parameters set on top of the config file, as bringup.launch.py sets them.
    """

    node: str
    config: str
    launch_file: str
    arm_model: bool = False
    overrides: tuple[tuple[str, object], ...] = ()

    @property
    def module(self) -> str:
        return f"discrete_robot.nodes.{self.node}"

    def node_class(self) -> type:
        module = importlib.import_module(self.module)
        return next(value for value in vars(module).values()
                    if isinstance(value, type) and getattr(value, "NODE_NAME", None) == self.node)


COMPONENTS = (
    Component("discrete_robot_node", "discrete_robot.yaml", "discrete_robot.launch.py", arm_model=True),
    Component("trajectory_planner_node", "trajectory_planner.yaml", "trajectory_planner.launch.py", arm_model=True),
    # One clock for the system: the arm's simulator publishes /clock, the space robot follows it.
    Component("space_robot_node", "space_robot.yaml", "space_robot.launch.py", overrides=(("publish_clock", False),)),
    Component("push_predictor_node", "push_predictor.yaml", "push_predictor.launch.py"),
    Component("manipulation_node", "manipulation.yaml", "manipulation.launch.py", arm_model=True),
)


class NodeChild:
    """One node's process: its output passes through to bringup's (line by line, so lines of different nodes
    never mix) and its last error line is kept as the reason when it fails."""

    def __init__(self, node: str, command: list[str]):
        self.node, self.reason = node, ""
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                        bufsize=1, preexec_fn=_die_with_parent, start_new_session=True,
                                        env=dict(os.environ, PYTHONUNBUFFERED="1"))
        self.reported = False
        self._relay = threading.Thread(target=self._forward, daemon=True, name=node)
        self._relay.start()

    def _forward(self) -> None:
        for line in self.process.stdout:
            if line.startswith(("[FATAL]", "[ERROR]")):
                # node_main's start-up line is "cannot start: <reason>": bringup says "<node> failed to start"
                self.reason = line.split("]: ", 1)[-1].strip().removeprefix("cannot start: ")
            # keep draining when bringup's own output is gone (a closed pipe): a node blocked on a full pipe
            # would stop serving
            with contextlib.suppress(OSError, ValueError):
                sys.stdout.write(line)
                sys.stdout.flush()

    def stop(self) -> None:
        # SIGTERM, which a node handles as Ctrl-C once running and which ends it without a traceback while it
        # still imports (a terminal's Ctrl-C reaches bringup only: each node runs in a session of its own)
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)

    def finish(self, timeout: float) -> int:
        """The exit status, after SIGKILL if it has not exited within ``timeout`` s."""
        try:
            self.process.wait(timeout=max(timeout, 0.0))
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self._relay.join(1.0)
        return self.process.returncode


def _die_with_parent() -> None:
    """In the child: end with SIGTERM when bringup itself dies (even by SIGKILL), so no node outlives it."""
    with contextlib.suppress(OSError):     # not Linux: the nodes are stopped by bringup's own stop only
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


def node_command(component: Component, user_ros_args: list[str], model_file: str | None,
                 namespace: str = "", scene: bool = False) -> list[str]:
    """The node's executable with its config file, bringup's overrides, the namespace and the user's ROS
    arguments (last, so they win). ``scene``: manipulation_node runs too, so the arm's simulator holds the
    object it pushes (the arm's own scene, as bringup.launch.py sets it)."""
    command = [find_executable(component.node), "--ros-args",
               "--params-file", str(package_config_path(component.config))]
    overrides = (*component.overrides, *((("scene_file", "default"),)
                                         if scene and component.node == "discrete_robot_node" else ()))
    for name, value in overrides:
        command += ["-p", f"{name}:={str(value).lower() if isinstance(value, bool) else value}"]
    if component.arm_model and model_file:
        command += ["-p", f"model_file:={model_file}"]
    return command + namespace_arguments(component, namespace) + user_ros_args


def namespace_arguments(component: Component, namespace: str) -> list[str]:
    """``-r __ns:=/NS`` for every node, and for the arm's simulator the TF frame prefix ``NS/`` (the space
    robot's frames carry their own prefix, ``space_robot/``)."""
    namespace = namespace.strip("/")
    if not namespace:
        return []
    arguments = ["-r", f"__ns:=/{namespace}"]
    if component.node == "discrete_robot_node":
        arguments += ["-p", f"frame_prefix:={namespace}/"]
    return arguments


def foxglove_command(port: int, user_ros_args: list[str], namespace: str = "") -> list[str]:
    """The Foxglove bridge (this interpreter, ``-m discrete_robot.ros.foxglove_bridge``) on ``port``."""
    ns = ["-r", f"__ns:=/{namespace.strip('/')}"] if namespace.strip("/") else []
    return [sys.executable, "-m", "discrete_robot.ros.foxglove_bridge", "--port", str(port),
            "--ros-args", *ns, *user_ros_args]


def _log(level: str, message: str) -> None:
    with contextlib.suppress(OSError, ValueError):      # bringup's output closed: the nodes run on regardless
        print(f"[{level}] [bringup]: {message}", flush=True)


def main(args: list[str] | None = None) -> int:
    from rclpy.utilities import remove_ros_args

    argv = sys.argv if args is None else ["bringup", *args]
    parser = argparse.ArgumentParser(prog="bringup", description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", choices=[c.node for c in COMPONENTS], help="start only these nodes")
    parser.add_argument("--model-file", help="arm model (YAML, URDF or xacro) for the simulator, the planner and the "
                        "manipulation node")
    parser.add_argument("--namespace", default="", help="every node under /NAMESPACE, the arm's frames NAMESPACE/*")
    parser.add_argument("--foxglove", nargs="?", type=int, const=FOXGLOVE_PORT, metavar="PORT",
                        help=f"serve every topic to Foxglove on ws://127.0.0.1:PORT (default {FOXGLOVE_PORT})")
    options = parser.parse_args(remove_ros_args(argv)[1:])
    try:
        dds_domain_id(os.environ)   # once, rather than once from each node
    except InputError as error:
        _log("FATAL", f"cannot start: {error}")
        return 1
    components = [c for c in COMPONENTS if not options.only or c.node in options.only]
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    failed = False
    children = []
    user_ros_args = _ros_args_of(argv)
    for component in components:
        if not package_config_path(component.config).exists():
            _log("ERROR", f"{component.node} failed to start: no parameter file "
                          f"{package_config_path(component.config)}")
            failed = True
            continue
        scene = any(c.node == "manipulation_node" for c in components)
        children.append(NodeChild(component.node, node_command(component, user_ros_args, options.model_file,
                                                                options.namespace, scene)))
        _log("INFO", f"started {component.node} (pid {children[-1].process.pid})")
    if options.foxglove is not None:
        children.append(NodeChild("foxglove_bridge", foxglove_command(options.foxglove, user_ros_args,
                                                                      options.namespace)))
        _log("INFO", f"started foxglove_bridge (pid {children[-1].process.pid}): in Foxglove, Open connection > "
                     f"Foxglove WebSocket > ws://localhost:{options.foxglove}")
    while children and not stop.wait(0.1):
        for child in children:
            if child.process.poll() is not None and not child.reported:
                child.reported = True
                child.finish(1.0)      # its last lines are through
                failed = failed or child.process.returncode != 0
                reason = child.reason or f"exit status {child.process.returncode}"
                _log("ERROR", f"{child.node} failed to start: {reason}")
        if all(child.reported for child in children):
            break
    for child in children:
        child.stop()
    deadline = time.monotonic() + STOP_WAIT_S
    for child in children:
        child.finish(deadline - time.monotonic())
    return 1 if failed else 0

def _ros_args_of(argv: list[str]) -> list[str]:
    """The user's own arguments after --ros-args (e.g. -p model_file:=...), without the marker."""
    if "--ros-args" not in argv:
        return []
    return argv[argv.index("--ros-args") + 1:]
