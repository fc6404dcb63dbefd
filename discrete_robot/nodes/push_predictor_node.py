"""push_predictor_node: quasistatic pushing by the principle of minimum power (discrete_robot.pushing).

Services
- ``predict_push`` (discrete_robot_interfaces/PredictPush): the object's twist, center of rotation, contact
  mode, finger force and power for a finger at a point of the footprint's outline.
- ``simulate_push`` (discrete_robot_interfaces/SimulatePush): the object's poses while the finger follows a
  path; ``time_step`` 0 means the ``time_step`` parameter.
  Empty support points mean uniform pressure, integrated exactly (``pressure_model`` exact) or on about
  ``grid_points`` grid points (``grid``). Bad requests (empty or self-intersecting footprint, contact point
  off the outline, negative friction, NaN, zero pusher speed, ...) get success=false and the reason; the
  node keeps serving.

Publishes (frame ``world``)
- ``push/object_pose`` (geometry_msgs/PoseStamped): every simulated step while ``simulate_push`` runs, and
  the streamed object's pose after every finger position.
- ``push/markers`` (visualization_msgs/MarkerArray): DELETEALL, then the object outline (LINE_STRIP), the
  finger (CYLINDER) and, when the object rotates, the center of rotation (SPHERE).

Subscribes
- ``push/finger_position`` (geometry_msgs/PointStamped, frame ``world`` or empty): streaming mode. The
  object given by the parameters (``object_footprint`` at ``object_initial_pose``) is pushed
  quasistatically by the finger (radius ``pusher_radius``) from its previous position to this one.
"""

import numpy as np
from discrete_robot_interfaces.srv import PredictPush, SimulatePush
from geometry_msgs.msg import Point, PointStamped, Pose2D, PoseStamped, Vector3
from rclpy.parameter import Parameter
from visualization_msgs.msg import MarkerArray

from discrete_robot.budget import limited
from discrete_robot.errors import DiscreteRobotError
from discrete_robot.geometry2d import yaw_quaternion
from discrete_robot.nodes.common import (
    STATE_QOS,
    GuardedNode,
    ParameterSpec,
    StartupError,
    declare_parameters,
    finite_values,
    node_main,
    non_negative,
    one_of,
    pose_msg,
    positive,
)
from discrete_robot.nodes.markers import push_markers
from discrete_robot.pushing.object_model import make_pushed_object
from discrete_robot.pushing.prediction import predict_push
from discrete_robot.pushing.requests import (
    parse_predict_request,
    parse_simulate_request,
    prediction_fields,
)
from discrete_robot.pushing.simulation import PushStep, iter_push_simulation, step_modes
from discrete_robot.pushing.streaming import FingerStream

FRAME = "world"
POSE_TOPIC = "push/object_pose"
MARKER_TOPIC = "push/markers"
FINGER_TOPIC = "push/finger_position"
SQUARE = [-0.05, -0.05, 0.05, -0.05, 0.05, 0.05, -0.05, 0.05]


def _footprint_check(values) -> str | None:
    if len(values) < 6 or len(values) % 2:
        return "must hold x, y pairs of at least 3 vertices"
    return finite_values(values)


