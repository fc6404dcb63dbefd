"""space_robot_node: the free-floating multi-arm space robot simulated live (discrete_robot.space).

Publishes
- ``space_robot/joint_states`` (sensor_msgs/JointState): one entry per DOF, named as the URDF joints
  (``<joint>_0.._2`` for spherical joints, whose positions are the successive rotation angles about the joint
  axes; rad, or m for a prismatic joint); ``velocity`` = the joint rates (rad/s or m/s; for a spherical joint
  the components of its relative angular velocity on its axes, which equal the angles' rates only at zero
  angles); ``effort`` = the generalised force on each joint (N m, or N on a slide): its torque command plus the
  external loads' share, Q of M u̇ + h = Q (discrete_robot.space.recursive.equation_terms).
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

- ``/clock`` (unless it follows another world's, ``publish_clock: false`` as in bringup), ``/tf`` (``world`` ->
  ``<frame_prefix><base>`` and every link of the arms), ``/tf_static``, ``/diagnostics``: see
  discrete_robot.nodes.simulator. Everything is stamped with simulated time. The diagnostics' momentum drift is
  the change of the momenta less the impulse of the applied loads (discrete_robot.simulation.floating_base).

Each arm is a joint_trajectory_controller (``<arm>_controller/follow_joint_trajectory`` and its topics and
service, JTC's contract, torque-driven on the floating base: discrete_robot.nodes.space_arm_controllers); a
torque command ends their goals and drives every joint.

Services under ``space_robot/simulation/``: pause, resume, step, reset, set_state (joint positions and rates,
and with ``set_base`` the base pose and twist; a zero or non-finite orientation quaternion is refused).

Bad commands (wrong length, NaN, unknown body) are logged and ignored; the simulation runs on.
"""

import numpy as np
from geometry_msgs.msg import PoseStamped, WrenchStamped
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, MultiArrayDimension, String

from discrete_robot.errors import InputError
from discrete_robot.model.description import package_config_path
from discrete_robot.model.sources import robot_description
from discrete_robot.model.urdf import WORLD_FRAME, FrameTransform, fixed_transforms, joint_transforms
from discrete_robot.nodes.common import (
    JOINT_STATE_QOS,
    LATCHED_QOS,
    ROBOT_DESCRIPTION,
    STATE_QOS,
    ParameterSpec,
    declare_parameters,
    joint_state_msg,
    node_main,
    node_model,
    pose_msg,
    ros_name,
)
from discrete_robot.nodes.conversions import merged_joint_state
from discrete_robot.nodes.simulator import SimulatorNode, simulator_parameters
from discrete_robot.nodes.space_arm_controllers import ARM_PARAMETERS, SpaceArmControllers
from discrete_robot.simulation.floating_base import MomentumBudget
from discrete_robot.space.loads import ExternalLoad, LoadFrame, paper_loads
from discrete_robot.space.recursive import equation_terms
from discrete_robot.space.robot import SpaceRobot
from discrete_robot.space.simulation import Simulator
from discrete_robot.space.state import base_frame_origin, rest_state, state_from_base_frame
from discrete_robot.validation import finite_vector

DEFAULT_MODEL = "space_robot_dual_arm.yaml"
MOMENTUM_LABELS = "P_x P_y P_z L_x L_y L_z kinetic_energy c_x c_y c_z"

PARAMETERS = [
    ParameterSpec("model_file", "", "space robot model: YAML (docs/model_format.md, floating base), or URDF/xacro "
                                    "whose root link is the floating base; empty = the shipped "
                                    f"config/{DEFAULT_MODEL} (the paper's Table 1 robot)", read_only=True),
    ROBOT_DESCRIPTION,
    *simulator_parameters(time_step=0.001, publish_rate=50.0),
    ParameterSpec("apply_paper_loads", False, "apply the paper's constant forces at the arm tips "
                                              "([1,-1,1] N on arm 1, [2,-2,-2] N on arm 2, link frames)",
                  read_only=True),
    ParameterSpec("frame_prefix", "space_robot/", "prefix of the TF frames (as robot_state_publisher's "
                                                  "frame_prefix); the base frame is <prefix><base name>",
                  check=ros_name(relative_only=True, trailing_slash=True, empty=True), read_only=True),
    *ARM_PARAMETERS,
]


