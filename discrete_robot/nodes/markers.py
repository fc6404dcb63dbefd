"""RViz markers of the pushing world: the table, an object's outline, the finger, paths, a centre of rotation."""

import numpy as np
from geometry_msgs.msg import Point, Vector3
from std_msgs.msg import ColorRGBA
from visualization_msgs.msg import Marker, MarkerArray

from discrete_robot.geometry2d import to_world
from discrete_robot.pushing.prediction import ContactMode
from discrete_robot.pushing.simulation import PushStep

#: drawn radius of a point finger (a marker needs a nonzero scale), m
POINT_FINGER_DRAWN_RADIUS = 0.002


def color(r, g, b, a=1.0) -> ColorRGBA:
    return ColorRGBA(r=float(r), g=float(g), b=float(b), a=float(a))


def marker(ns: str, kind: int, stamp, frame: str, width: float | None = None, tint: ColorRGBA | None = None) -> Marker:
    """A marker of type ``kind`` at the frame's origin; ``width`` (m) its scale in x, y and z, ``tint`` its color."""
    m = Marker(ns=ns, id=0, type=kind, action=Marker.ADD)
    m.header.stamp, m.header.frame_id = stamp, frame
    m.pose.orientation.w = 1.0
    if width is not None:
        m.scale = Vector3(x=width, y=width, z=width)
    if tint is not None:
        m.color = tint
    return m


def outline(m: Marker, pose, footprint: np.ndarray, z: float = 0.0) -> Marker:
    """``m`` drawing the closed outline of ``footprint`` (object frame, m) at the planar pose (x, y, θ), height z."""
    corners = to_world(pose, footprint)
    m.points = [Point(x=float(px), y=float(py), z=z) for px, py in np.vstack([corners, corners[:1]])]
    return m


def push_markers(footprint: np.ndarray, step: PushStep, pusher_radius: float, stamp, frame: str) -> MarkerArray:
    """push_predictor_node's view of a push step: the object's outline, the finger (red while it pushes, grey when
    it separates) and the centre of rotation of a rotating object, after clearing the last step's."""
    clear = Marker(action=Marker.DELETEALL)
    clear.header.stamp = stamp
    clear.header.frame_id = frame
    body = outline(marker("push/object", Marker.LINE_STRIP, stamp, frame, tint=color(0.2, 0.4, 1.0)), step.pose,
                   footprint)
    body.scale.x = 0.002
    finger = marker("push/finger", Marker.CYLINDER, stamp, frame)
    drawn = max(pusher_radius, POINT_FINGER_DRAWN_RADIUS)
    finger.pose.position = Point(x=float(step.finger[0]), y=float(step.finger[1]), z=0.01)
    finger.scale = Vector3(x=2 * drawn, y=2 * drawn, z=0.02)
    pushing = step.mode is not ContactMode.SEPARATING
    finger.color = color(1.0, 0.2, 0.1) if pushing else color(0.6, 0.6, 0.6)
    markers = [clear, body, finger]
    prediction = step.prediction
    if prediction is not None and not prediction.is_translation:
        centre = to_world(step.pose, prediction.center_of_rotation[None])[0]
        cor = marker("push/center_of_rotation", Marker.SPHERE, stamp, frame, 0.006, color(0.1, 0.1, 0.1))
        cor.pose.position = Point(x=float(centre[0]), y=float(centre[1]))
        markers.append(cor)
    return MarkerArray(markers=markers)


def scene_markers(scene, footprint: np.ndarray, finger, finger_radius: float, finger_height: float,
                  goal_pose, planned_poses, trace: list[Point], stamp, frame: str) -> MarkerArray:
    """manipulation_node's view: the table, the fingertip, the goal pose (when given), the planned object path
    (when it has two poses or more) and the executed one (``trace``); the object itself is the simulator's
    (objects/markers)."""
    z = scene.table.height

    def line(ns: str, tint: ColorRGBA) -> Marker:
        return marker(ns, Marker.LINE_STRIP, stamp, frame, 0.003, tint)

    table = line("manipulation/table", color(0.5, 0.4, 0.3))
    (x0, x1), (y0, y1) = scene.table.x, scene.table.y
    table.points = [Point(x=x, y=y, z=z) for x, y in ((x0, y0), (x1, y0), (x1, y1), (x0, y1), (x0, y0))]
    tip = marker("manipulation/fingertip", Marker.SPHERE, stamp, frame, 2 * finger_radius, color(1.0, 0.2, 0.1))
    tip.pose.position = Point(x=float(finger[0]), y=float(finger[1]), z=float(finger_height))
    markers = [table, tip]
    if goal_pose is not None:
        markers.append(outline(line("manipulation/goal", color(0.1, 0.8, 0.2)), goal_pose, footprint, z))
    if planned_poses is not None and len(planned_poses) > 1:
        planned = line("manipulation/planned_path", color(0.6, 0.6, 0.6))
        planned.points = [Point(x=float(p[0]), y=float(p[1]), z=z) for p in planned_poses]
        markers.append(planned)
    if len(trace) > 1:
        executed = line("manipulation/executed_path", color(0.2, 0.4, 1.0))
        executed.points = trace
        markers.append(executed)
    return MarkerArray(markers=markers)
