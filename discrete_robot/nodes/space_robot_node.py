"""space_robot_node: the free-floating multi-arm space robot simulated live (discrete_robot.space).

Publishes
- ``space_robot/joint_states`` (sensor_msgs/JointState): one entry per rotational DOF, named as the URDF
  joints (``<joint>_0.._2`` for spherical joints, whose positions are the successive rotation angles about
  the joint axes); ``effort`` = the joint torque command in force. No ``velocity``: a spherical joint's rate
  is an angular velocity, not the derivative of those angles.
- ``space_robot/base_pose`` (geometry_msgs/PoseStamped, frame ``world``): the base frame's pose.
- ``space_robot/momentum`` (std_msgs/Float64MultiArray, for monitoring): [P_x, P_y, P_z, L_x, L_y, L_z,
  kinetic_energy, c_x, c_y, c_z] — total linear momentum (kg m/s) and angular momentum about the system
  CoM (kg m²/s) in the world frame, kinetic energy (J), system CoM (m); the layout's labels name them.
- ``space_robot/robot_description`` (std_msgs/String, transient local): the URDF of the model.

Subscribes
- ``space_robot/joint_torque_commands`` (std_msgs/Float64MultiArray): one generalised torque per DOF in
  joint_states order (N m; for a spherical joint the torque on the link in its own frame); held until the
  next command.
- ``space_robot/external_wrench`` (geometry_msgs/WrenchStamped): header.frame_id = a body name; the force
  acts at that body's CoM and force and torque are in that body's frame; held until the next wrench for
  the same body (a zero wrench removes it).

Broadcasts ``world`` -> ``<frame_prefix><base>`` on /tf where tf2_ros is installed (every ROS 2
install; not the PyPI wheels), so robot_state_publisher's frames of the arms hang off the moving base.

Bad commands (wrong length, NaN, unknown body) are logged and ignored; the simulation runs on.
"""

import numpy as np
from geometry_msgs.msg import PoseStamped, WrenchStamped
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, MultiArrayDimension, String

from discrete_robot.errors import DiscreteRobotError, InputError
from discrete_robot.model.description import load_model, package_config_path
from discrete_robot.model.urdf import to_urdf
from discrete_robot.nodes.common import (
    LATCHED_QOS,
    STATE_QOS,
    GuardedNode,
    ParameterSpec,
    declare_parameters,
    joint_state_msg,
    node_main,
    pose_msg,
    positive,
)
from discrete_robot.space.loads import ExternalLoad, LoadFrame, paper_loads
from discrete_robot.space.robot import SpaceRobot
from discrete_robot.space.simulation import Simulator
from discrete_robot.space.state import rest_state
from discrete_robot.validation import finite_vector

try:
    from geometry_msgs.msg import TransformStamped
    from tf2_ros import TransformBroadcaster
except ImportError:  # the embedded PyPI runtime has no tf2_ros: base_pose still carries the pose
    TransformBroadcaster = None

DEFAULT_MODEL = "space_robot_dual_arm.yaml"
MOMENTUM_LABELS = "P_x P_y P_z L_x L_y L_z kinetic_energy c_x c_y c_z"

PARAMETERS = [
    ParameterSpec("model_file", "", "space robot model YAML (docs/model_format.md, floating base); "
                                    f"empty = the shipped config/{DEFAULT_MODEL} (the paper's Table 1 robot)",
                  read_only=True),
    ParameterSpec("time_step", 0.001, "largest integration step, s", check=positive, value_range=(1e-5, 1.0),
                  read_only=True),
    ParameterSpec("publish_rate", 50.0, "rate of the simulation ticks and of every published topic, Hz",
                  check=positive, value_range=(0.1, 1000.0), read_only=True),
    ParameterSpec("real_time_factor", 1.0, "simulated seconds per wall-clock second", check=positive,
                  value_range=(1e-3, 100.0), read_only=True),
    ParameterSpec("apply_paper_loads", False, "apply the paper's constant forces at the arm tips "
                                              "([1,-1,1] N on arm 1, [2,-2,-2] N on arm 2, link frames)",
                  read_only=True),
    ParameterSpec("frame_prefix", "space_robot/", "prefix of the TF frames (as robot_state_publisher's "
                                                  "frame_prefix); the base frame is <prefix><base name>",
                  read_only=True),
]


