"""The scene's objects in discrete_robot_node: the ``scene_file`` parameter, the world it loads, the topics.

Each object ``<name>`` (a scene file holds one, named ``object``) is published, stamped with simulated time, as
``objects/<name>/pose`` (geometry_msgs/PoseStamped in ``world``, the table plane z = table height), a TF frame
``object/<name>`` (child of ``world``) and its footprint's outline on ``objects/markers``
(visualization_msgs/MarkerArray, line strips).
"""

import numpy as np
from geometry_msgs.msg import PoseStamped
from visualization_msgs.msg import Marker, MarkerArray

from discrete_robot.errors import InputError, ModelError
from discrete_robot.geometry2d import yaw_quaternion
from discrete_robot.geometry3d import rotation_about
from discrete_robot.manipulation.arm import ArmFinger
from discrete_robot.manipulation.scene import load_scene, scene_for
from discrete_robot.model.urdf import FrameTransform
from discrete_robot.nodes.common import JOINT_STATE_QOS, STATE_QOS, ParameterSpec, StartupError
from discrete_robot.nodes.conversions import pose_msg
from discrete_robot.nodes.markers import color, marker, outline
from discrete_robot.simulation.scene import SceneWorld

#: scene_file's value for the arm's own scene, as manipulation_node finds it
ARM_SCENE = "default"
SCENE_FILE = ParameterSpec("scene_file", "", "table scene (config/table_scene_*.yaml format) whose objects the "
                                             f"fingertip pushes in the physics steps; {ARM_SCENE!r} = the arm's own "
                                             "(config/table_scene_<model name>.yaml, else derived from its reach); "
                                             "empty = no scene", read_only=True)
#: the frame object poses are given in: the inertial frame, never prefixed
WORLD_FRAME = "world"
MARKERS_TOPIC = "objects/markers"
#: the world's z axis, about which an object turns on its table
UP = np.array([0.0, 0.0, 1.0])


def scene_world(path: str, model, q0, warn) -> tuple[SceneWorld | None, float]:
    """The scene of file ``path`` (none when empty; the arm's own for :data:`ARM_SCENE`) pushed by ``model``'s
    fingertip from joint positions q0, and the table's height (m). StartupError (one line) when a named file
    cannot serve; an arm that cannot have its own scene (no fingertip) runs without one, ``warn``-ed (bringup
    asks every arm for its own)."""
    if not path:
        return None, 0.0
    try:
        scene = scene_for(model) if path == ARM_SCENE else load_scene(path)
        return SceneWorld.from_scene(ArmFinger.in_scene(model, scene), scene, q0), scene.table.height
    except (InputError, ModelError) as error:
        if path == ARM_SCENE:
            warn(f"scene_file {ARM_SCENE}: no scene: {error}")
            return None, 0.0
        raise StartupError(f"scene_file {path}: {error}") from None


def object_transforms(world: SceneWorld | None, height: float) -> list[FrameTransform]:
    """world -> object/<name> of every object (rotation about z by θ; translation x, y, table height, m)."""
    if world is None:
        return []
    return [FrameTransform(WORLD_FRAME, f"object/{name}", rotation_about(UP, theta), np.array([x, y, height]))
            for name, (x, y, theta) in world.poses.items()]


def object_poses(request) -> dict:
    """The object poses of a SetSimulationState request: name -> (x, y, yaw) (m, rad; the yaw of the pose's
    orientation about world z); InputError naming the field when the names and poses do not pair up."""
    names, poses = list(request.object_names), list(request.object_poses)
    if len(names) != len(poses) or len(set(names)) != len(names):
        raise InputError(f"object_names/object_poses: {len(names)} names (each once) need as many poses, "
                         f"got {len(poses)}")
    return {name: (pose.position.x, pose.position.y, _yaw(pose.orientation))
            for name, pose in zip(names, poses, strict=True)}


def _yaw(q) -> float:
    """The heading (rad) of the frame x axis a quaternion turns, projected on the world's x y plane."""
    return float(np.arctan2(2.0 * (q.w * q.z + q.x * q.y), 1.0 - 2.0 * (q.y * q.y + q.z * q.z)))


class ObjectPublisher:
    """Publishes the objects' poses and outlines of ``world`` (a SceneWorld; None: nothing) on ``node``."""

    def __init__(self, node, world: SceneWorld | None, height: float):
        self.world, self.height = world, height
        objects = [] if world is None else world.objects
        # every pose kept, as joint_states: an executive reads the pose at a given simulated time from them
        self.poses = {item.name: node.create_publisher(PoseStamped, f"objects/{item.name}/pose", JOINT_STATE_QOS)
                      for item in objects}
        self.markers = None if world is None else node.create_publisher(MarkerArray, MARKERS_TOPIC, STATE_QOS)

    def publish(self, stamp) -> None:
        """Every object's pose and outline, stamped ``stamp`` (simulated time)."""
        if self.world is None:
            return
        outlines = MarkerArray()
        for index, item in enumerate(self.world.objects):
            x, y, theta = self.world.poses[item.name]
            msg = PoseStamped(pose=pose_msg((x, y, self.height), yaw_quaternion(theta)))
            msg.header.stamp, msg.header.frame_id = stamp, WORLD_FRAME
            self.poses[item.name].publish(msg)
            line = marker(f"objects/{item.name}", Marker.LINE_STRIP, stamp, WORLD_FRAME, 0.005, color(0.2, 0.4, 0.9))
            line.id = index
            outlines.markers.append(outline(line, self.world.poses[item.name], item.obj.footprint, self.height))
        self.markers.publish(outlines)
