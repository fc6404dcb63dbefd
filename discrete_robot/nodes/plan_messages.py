"""trajectory_planner_node's messages: a plan as a JointTrajectory, and the tool point's path as a marker."""

import numpy as np
from builtin_interfaces.msg import Duration
from geometry_msgs.msg import Point
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint
from visualization_msgs.msg import Marker, MarkerArray

from discrete_robot.model.inverse_kinematics import ToolPoint
from discrete_robot.model.kinematics import forward_kinematics
from discrete_robot.nodes.conversions import seconds_to_duration_fields
from discrete_robot.planning.planner import PlannedTrajectory

#: the tool point's path (trajectory_planner_node's docstring)
PATH_TOPIC = "planned_path"
#: planned_path's line: width, m, and colour (RGBA)
PATH_WIDTH = 0.01
PATH_COLOR = (0.1, 0.6, 1.0, 1.0)


def trajectory_msg(plan: PlannedTrajectory) -> JointTrajectory:
    """The plan as a JointTrajectory (header stamp zero: start on receipt)."""
    msg = JointTrajectory(joint_names=list(plan.joint_names))
    for k, t in enumerate(plan.t):
        sec, nanosec = seconds_to_duration_fields(float(t))
        msg.points.append(JointTrajectoryPoint(
            positions=plan.positions[k].tolist(), velocities=plan.velocities[k].tolist(),
            accelerations=plan.accelerations[k].tolist(), effort=plan.efforts[k].tolist(),
            time_from_start=Duration(sec=sec, nanosec=nanosec)))
    return msg


def tool_point(model) -> ToolPoint:
    """The point whose path planned_path draws: the model's fingertip, else the tip of its last link."""
    if model.fingertip is not None:
        return ToolPoint.on(model, model.fingertip.link, model.fingertip.offset)
    return ToolPoint(len(model.links) - 1, model.links[-1].tip)


def path_markers(model, tool: ToolPoint, positions: np.ndarray, frame: str, stamp) -> MarkerArray:
    """The tool point's positions p(q_k) = o_k + R_k · offset (m, in the base frame) for the plan's joint
    positions ``positions`` (K, n), as one LINE_STRIP marker."""
    frames = forward_kinematics(model, positions)
    rotations = frames.rotations[:, tool.link]
    points = frames.positions[:, tool.link] + rotations @ tool.offset
    marker = Marker(ns=PATH_TOPIC, id=0, type=Marker.LINE_STRIP, action=Marker.ADD, frame_locked=False)
    marker.header.frame_id, marker.header.stamp = frame, stamp
    marker.pose.orientation.w = 1.0
    marker.scale.x = PATH_WIDTH
    marker.color.r, marker.color.g, marker.color.b, marker.color.a = PATH_COLOR
    marker.points = [Point(x=float(x), y=float(y), z=float(z)) for x, y, z in points]
    return MarkerArray(markers=[marker])