class SpaceRobotNode(GuardedNode):
    """Simulates the space robot in real time (scaled) and publishes its state."""

    NODE_NAME = "space_robot_node"

    def __init__(self, **kwargs):
        super().__init__(self.NODE_NAME, **kwargs)
        values = declare_parameters(self, PARAMETERS)
        path = values["model_file"] or str(package_config_path(DEFAULT_MODEL))
        model = load_model(path)
        self.robot = SpaceRobot.from_model(model)
        self.time_step = values["time_step"]
        self.tick_duration = values["real_time_factor"] / values["publish_rate"]
        self.fixed_loads = paper_loads(self.robot) if values["apply_paper_loads"] else ()
        self.wrenches: dict[str, ExternalLoad] = {}
        self.torques = np.zeros(self.robot.dof)
        self.simulator = Simulator(self.robot, rest_state(self.robot), self.fixed_loads)

        self.joint_pub = self.create_publisher(JointState, "space_robot/joint_states", STATE_QOS)
        self.pose_pub = self.create_publisher(PoseStamped, "space_robot/base_pose", STATE_QOS)
        self.momentum_pub = self.create_publisher(Float64MultiArray, "space_robot/momentum", STATE_QOS)
        description = self.create_publisher(String, "space_robot/robot_description", LATCHED_QOS)
        description.publish(String(data=to_urdf(model)))
        self.base_frame = values["frame_prefix"] + model.base.name
        self.tf_broadcaster = TransformBroadcaster(self) if TransformBroadcaster is not None else None
        self.create_subscription(Float64MultiArray, "space_robot/joint_torque_commands", self.on_torques, STATE_QOS)
        self.create_subscription(WrenchStamped, "space_robot/external_wrench", self.on_wrench, STATE_QOS)
        self.create_timer(1.0 / values["publish_rate"], self.tick)
        self.get_logger().info(f"simulating '{self.robot.name}' ({len(self.robot.arms)} arms, {self.robot.dof} DOF) "
                               f"from {path}; paper loads {'on' if self.fixed_loads else 'off'}")
        self.publish()

    def on_torques(self, msg: Float64MultiArray) -> None:
        try:
            self.torques = finite_vector(msg.data, self.robot.dof, "joint torque command")
        except InputError as error:
            self.get_logger().warning(f"ignored: {error} (joints: {', '.join(self.robot.dof_names)})")
            return
        self._apply_loads()

    def on_wrench(self, msg: WrenchStamped) -> None:
        body = msg.header.frame_id
        try:
            self.robot.body_index(body)
            force = finite_vector([msg.wrench.force.x, msg.wrench.force.y, msg.wrench.force.z], 3, "wrench force")
            torque = finite_vector([msg.wrench.torque.x, msg.wrench.torque.y, msg.wrench.torque.z], 3, "wrench torque")
        except InputError as error:
            self.get_logger().warning(f"ignored external wrench: {error}")
            return
        if np.any(force) or np.any(torque):
            self.wrenches[body] = ExternalLoad(body=body, force=force, moment=torque, frame=LoadFrame.BODY)
        else:
            self.wrenches.pop(body, None)
        self._apply_loads()

    def _apply_loads(self) -> None:
        self.simulator.set_loads((*self.fixed_loads, *self.wrenches.values()), self.torques)

    def tick(self) -> None:
        """Advance by real_time_factor / publish_rate simulated seconds, in steps of at most time_step."""
        steps = max(1, int(np.ceil(self.tick_duration / self.time_step - 1e-9)))
        try:
            for _ in range(steps):
                self.simulator.step(self.tick_duration / steps)
        except DiscreteRobotError as error:
            self.get_logger().error(f"simulation step failed: {error}; joint torques and wrenches cleared, "
                                    f"state kept at t = {self.simulator.time:.3f} s")
            self.torques = np.zeros(self.robot.dof)
            self.wrenches.clear()
            self._apply_loads()
            return
        self.publish()

    def publish(self) -> None:
        sample = self.simulator.sample()
        stamp = self.get_clock().now().to_msg()
        self.joint_pub.publish(joint_state_msg(stamp, self.robot.dof_names, sample.joint_positions,
                                               effort=self.torques))
        pose = PoseStamped()
        pose.header.stamp = stamp
        pose.header.frame_id = "world"
        base_rotation = sample.state.base_rotation()
        origin = sample.state.base_position - base_rotation @ self.robot.base_com
        pose.pose = pose_msg(origin, sample.state.base_orientation)
        self.pose_pub.publish(pose)
        if self.tf_broadcaster is not None:
            transform = TransformStamped(header=pose.header, child_frame_id=self.base_frame)
            position = pose.pose.position
            transform.transform.translation.x, transform.transform.translation.y = position.x, position.y
            transform.transform.translation.z = position.z
            transform.transform.rotation = pose.pose.orientation
            self.tf_broadcaster.sendTransform(transform)
        momentum = sample.momentum
        data = np.concatenate([momentum.linear, momentum.angular, [momentum.kinetic_energy], momentum.center_of_mass])
        msg = Float64MultiArray(data=[float(v) for v in data])
        msg.layout.dim = [MultiArrayDimension(label=MOMENTUM_LABELS, size=len(data), stride=len(data))]
        self.momentum_pub.publish(msg)


main = node_main(SpaceRobotNode)
