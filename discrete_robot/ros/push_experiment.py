"""``experiment push-to-pose``: the arm pushes the table-top object to a goal pose, live and recorded.

Against running nodes (the arm's simulator with the scene, and manipulation_node, for the same arm model): with
``settle`` the arm is first brought to its scene's ready configuration through its FollowJointTrajectory action
(a running bringup's arm may be anywhere); ``experiment push-to-pose`` starts its own simulator paused there
instead. Then the PushObject goal is sent and the joint states and object poses the simulator publishes are
collected while it runs, one sample per simulated time. Output: a top view (table, object outlines along the way,
fingertip path, goal) and the joints against time in ``output_dir``, and a document with the start, goal,
executed (times from the goal's start, fingertip centres, object poses, joint positions), planned object poses,
final error,
success and message.
"""

from pathlib import Path

import numpy as np
from builtin_interfaces.msg import Duration
from control_msgs.action import FollowJointTrajectory
from discrete_robot_interfaces.action import PushObject
from geometry_msgs.msg import Pose2D, PoseStamped
from sensor_msgs.msg import JointState
from tqdm import tqdm
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from discrete_robot.errors import DiscreteRobotError
from discrete_robot.geometry2d import to_world, yaw_of_quaternion
from discrete_robot.manipulation.scene import load_scene, scene_path_for
from discrete_robot.nodes.conversions import stamp_ns
from discrete_robot.plotting import new_figure, save_figure
from discrete_robot.ros.session import RosSession, stamp_seconds

ARM_ACTION = "joint_trajectory_controller/follow_joint_trajectory"
SIMULATOR = "discrete_robot_node"      # bringup's arm simulator
#: the arm's tracking gains while it pushes (1/s², 1/s; critically damped at 50 rad/s): the object's load acts on
#: the arm, and the default kp = 100 left a 2 cm fingertip lag under the 0.8 N of the shipped object's friction
PUSH_GAINS = {"kp": 2500.0, "kd": 100.0}
OBJECT_TOPIC = "objects/object/pose"
SETTLE_S = 2.0          # s the arm takes to its ready configuration
RESULT_TIMEOUT_S = 900.0
OUTLINES = 12           # object outlines drawn along the executed path


class PushExperimentError(DiscreteRobotError):
    """The nodes refused or failed the push-to-pose experiment."""


def _yaw(pose) -> float:
    return yaw_of_quaternion(pose.orientation.w, pose.orientation.z)


def _settle(session: RosSession, names: list[str], ready) -> None:
    sec, nanosec = int(SETTLE_S), int(SETTLE_S % 1 * 1e9)
    goal = FollowJointTrajectory.Goal(trajectory=JointTrajectory(joint_names=names, points=[JointTrajectoryPoint(
        positions=[float(v) for v in ready], time_from_start=Duration(sec=sec, nanosec=nanosec))]))
    handle = session.send_goal(FollowJointTrajectory, ARM_ACTION, goal)
    result = session.goal_result(handle, SETTLE_S + 60.0).result
    if result.error_code != FollowJointTrajectory.Result.SUCCESSFUL:
        raise PushExperimentError(f"the arm did not reach its ready configuration: {result.error_string}")


def _stiffen(session: RosSession) -> None:
    """The running arm simulator's tracking gains set to PUSH_GAINS (the object's load acts on the arm)."""
    from rcl_interfaces.srv import SetParameters
    from rclpy.parameter import Parameter

    request = SetParameters.Request(parameters=[Parameter(name, value=value).to_parameter_msg()
                                                for name, value in PUSH_GAINS.items()])
    results = session.call(SetParameters, f"/{SIMULATOR}/set_parameters", request).results
    refused = [r.reason for r in results if not r.successful]
    if refused:
        raise PushExperimentError(f"{SIMULATOR} refused the pushing gains: {refused}")


def _by_stamp(messages: list) -> dict[int, object]:
    """One message per stamp (ns), the first received: a paused world republishes its state unchanged."""
    samples: dict[int, object] = {}
    for message in messages:
        samples.setdefault(stamp_ns(message.header.stamp), message)
    return samples


