"""``python -m discrete_robot experiment <name>``: recorded experiments against the live nodes.

With ``--start-bringup`` (the default for ``demo``) ``bringup`` (every node) is
started first and stopped (Ctrl-C semantics) at the end; otherwise the nodes
must already run (a launch file or ``bringup``).
"""

import argparse
import json
import logging
import os
import time
from pathlib import Path

from discrete_robot.cli import Report
from discrete_robot.errors import InputError

logger = logging.getLogger(__name__)

DEMO_OVERRIDES = {"apply_paper_loads": True}  # the space robot runs the paper's scenario in the demo
#: the experiments (run by :mod:`.experiments`), here so that ``--help`` imports no ROS module
SUMMARIES = {"plan-execute": "min-time plan executed on the discrete model",
             "space": "space robot under the paper's loads",
             "push-sweep": "push simulation over contact offsets",
             "push-to-pose": "the simulated arm pushes the table-top object to a goal pose"}
ALL = list(SUMMARIES)


def add_commands(parser, common) -> None:
    names = parser.add_subparsers(dest="name", metavar="name", required=True)
    summaries = {**SUMMARIES, "demo": "start bringup, run every experiment, stop"}
    for name, summary in summaries.items():
        sub = names.add_parser(name, parents=[common], help=summary, description=summary)
        sub.add_argument("--start-bringup", action="store_true",
                         help="start bringup (every node) for the run (demo always does)")
        sub.add_argument("--no-record", action="store_true", help="do not write an MCAP file")
        if name == "push-to-pose":
            _push_arguments(sub)
        sub.set_defaults(run=run_experiments)
    replay = names.add_parser("replay", parents=[common], help=REPLAY, description=REPLAY)
    replay.add_argument("recording", help="the experiment's .mcap (experiment push-to-pose writes it)")
    replay.set_defaults(run=replay_experiment)


REPLAY = "rerun a recorded push-to-pose in process and check every sample is bit-identical"


def replay_experiment(args) -> dict:
    from discrete_robot.config_files import regular_file
    from discrete_robot.ros.processes import ament_environment

    ament_environment()
    from discrete_robot.ros.replay import replay_file

    result = replay_file(regular_file(args.recording, "recording"))
    difference = result["first_difference"]
    text = (f"identical: {result['samples']} joint and object samples of {result['goals']} goal(s), up to "
            f"t = {result['until_s']:.3f} s" if result["identical"] else
            f"DIFFERENT after {result['samples']} identical samples: {difference}")
    result["success"] = result["identical"]     # the command's status: 1 when a sample differs
    return Report(result, text)


def _pose(text: str) -> list[float]:
    values = [float(v) for v in text.split(",")]
    if len(values) != 3:
        raise argparse.ArgumentTypeError(f"expected X,Y,THETA (m, m, rad), got {text!r}")
    return values


def _floats(text: str) -> list[float]:
    return [float(v) for v in text.split(",")]


def _push_arguments(sub) -> None:
    sub.add_argument("--goal", type=_pose, required=True, help="object goal pose X,Y,THETA (world: m, m, rad)")
    sub.add_argument("--start", type=_pose, help="object start pose X,Y,THETA (default: the scene's)")
    sub.add_argument("--model", default="arm_6dof.yaml",
                     help="arm model file (config/ name or path) with a fingertip; its scene is "
                          "config/table_scene_<model name>.yaml, or one derived from the arm's reach")
    sub.add_argument("--object-footprint", type=_floats, default=[],
                     help="X0,Y0,X1,Y1,... counter-clockwise in the object frame, m (default: the scene's)")
    sub.add_argument("--normal-force", type=float, default=0.0, help="N (default: the scene's)")
    sub.add_argument("--support-friction", type=float, default=0.0, help="object-table (default: the scene's)")
    sub.add_argument("--contact-friction", type=float, default=-1.0, help="finger-object (default: the scene's)")
    sub.add_argument("--finger-radius", type=float, default=0.0, help="m (default: the model file's)")
    sub.add_argument("--tip-link", default="", help="link or fixed frame of a URDF arm whose origin is the fingertip "
                                                    "(e.g. tool0; default: the model file's fingertip)")
    sub.add_argument("--time-step", type=float, default=0.001, help="the arm simulator's step, s")
    sub.add_argument("--real-time-factor", type=float, default=1.0,
                     help="the arm simulator's real_time_factor (0: as fast as possible); the result is the same")


def run_experiments(args) -> dict:
    from discrete_robot.ros.processes import NodeProcess, ament_environment
    from discrete_robot.validation import dds_domain_id

    ament_environment()
    dds_domain_id(os.environ)   # before bringup, whose nodes would each refuse it
    from discrete_robot.ros.experiments import run

    names = ALL if args.name == "demo" else [args.name]
    output_dir = Path(args.output_dir)
    processes = []
    functions = None
    inputs = None
    if args.name == "push-to-pose" and not args.start_bringup:
        processes, functions, inputs = _push_nodes(args, output_dir)
    elif args.name == "demo" or args.start_bringup:
        processes = [NodeProcess("bringup", output_dir / "logs", params=DEMO_OVERRIDES)]
    time.sleep(1.0 if processes else 0.0)
    for process in processes:
        if not process.alive():
            raise InputError(f"{process.name} exited at start:\n{process.log()[-2000:]}")
    try:
        summary = run(names, output_dir, record=not args.no_record, functions=functions, inputs=inputs)
    finally:
        for process in processes:
            logger.info("%s stopped with status %s", process.name, process.stop(timeout=5.0))
    if args.name == "push-to-pose":
        # the experiment's own document at the top, as `--json` users of this command expect it
        summary = {**summary["experiments"]["push-to-pose"], "mcap": summary.get("mcap"),
                   "output_dir": summary["output_dir"]}
        experiments = {"push-to-pose": summary}
    else:
        experiments = summary["experiments"]
        summary["success"] = all(document.get("success", True) for document in experiments.values())
    summary["next_steps"] = next_steps(summary)
    return Report(summary, summary_text(experiments, summary))


