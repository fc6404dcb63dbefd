"""Composed bringup: every discrete_robot node in one process (ROS 2 manual composition).

For machines with rclpy but no launch system. It starts the nodes that
launch/bringup.launch.py starts, with the same config/*.yaml files (a test
checks that the two name the same nodes, executables and files), each on its
own executor and thread (as separate processes would be, but in one process).
A node that fails to start is reported by name and the others run on. Ctrl-C stops everything cleanly.

    bringup [--only discrete_robot_node ...] [--model-file /path/arm.yaml] [--ros-args ...]

``--model-file`` goes to the arm's simulator and planner only, as bringup.launch.py's
``model_file`` argument does (``-p model_file:=`` would reach the space robot too).
"""

import argparse
import importlib
import sys
import threading
from dataclasses import dataclass

import rclpy
from rclpy.parameter import Parameter
from rclpy.utilities import remove_ros_args

from discrete_robot.errors import DiscreteRobotError
from discrete_robot.model.description import package_config_path
from discrete_robot.nodes.common import executor_for, init_with_stop_signal, shut_down, spin_until_stopped

#: s, the interpreter's thread switch interval while every node shares one process (see main)
SWITCH_INTERVAL_S = 1e-3
#: s to wait for each node's spin thread after a stop (it sees the stop flag within spin_until_stopped's poll)
SPIN_JOIN_S = 1.0


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


def start_nodes(components, logger) -> list:
    """Instantiate each component's node; report by name the ones that cannot start."""
    nodes = []
    for component in components:
        try:
            overrides = [Parameter(name, value=value) for name, value in component.overrides]
            nodes.append(component.node_class()(parameter_overrides=overrides))
            logger.info(f"started {component.node}")
        except (DiscreteRobotError, ImportError, StopIteration) as error:
            logger.error(f"{component.node} failed to start: {error}")
    return nodes


def main(args: list[str] | None = None) -> int:
    argv = sys.argv if args is None else ["bringup", *args]
    parser = argparse.ArgumentParser(prog="bringup", description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="+", choices=[c.node for c in COMPONENTS], help="start only these nodes")
    parser.add_argument("--model-file", help="arm model YAML for the simulator, the planner and the manipulation node")
    options = parser.parse_args(remove_ros_args(argv)[1:])
    components = [c for c in COMPONENTS if not options.only or c.node in options.only]
    missing = [c for c in components if not package_config_path(c.config).exists()]
    components = [c for c in components if c not in missing]
    params = [arg for c in components for arg in ("--params-file", str(package_config_path(c.config)))]
    overrides = [f"{c.node}:model_file:={options.model_file}" for c in components
                 if c.arm_model and options.model_file]
    params += [arg for override in overrides for arg in ("-p", override)]
    stop = init_with_stop_signal(["bringup", "--ros-args", *params, *_ros_args_of(argv)])
    logger = rclpy.logging.get_logger("bringup")
    for component in missing:
        logger.error(f"{component.node} failed to start: no parameter file {package_config_path(component.config)}")
    nodes = start_nodes(components, logger)
    # One executor per node, each spun in its own thread. A single MultiThreadedExecutor for all of them spins
    # hot whenever a ready callback waits for its busy group (a simulator's tick while the previous one runs):
    # rclpy's executor then re-polls without blocking, and that loop took most of the interpreter (the GIL)
    # from the simulators and the planner.
    executors = [executor_for(type(node)) for node in nodes]
    # The compiled kernels release the GIL; taking it back waits for the interpreter's switch interval (5 ms by
    # default) whenever another node's thread runs Python meanwhile, and a simulator tick re-takes it after
    # every step. A shorter interval keeps those waits small; much shorter ones (0.2 ms) made a long Python
    # computation beside the simulators (a push plan) several times slower.
    sys.setswitchinterval(SWITCH_INTERVAL_S)
    threads = []
    for node, executor in zip(nodes, executors, strict=True):
        executor.add_node(node)
        threads.append(threading.Thread(target=spin_until_stopped, args=(executor, stop), daemon=True,
                                        name=node.get_name()))
    try:
        for thread in threads:
            thread.start()
        while threads and not stop.wait(0.1) and rclpy.ok():
            pass
        stop.set()
        for thread in threads:
            thread.join(SPIN_JOIN_S)
    finally:
        shut_down(executors, nodes)
    return 0 if len(nodes) == len(components) and not missing else 1


def _ros_args_of(argv: list[str]) -> list[str]:
    """The user's own arguments after --ros-args (e.g. -p model_file:=...), without the marker."""
    if "--ros-args" not in argv:
        return []
    return argv[argv.index("--ros-args") + 1:]