def push_to_pose(session: RosSession, output_dir: Path, progress: tqdm, model_name: str, goal, scene=None,
                 model=None, settle: bool = True) -> dict:
    """Run one push-to-pose goal (module docstring); poses (x, y, θ) in m and rad, world. ``scene``: the nodes'
    (default: the shipped config/table_scene_<model_name>.yaml); ``model``: the arm's, for its fingertip and to
    draw it (default: config/<model_name>.yaml)."""
    from discrete_robot.manipulation.arm import ArmFinger
    from discrete_robot.nodes.qos import JOINT_STATE_QOS

    scene = load_scene(scene_path_for(model_name)) if scene is None else scene
    model = _model(model_name) if model is None else model
    names = list(session.wait_for_message("joint_states", JointState, timeout=30.0).name)
    if settle:
        _stiffen(session)
        _settle(session, names, scene.arm_ready_positions)
    progress.update(1)
    objects, states, feedback = [], [], []
    subscriptions = [session.node.create_subscription(PoseStamped, OBJECT_TOPIC, objects.append, JOINT_STATE_QOS),
                     session.node.create_subscription(JointState, "joint_states", states.append, JOINT_STATE_QOS)]
    # the goal once the world's samples arrive (here and in the recording, on this node too): a goal refused at
    # once would otherwise leave nothing recorded
    if not session.spin_until(lambda: objects and states, 30.0):
        raise PushExperimentError(f"no {OBJECT_TOPIC} from the arm's simulator in 30 s: does it have the scene "
                                  "(scene_file)?")
    request = PushObject.Goal(goal=Pose2D(x=float(goal[0]), y=float(goal[1]), theta=float(goal[2])),
                              contact_friction=-1.0)
    handle = session.send_goal(PushObject, "push_object", request, feedback=feedback.append)
    if not handle.accepted:
        raise PushExperimentError("manipulation_node rejected the goal")
    result = session.goal_result(handle, RESULT_TIMEOUT_S).result
    session.spin_until(lambda: False, 0.3)   # the last poses after the result
    for subscription in subscriptions:
        session.node.destroy_subscription(subscription)
    progress.update(1)
    poses, joints = _by_stamp(objects), _by_stamp(states)
    stamps = sorted(set(poses) & set(joints))
    t0 = stamps[0] if stamps else 0
    arm = ArmFinger.in_scene(model, scene) if model is not None and model.fingertip is not None else None
    executed_object = [[poses[t].pose.position.x, poses[t].pose.position.y, _yaw(poses[t].pose)] for t in stamps]
    planned = [[p.x, p.y, p.theta] for p in result.planned_poses]
    document = {
        "start": executed_object[0] if executed_object else list(scene.start_pose),
        "goal": [float(v) for v in goal],
        "executed": {"t": [(t - t0) * 1e-9 for t in stamps], "object": executed_object,
                     "finger": [arm.position(np.asarray(joints[t].position, dtype=float)).tolist() if arm else []
                                for t in stamps],
                     "joints": [list(joints[t].position) for t in stamps]},
        "planned": {"object": planned},
        "final_error": {"position_m": result.position_error, "angle_rad": result.angle_error},
        "planned_vs_executed": {"position_m": result.planned_vs_executed_position,
                                "angle_rad": result.planned_vs_executed_angle},
        "pushes": max((f.push_count for f in feedback), default=0),
        "success": bool(result.success), "message": result.message,
    }
    ordered = [joints[t] for t in sorted(joints)]
    document["plots"] = [_top_view(output_dir, scene, document, _arm_outlines(model, ordered)),
                         _joints(output_dir, names, ordered, t0 * 1e-9)]
    return document