def next_steps(summary: dict) -> dict:
    mcap = summary.get("mcap", {}) or {}
    return {
        "plots": sorted(str(p) for p in Path(summary["output_dir"]).glob("*.png")),
        "foxglove": f"open {mcap.get('path', '<the .mcap>')} in Foxglove (Open local file): no simulator needed",
        "live": "bringup --foxglove, then in Foxglove: Open connection > Foxglove WebSocket > ws://localhost:8765",
    }


def headline(name: str, document: dict) -> str:
    """One line on one experiment's result: its figure of merit and its plot."""
    import math

    if name == "plan-execute":
        text = (f"final error {max(document['final_position_error_rad']):.2g} rad, largest tracking error "
                f"{document['largest_tracking_error_rad']:.2g} rad over a {document['planned_duration_s']:.2f} s plan")
    elif name == "space":
        shift = math.dist(document["base_displacement_m"], [0.0, 0.0, 0.0])
        text = f"base moved {shift:.3g} m and turned {math.degrees(document['base_rotation_rad']):.3g} deg"
    elif name == "push-sweep":
        rotations = [math.degrees(r) for r in document["final_rotation_rad"]]
        text = f"final rotation {min(rotations):+.1f} .. {max(rotations):+.1f} deg over {len(rotations)} offsets"
    else:
        error = document["final_error"]
        text = (f"{'reached' if document['success'] else 'missed'} the goal: {100 * error['position_m']:.1f} cm, "
                f"{math.degrees(error['angle_rad']):.1f} deg off")
    plots = document.get("plots") or [document.get("plot")]
    status = "ok  " if document.get("success", True) else "FAIL"
    return f"{name:13s} {status} {text}  [{Path(str(plots[0])).name}]"


def summary_text(experiments: dict, summary: dict) -> str:
    """The human summary: one line per experiment, the result folder and what to open."""
    lines = [headline(name, document) for name, document in experiments.items()]
    steps = summary["next_steps"]
    lines += [f"results: {summary['output_dir']} (summary.json, the plots above"
              f"{', ' + Path(str(summary['mcap']['path'])).name if summary.get('mcap') else ''})",
              f"open: the PNGs; {steps['foxglove']}", f"live 3D view: {steps['live']}"]
    return "\n".join(lines)


def _push_nodes(args, output_dir: Path):
    """The arm's simulator and manipulation_node for ``args.model``, and the experiment run with the user's goal.

    The experiment's scene (the arm's, with the user's object, start and frictions) is written to
    ``output_dir/scene.yaml`` and given to both nodes: the simulator moves that object, the node plans with it.
    The simulator starts paused at the scene's ready configuration, so the push starts at simulated time 0 from
    a defined state (docs/manipulation.md, determinism)."""
    import functools

    import yaml

    from discrete_robot.manipulation.scene import load_scene, scene_data_for
    from discrete_robot.model.description import load_model, package_config_path
    from discrete_robot.nodes.manipulation_node import SETTLE_S
    from discrete_robot.ros.processes import NodeProcess
    from discrete_robot.ros.push_experiment import PUSH_GAINS, push_to_pose
    from discrete_robot.ros.replay import REPLAYED

    path = Path(args.model) if Path(args.model).exists() else package_config_path(args.model)
    model = load_model(path)
    data = scene_data_for(model)   # as manipulation_node finds it: the shipped file, or derived from the arm's reach
    chosen = {"footprint": args.object_footprint, "start_pose": args.start, "normal_force": args.normal_force or None,
              "support_friction": args.support_friction or None,
              "contact_friction": None if args.contact_friction < 0.0 else args.contact_friction}
    data["object"].update({key: value for key, value in chosen.items() if value not in (None, [])})
    scene_file = output_dir / "scene.yaml"
    output_dir.mkdir(parents=True, exist_ok=True)
    scene_file.write_text(yaml.safe_dump(data, sort_keys=False))
    scene = load_scene(scene_file)     # the user's values checked here, before any node starts
    logs = output_dir / "logs"
    simulator = {"model_file": str(path), "time_step": args.time_step, "publish_rate": 100.0, "publish_tf": True,
                 "initial_positions": [float(v) for v in scene.arm_ready_positions], "scene_file": str(scene_file),
                 "start_paused": True, "real_time_factor": args.real_time_factor, "integrator": "discrete",
                 **PUSH_GAINS}
    processes = [
        NodeProcess("discrete_robot_node", logs, params=simulator),
        NodeProcess("manipulation_node", logs, params={"model_file": str(path), "finger_radius": args.finger_radius,
                                                       "tip_link": args.tip_link, "publish_rate": 50.0,
                                                       "scene_file": str(scene_file)}),
    ]
    experiment = functools.partial(push_to_pose, model_name=model.name, scene=scene, model=model, goal=args.goal,
                                   settle=False)
    inputs = {"model_name": path.name, "model": path.read_text(), "scene": scene_file.read_text(),
              "object_name": "object", "settle_s": str(SETTLE_S),
              "simulator": json.dumps({key: simulator[key] for key in REPLAYED})}
    return processes, {"push-to-pose": experiment}, inputs