class SpaceRobotNode(SimulatorNode):
    """Simulates the space robot in real time (scaled) and publishes its state."""

    NODE_NAME = "space_robot_node"
    CONTROL_NAMESPACE = "space_robot/simulation"

    def __init__(self, **kwargs):
        super().__init__(self.NODE_NAME, **kwargs)
        values = declare_parameters(self, PARAMETERS)
        self.model = model = node_model(values, package_config_path(DEFAULT_MODEL), floating_base=True)
        self.robot = SpaceRobot.from_model(model)
        self.fixed_loads = paper_loads(self.robot) if values["apply_paper_loads"] else ()
        self.wrenches: dict[str, ExternalLoad] = {}
        self.torques = np.zeros(self.robot.dof)
        self.simulator = Simulator(self.robot, rest_state(self.robot), self.fixed_loads)
        self.momenta = MomentumBudget(self.robot, self.simulator)
        self.arm_controllers = SpaceArmControllers(self, self.robot, values, lambda: self.simulator.sample())

        self.joint_pub = self.create_publisher(JointState, "space_robot/joint_states", JOINT_STATE_QOS)
        self.pose_pub = self.create_publisher(PoseStamped, "space_robot/base_pose", STATE_QOS)
        self.momentum_pub = self.create_publisher(Float64MultiArray, "space_robot/momentum", STATE_QOS)
        description = self.create_publisher(String, "space_robot/robot_description", LATCHED_QOS)
        description.publish(String(data=robot_description(model)))
        self.create_subscription(Float64MultiArray, "space_robot/joint_torque_commands", self.on_torques, STATE_QOS)
        self.create_subscription(WrenchStamped, "space_robot/external_wrench", self.on_wrench, STATE_QOS)
        self.get_logger().info(f"simulating '{self.robot.name}' ({len(self.robot.arms)} arms, {self.robot.dof} DOF); "
                               f"paper loads {'on' if self.fixed_loads else 'off'}")
        self.start_simulation(values, hardware_id=self.robot.name)

    def on_torques(self, msg: Float64MultiArray) -> None:
        try:
            self.torques = finite_vector(msg.data, self.robot.dof, "joint torque command")
        except InputError as error:
            self.refusals.warning(str(error), f"ignored: {error} (joints: {', '.join(self.robot.dof_names)})")
            return
        self.arm_controllers.release("replaced by a joint_torque_commands message")
        self._apply_loads()

    def on_wrench(self, msg: WrenchStamped) -> None:
        body = msg.header.frame_id
        try:
            self.robot.body_index(body)
            force = finite_vector([msg.wrench.force.x, msg.wrench.force.y, msg.wrench.force.z], 3, "wrench force")
            torque = finite_vector([msg.wrench.torque.x, msg.wrench.torque.y, msg.wrench.torque.z], 3, "wrench torque")
        except InputError as error:
            self.refusals.warning(str(error), f"ignored external wrench: {error}")
            return
        if np.any(force) or np.any(torque):
            self.wrenches[body] = ExternalLoad(body=body, force=force, moment=torque, frame=LoadFrame.BODY)
        else:
            self.wrenches.pop(body, None)
        self._apply_loads()

    def _apply_loads(self) -> None:
        self.simulator.set_loads((*self.fixed_loads, *self.wrenches.values()), self.torques)

    # ------------------------------------------------------------------------------------------ the world

    @property
    def world(self) -> Simulator:
        return self.simulator

    def advance_world(self, steps: int) -> None:
        controlled = self.arm_controllers.torques(self.simulator, self.torques)
        if controlled is not None:
            self.simulator.set_loads(self.simulator.loads, controlled)
        self.momenta.advance(self.simulator, self.time_step, steps)

    def on_step_failed(self) -> None:
        self.arm_controllers.release(f"the simulation step failed at t = {self.simulator.time:.3f} s")
        self.torques = np.zeros(self.robot.dof)
        self.wrenches.clear()
        self._apply_loads()

    def _restart(self, state) -> None:
        """Simulate from ``state`` on, at the current simulated time."""
        simulator = Simulator(self.robot, state, (*self.fixed_loads, *self.wrenches.values()), self.torques)
        simulator.time = self.simulator.time
        self.simulator = simulator
        self.arm_controllers.release(f"the state was reset or set at t = {simulator.time:.3f} s")
        self.momenta.restart(simulator)

    def reset_world(self) -> None:
        self._restart(rest_state(self.robot))

    def set_world_state(self, request) -> None:
        if request.object_names or request.object_poses:
            raise InputError("object_names: the space robot's simulator has no scene, so no objects to place")
        current = self.simulator.sample()
        positions, rates = merged_joint_state(self.robot.dof_names, request.joint_state, current.joint_positions,
                                              current.state.joint_rates)
        base = current.state
        origin = base_frame_origin(self.robot, base)
        orientation, velocity, angular = base.base_orientation, base.base_velocity, base.base_angular_velocity
        if request.set_base:
            pose, twist = request.base_pose, request.base_twist
            origin = finite_vector([pose.position.x, pose.position.y, pose.position.z], 3, "base_pose.position")
            orientation = finite_vector([pose.orientation.w, pose.orientation.x, pose.orientation.y,
                                         pose.orientation.z], 4, "base_pose.orientation")
            if not np.linalg.norm(orientation) > 1e-9:
                raise InputError(f"base_pose.orientation: a zero quaternion is no rotation, got "
                                 f"{orientation.tolist()} (w, x, y, z)")
            velocity = finite_vector([twist.linear.x, twist.linear.y, twist.linear.z], 3, "base_twist.linear")
            angular = finite_vector([twist.angular.x, twist.angular.y, twist.angular.z], 3, "base_twist.angular")
        self._restart(state_from_base_frame(self.robot, origin, orientation, positions, velocity, angular, rates))

    def publish_state(self, stamp) -> None:
        sample = self.simulator.sample()
        torques = self.simulator.joint_torques       # the commands, or the arm controllers' torques
        efforts = (equation_terms(self.robot, sample.state, self.simulator.loads, torques)
                   .generalized_forces[6:] if self.simulator.loads else torques)
        self.joint_pub.publish(joint_state_msg(stamp, self.robot.dof_names, sample.joint_positions,
                                               sample.state.joint_rates, efforts))
        pose = PoseStamped()
        pose.header.stamp = stamp
        pose.header.frame_id = WORLD_FRAME
        pose.pose = pose_msg(base_frame_origin(self.robot, sample.state), sample.state.base_orientation)
        self.pose_pub.publish(pose)
        momentum = sample.momentum
        data = np.concatenate([momentum.linear, momentum.angular, [momentum.kinetic_energy], momentum.center_of_mass])
        msg = Float64MultiArray(data=[float(v) for v in data])
        msg.layout.dim = [MultiArrayDimension(label=MOMENTUM_LABELS, size=len(data), stride=len(data))]
        self.momentum_pub.publish(msg)
        self.arm_controllers.tick(stamp, self.simulator.joint_torques)

    def base_transforms(self):
        state = self.simulator.sample().state
        return [FrameTransform(WORLD_FRAME, self.model.base.name, state.base_rotation(),
                               base_frame_origin(self.robot, state))]

    def moving_transforms(self):
        return joint_transforms(self.model, self.simulator.sample().joint_positions)

    def static_transforms(self):
        return fixed_transforms(self.model)   # a URDF's fixed links in their bodies

    def diagnostic_values(self) -> dict[str, float]:
        return self.momenta.diagnostic_values(self.simulator)


main = node_main(SpaceRobotNode)