PARAMETERS = [
    ParameterSpec("support_friction", 0.5, "streaming object: object-table Coulomb coefficient", check=positive,
                  value_range=(1e-6, 10.0)),
    ParameterSpec("contact_friction", 0.3, "streaming finger: finger-object Coulomb coefficient", check=non_negative,
                  value_range=(0.0, 10.0)),
    ParameterSpec("normal_force", 1.0, "streaming object: weight on the table, N", check=positive,
                  value_range=(1e-9, 1e6)),
    ParameterSpec("pressure_model", "exact", "uniform support pressure: exact (closed-form integration over the "
                  "footprint) or grid (about grid_points support points); services and streaming",
                  check=one_of("exact", "grid"), read_only=True),
    ParameterSpec("grid_points", 200, "support points of the grid pressure model", check=positive,
                  value_range=(2, 100000), read_only=True),
    ParameterSpec("time_step", 0.01, "simulate_push step when the request's time_step is 0, s", check=positive,
                  value_range=(1e-5, 10.0)),
    ParameterSpec("pusher_radius", 0.01, "streaming finger radius, m (0 = point finger)", check=non_negative,
                  value_range=(0.0, 1.0)),
    ParameterSpec("object_footprint", SQUARE, "streaming object footprint: x0, y0, x1, y1, ... counter-clockwise, "
                  "object frame, m", check=_footprint_check, read_only=True),
    ParameterSpec("object_initial_pose", [0.0, 0.0, 0.0], "streaming object's initial pose in world: x, y (m), "
                  "theta (rad)", check=finite_values, type=Parameter.Type.DOUBLE_ARRAY, read_only=True),
    ParameterSpec("max_finger_jump", 0.5, "streaming: a finger position farther than this from the last one is "
                  "ignored (a teleport, not a push; it would also be unbounded work), m", check=positive,
                  value_range=(1e-6, 100.0)),
    ParameterSpec("request_timeout", 10.0, "simulate_push: wall-clock budget of one request, s; a longer "
                  "computation stops and the request is refused", check=positive, value_range=(0.01, 600.0)),
]


def _xy(points) -> list[list[float]]:
    return [[p.x, p.y] for p in points]


def _object_fields(request) -> dict:
    return {"footprint": _xy(request.footprint), "support_points": _xy(request.support_points),
            "support_weights": list(request.support_weights), "normal_force": request.normal_force,
            "support_friction": request.support_friction, "contact_friction": request.contact_friction,
            "pusher_radius": request.pusher_radius}


