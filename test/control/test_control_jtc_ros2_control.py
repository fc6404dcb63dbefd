"""The controller's joints from a URDF's ``<ros2_control>`` tags (issue 21): which joints JTC drives, goals naming
another joint refused as JTC refuses unknown joints, and the joints outside it held while it drives. No ROS."""

from pathlib import Path
from types import SimpleNamespace as Msg

import numpy as np
import pytest

from discrete_robot.control.computed_torque import embed_reference, tracking_torques
from discrete_robot.control.joint_trajectory_controller import (
    ControllerSettings,
    ErrorCode,
    JointTrajectoryController,
    controller_joints,
    validate_trajectory,
)
from discrete_robot.control.trajectory import JointNamesError, Reference
from discrete_robot.discrete.simulation import FixedStepSimulation
from discrete_robot.errors import InputError
from discrete_robot.model.dynamics import RigidBodySystem
from discrete_robot.model.lagrangian import generalized_forces
from discrete_robot.model.urdf_reader import model_from_urdf

#: a 3-joint arm whose <ros2_control> block gives shoulder and elbow a command interface, wrist none
ARM = (Path(__file__).parent / "arm3_ros2_control.urdf").read_text()


def _time(seconds: float) -> Msg:
    whole = int(np.floor(seconds))
    return Msg(sec=whole, nanosec=int(round((seconds - whole) * 1e9)))


def _trajectory(names, points) -> Msg:
    """A JointTrajectory-shaped message; a point is (t, positions)."""
    return Msg(joint_names=list(names), header=Msg(stamp=_time(0.0)),
               points=[Msg(time_from_start=_time(t), positions=list(p), velocities=[], accelerations=[], effort=[])
                       for t, p in points])


def test_the_ros2_control_joints_with_a_command_interface_are_the_controller_s():
    model = model_from_urdf(ARM)
    assert model.joint_names == ("shoulder", "elbow", "wrist")
    assert controller_joints(model.joint_names, model.command_interfaces) == ("shoulder", "elbow")
    # the joints parameter wins, in its order (JTC's joints); without tags every joint
    assert controller_joints(model.joint_names, model.command_interfaces, ["wrist", "shoulder"]) == ("wrist",
                                                                                                       "shoulder")
    assert controller_joints(model.joint_names, ()) == ("shoulder", "elbow", "wrist")
    with pytest.raises(InputError, match=r"joints: \['tool'\] are not joints of the robot"):
        controller_joints(model.joint_names, model.command_interfaces, ["shoulder", "tool"])
    with pytest.raises(InputError, match="joints: names a joint twice"):
        controller_joints(model.joint_names, model.command_interfaces, ["elbow", "elbow"])
    with pytest.raises(InputError, match="<ros2_control>: no joint of the robot"):
        controller_joints(model.joint_names, (("wrist", ()),))


def test_a_goal_naming_the_uncontrolled_joint_is_refused_as_jtc_refuses_an_unknown_joint():
    model = model_from_urdf(ARM)
    joints = controller_joints(model.joint_names, model.command_interfaces)
    settings = ControllerSettings(joints, np.zeros(2), np.zeros(2))
    goal = validate_trajectory(settings, _trajectory(["elbow", "shoulder"], [(1.0, [0.2, 0.1])]), 0.0)
    np.testing.assert_array_equal(goal.positions, [[0.1, 0.2]])          # in the controller's order
    # joint_trajectory_controller.cpp (kilted) 1698-1710: a name outside the controller's joints is refused
    with pytest.raises(JointNamesError, match=r"unknown joint name\(s\) \['wrist'\]"):
        validate_trajectory(settings, _trajectory(["shoulder", "wrist"], [(1.0, [0.2, 0.1])]), 0.0)
    partial = ControllerSettings(joints, np.zeros(2), np.zeros(2), allow_partial_joints_goal=True)
    with pytest.raises(JointNamesError, match="wrist"):
        validate_trajectory(partial, _trajectory(["wrist"], [(1.0, [0.1])]), 0.0)


def test_embedded_efforts_of_the_held_joints_are_the_newton_euler_inverse_dynamics():
    system = RigidBodySystem(model_from_urdf(ARM))
    q, qd = np.array([0.3, -0.5, 0.8]), np.array([0.4, -0.2, 0.1])
    controlled = np.array([0, 1])
    reference = Reference(np.array([0.4, -0.4]), np.array([0.1, 0.2]), np.array([1.0, -2.0]), np.array([5.0, 6.0]))
    full = embed_reference(reference, controlled, np.array([9.0, 9.0, 0.7]),
                           lambda qdd: generalized_forces(system, q, qd, qdd))
    np.testing.assert_array_equal(full.q, [0.4, -0.4, 0.7])
    np.testing.assert_array_equal(full.qd, [0.1, 0.2, 0.0])
    np.testing.assert_array_equal(full.qdd, [1.0, -2.0, 0.0])
    # the held joint's feedforward is the wrist row of τ = ID(q, q̇, q̈_d), checked by recursive Newton–Euler
    newton_euler = system.inverse_dynamics(q, qd, np.array([1.0, -2.0, 0.0]))
    np.testing.assert_allclose(full.effort, [5.0, 6.0, newton_euler[2]], rtol=1e-10, atol=1e-12)


def test_the_controller_drives_its_joints_while_the_other_holds_where_it_was():
    model = model_from_urdf(ARM)
    system = RigidBodySystem(model)
    joints = controller_joints(model.joint_names, model.command_interfaces)
    controlled = np.array([model.joint_names.index(name) for name in joints])
    q0 = np.array([0.2, -0.3, 0.6])
    simulation = FixedStepSimulation(system, "discrete", 1e-3, q0, np.zeros(3), model.lower, model.upper)
    controller = JointTrajectoryController(ControllerSettings(joints, np.zeros(2), np.full(2, 0.01)))
    trajectory = validate_trajectory(controller.settings, _trajectory(joints, [(1.0, [0.8, 0.5])]), 0.0)
    controller.follow(trajectory, 0.0, q0[controlled], np.zeros(2), goal="goal")
    held, wrist = q0.copy(), []

    def torques(t, q, qd):
        reference = embed_reference(controller.sample(t), controlled, held,
                                    lambda qdd: generalized_forces(system, q, qd, qdd))
        return tracking_torques(system, q, qd, reference, 100.0, 20.0, model.effort_limits)

    ended = None
    while ended is None and simulation.time < 3.0:
        simulation.step(10, torques)
        wrist.append(simulation.q[2])
        update = controller.update(simulation.time, simulation.q[controlled], simulation.qd[controlled])
        ended = update.ended
    assert ended is not None and ended.outcome.code == ErrorCode.SUCCESSFUL, ended
    np.testing.assert_allclose(simulation.q[controlled], [0.8, 0.5], atol=0.01)
    # computed torque on the exact model: the wrist's error obeys ë + 20 ė + 100 e = 0 from e = 0, so it stays at
    # its start but for the torques held over each 1 ms step (the shoulder and elbow swing 0.6 and 0.8 rad meanwhile)
    assert np.max(np.abs(np.array(wrist) - q0[2])) < 1e-3