def _top_view(output_dir: Path, scene, document: dict, arm: list[np.ndarray] = ()) -> str:
    """Left: the whole scene (table, the arm drawn at the start, middle and end of the push, the object's
    motion); right: the motion itself, zoomed: object outlines along the executed path, the planned path on top
    of the executed one, the fingertip and the goal. ``arm``: link-origin polylines (k, 2) in the world."""
    fig, (whole, zoom) = new_figure(1, 2, figsize=(13, 5.6))
    (x0, x1), (y0, y1) = scene.table.x, scene.table.y
    footprint = scene.obj.footprint
    executed = np.array(document["executed"]["object"]).reshape(-1, 3)
    planned = np.array(document["planned"]["object"]).reshape(-1, 3)
    finger = np.array(document["executed"]["finger"]).reshape(-1, 2)
    # outlines spread over the object's motion, not over time (it rests while the finger repositions)
    travelled = np.concatenate([[0.0], np.cumsum(np.linalg.norm(np.diff(executed, axis=0), axis=1))])
    marks = sorted({min(int(np.searchsorted(travelled, m)), len(executed) - 1)
                    for m in np.linspace(0.0, travelled[-1], OUTLINES)}) if len(executed) else []
    for axis in (whole, zoom):
        axis.plot([x0, x1, x1, x0, x0], [y0, y0, y1, y1, y0], color="saddlebrown", label="table")
        for k, index in enumerate(marks):
            corners = to_world(executed[index], footprint)
            axis.fill(corners[:, 0], corners[:, 1], fill=False, edgecolor="tab:blue", alpha=0.35,
                      label="object along the executed path" if k == 0 else None)
        goal = to_world(np.asarray(document["goal"], dtype=float), footprint)
        axis.fill(goal[:, 0], goal[:, 1], fill=False, edgecolor="tab:green", linewidth=2, label="goal")
        if len(executed):
            axis.plot(executed[:, 0], executed[:, 1], color="tab:blue", linewidth=3, alpha=0.5,
                      label="executed object path")
        if len(planned):
            axis.plot(planned[:, 0], planned[:, 1], "--", color="black", linewidth=1.2, marker=".", markersize=3,
                      zorder=4, label="planned object path")
        if len(finger):
            axis.plot(finger[:, 0], finger[:, 1], color="tab:red", linewidth=0.8, label="fingertip")
    for k, links in enumerate(arm):
        whole.plot(links[:, 0], links[:, 1], "o-", color="dimgrey", alpha=0.4 + 0.3 * k / max(len(arm) - 1, 1),
                   linewidth=2.5, markersize=4, label="arm (start, middle, end)" if k == 0 else None)
    whole.set(xlabel="x [m]", ylabel="y [m]", title="scene (top view)", aspect="equal")
    moving = np.vstack([p for p in (executed[:, :2], planned[:, :2], finger, goal) if len(p)]
                       + [to_world(p, footprint) for p in executed[marks]] if marks else [goal])
    low, high = moving.min(axis=0), moving.max(axis=0)
    margin = 0.15 * max(high - low) + 0.01
    zoom.set(xlim=(low[0] - margin, high[0] + margin), ylim=(low[1] - margin, high[1] + margin),
             xlabel="x [m]", ylabel="y [m]", title="the push, zoomed", aspect="equal")
    handles, labels = whole.get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=4, fontsize=8)
    return save_figure(fig, output_dir, "push_to_pose")


def _model(model_name: str):
    """config/<model_name>.yaml's arm, or None when there is no such file."""
    from discrete_robot.model.description import load_model, package_config_path

    path = package_config_path(f"{model_name}.yaml")
    return load_model(path) if path.exists() else None


def _arm_outlines(model, states: list) -> list[np.ndarray]:
    """The arm's link origins and fingertip (x, y) at the first, middle and last joint state received."""
    from discrete_robot.model.kinematics import forward_kinematics

    if model is None or not states:
        return []
    outlines = []
    for state in (states[0], states[len(states) // 2], states[-1]):
        frames = forward_kinematics(model, np.asarray(state.position, dtype=float))
        points = list(frames.positions[:, :2])
        if model.fingertip is not None:
            tip = [link.name for link in model.links].index(model.fingertip.link)
            points.append((frames.positions[tip] + frames.rotations[tip] @ model.fingertip.offset)[:2])
        outlines.append(np.array(points))
    return outlines


def _joints(output_dir: Path, names: list[str], states: list, t0: float) -> str:
    fig, axes = new_figure(1, 1)
    axis = axes[0] if isinstance(axes, (list, np.ndarray)) else axes
    if states:
        t = np.array([stamp_seconds(s) for s in states]) - t0
        q = np.array([s.position for s in states])
        for j, name in enumerate(names):
            axis.plot(t, q[:, j], label=name)
    axis.set(xlabel="t [s]", ylabel="q [rad]", title="arm joints while pushing")
    axis.legend(fontsize=8)
    return save_figure(fig, output_dir, "push_to_pose_joints")