class PushPredictorNode(GuardedNode):
    """Serves push predictions and simulations and pushes a streamed object."""

    NODE_NAME = "push_predictor_node"

    def __init__(self, **kwargs):
        super().__init__(self.NODE_NAME, **kwargs)
        self.values = declare_parameters(self, PARAMETERS, cross_check=self._object_check)
        self.add_post_set_parameters_callback(self.on_parameters_set)
        self.grid_points = self.values["grid_points"] if self.values["pressure_model"] == "grid" else 0
        self.stream_object = self._streaming_object(self.values)
        pose = self.values["object_initial_pose"]
        if len(pose) != 3:
            raise StartupError(f"{self.NODE_NAME}: object_initial_pose needs x, y, theta, got {list(pose)}")
        self.stream = FingerStream(pose=np.asarray(pose, dtype=float))
        self.pose_pub = self.create_publisher(PoseStamped, POSE_TOPIC, STATE_QOS)
        self.marker_pub = self.create_publisher(MarkerArray, MARKER_TOPIC, STATE_QOS)
        self.create_service(PredictPush, "predict_push", self.on_predict)
        self.create_service(SimulatePush, "simulate_push", self.on_simulate)
        self.create_subscription(PointStamped, FINGER_TOPIC, self.on_finger, STATE_QOS)
        self.get_logger().info(f"serving predict_push and simulate_push ({self.values['pressure_model']} uniform "
                               f"pressure); streaming object of {len(self.stream_object.footprint)} vertices on "
                               f"{FINGER_TOPIC}")

    # ------------------------------------------------------------------------------------------ parameters

    def _streaming_object(self, values: dict):
        try:
            return make_pushed_object(np.reshape(values["object_footprint"], (-1, 2)), values["support_friction"],
                                      values["normal_force"], grid_points=self.grid_points)
        except DiscreteRobotError as error:
            raise StartupError(f"{self.NODE_NAME}: object_footprint: {error}") from error

    def _object_check(self, values: dict) -> str | None:
        try:
            make_pushed_object(np.reshape(values["object_footprint"], (-1, 2)), values["support_friction"],
                               values["normal_force"])
        except DiscreteRobotError as error:
            return f"streaming object: {error}"
        return None

    def on_parameters_set(self, parameters: list[Parameter]) -> None:
        """Validated by declare_parameters' guard; friction and weight changes rebuild the streaming object."""
        for parameter in parameters:
            self.values[parameter.name] = parameter.value
        if any(p.name in ("support_friction", "normal_force") for p in parameters):
            self.stream_object = self._streaming_object(self.values)

    # ------------------------------------------------------------------------------------------ services

    def on_predict(self, request, response):
        fields = {**_object_fields(request), "contact_point": [request.contact_point.x, request.contact_point.y],
                  "pusher_velocity": [request.pusher_velocity.x, request.pusher_velocity.y]}
        try:
            parsed = parse_predict_request(fields, grid_points=self.grid_points)
            prediction = predict_push(parsed.obj, parsed.contact_point, parsed.pusher_velocity,
                                      parsed.contact_friction, parsed.pusher_radius)
        except DiscreteRobotError as error:
            return self._refuse(response, "predict_push", error)
        answer = prediction_fields(prediction)
        response.success = True
        response.object_twist.linear = Vector3(**answer["object_twist"]["linear"])
        response.object_twist.angular = Vector3(**answer["object_twist"]["angular"])
        response.center_of_rotation = Point(**answer["center_of_rotation"])
        response.contact_mode = answer["contact_mode"]
        response.contact_force = Vector3(**answer["contact_force"])
        response.power = answer["power"]
        return response

    def on_simulate(self, request, response):
        fields = {**_object_fields(request), "pusher_path": _xy(request.pusher_path),
                  "object_pose": [request.object_pose.x, request.object_pose.y, request.object_pose.theta],
                  "pusher_speed": request.pusher_speed, "time_step": request.time_step}
        try:
            parsed = parse_simulate_request(fields, default_time_step=self.values["time_step"],
                                            grid_points=self.grid_points)
            times, steps = [], []
            with limited(self.values["request_timeout"]):
                for time, step in iter_push_simulation(parsed.obj, parsed.initial_pose, parsed.pusher_path,
                                                       parsed.pusher_speed, parsed.time_step,
                                                       parsed.contact_friction, parsed.pusher_radius):
                    times.append(time)
                    steps.append(step)
                    self._publish(parsed.obj.footprint, step, parsed.pusher_radius)
        except DiscreteRobotError as error:
            return self._refuse(response, "simulate_push", error)
        modes = step_modes(steps)
        response.success = True
        response.times = [float(t) for t in times]
        response.object_poses = [Pose2D(x=float(s.pose[0]), y=float(s.pose[1]), theta=float(s.pose[2]))
                                 for s in steps]
        response.contact_modes = [m.value for m in modes]
        self.get_logger().info(f"simulate_push: {len(times)} steps over {times[-1]:.3f} s")
        return response

    def _refuse(self, response, service: str, error: Exception):
        self.get_logger().warning(f"{service}: refused: {error}")
        response.success = False
        response.message = str(error)
        return response

    # ------------------------------------------------------------------------------------------ streaming

    def on_finger(self, msg) -> None:
        if msg.header.frame_id not in ("", FRAME):
            self.refusals.warning(FINGER_TOPIC, f"{FINGER_TOPIC}: ignored a position in frame "
                                                f"'{msg.header.frame_id}' (expected '{FRAME}')")
            return
        try:
            step = self.stream.push(self.stream_object, (msg.point.x, msg.point.y), self.values["max_finger_jump"],
                                    self.values["contact_friction"], self.values["pusher_radius"])
        except DiscreteRobotError as error:
            self.refusals.warning(FINGER_TOPIC, f"{FINGER_TOPIC}: {error}; object kept where it was")
            return
        self._publish(self.stream_object.footprint, step, self.values["pusher_radius"])

    # ------------------------------------------------------------------------------------------ output

    def _publish(self, footprint: np.ndarray, step: PushStep, pusher_radius: float) -> None:
        stamp = self.get_clock().now().to_msg()
        x, y, theta = (float(v) for v in step.pose)
        pose = PoseStamped(pose=pose_msg((x, y, 0.0), yaw_quaternion(theta)))
        pose.header.stamp = stamp
        pose.header.frame_id = FRAME
        self.pose_pub.publish(pose)
        self.marker_pub.publish(push_markers(footprint, step, pusher_radius, stamp, FRAME))


main = node_main(PushPredictorNode)
