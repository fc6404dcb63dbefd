"""The arm holds (issue 26): at start, after set_state and after a reset, torque-driven (gravity compensation +
PD); a reset aborts the running goal with the reason, and simulated time never runs backwards. The control
services can be left out (issue 25, ``control_services``).

The held torques are checked against the planar 2-link arm's gravity torque written out by hand
(config/planar_2link.yaml: two uniform 1 m, 1 kg rods hinged about z, links along x, gravity 9.81 m/s² along
-y): with the CoM heights y₁ = ½ sin q₁ and y₂ = sin q₁ + ½ sin(q₁ + q₂), V = g (y₁ + y₂) and

    τ₁ = ∂V/∂q₁ = g (1.5 cos q₁ + 0.5 cos(q₁ + q₂)),   τ₂ = ∂V/∂q₂ = 0.5 g cos(q₁ + q₂)   (N m).

Each node runs in a namespace of its own (:data:`NS`), so a simulator another test run starts on the same
domain cannot add its joint_states or services to the ones checked here. Simulated time is read from the
node's joint_states stamps, which carry the time it publishes on /clock with them.
"""

import math

import numpy as np
import pytest

pytestmark = pytest.mark.ros

G = 9.81
START = [0.0, 0.0]            # horizontal: the largest gravity torque (19.6 of joint 1's 20 N m)
SET = [0.5, -0.3]
GOAL = [math.pi / 2, math.pi / 4]
#: rad, rad/s: how still a holding arm stays
STILL = 1e-9
#: N m: the held torque against the analytic gravity torque (the PD adds k_p e + k_d ė ~ 1e-7 at STILL)
TORQUE_TOLERANCE = 1e-6
ARM = {"time_step": 0.01, "publish_rate": 50.0}
NS = "/hold_and_reset"
IN_NS = ("-r", f"__ns:={NS}")
ACTION = f"{NS}/joint_trajectory_controller/follow_joint_trajectory"


def _seconds(stamp) -> float:
    return stamp.sec + stamp.nanosec * 1e-9


def _gravity_torque(q) -> np.ndarray:
    return G * np.array([1.5 * math.cos(q[0]) + 0.5 * math.cos(q[0] + q[1]), 0.5 * math.cos(q[0] + q[1])])


def _held(ros, q, duration: float = 1.0, still: float = STILL, timeout: float = 60.0):
    """joint_states over ``duration`` s of simulated time: within ``still`` of ``q`` (rad, and rad/s), holding
    with the gravity torque."""
    from sensor_msgs.msg import JointState

    first = ros.wait_for_message(f"{NS}/joint_states", JointState, timeout=timeout, predicate=lambda m: (
        np.abs(np.subtract(m.position, q)).max() < still and np.abs(m.velocity).max() < still))
    states = [first]
    ros.node.create_subscription(JointState, f"{NS}/joint_states", states.append, 100)
    assert ros.spin_until(lambda: _seconds(states[-1].header.stamp) >= _seconds(first.header.stamp) + duration,
                          60.0), f"the simulation stalled\n{ros.logs()}"
    positions = np.array([s.position for s in states])
    velocities = np.array([s.velocity for s in states])
    efforts = np.array([s.effort for s in states])
    assert np.abs(positions - q).max() < still, f"the arm moved {np.abs(positions - q).max():.3g} rad from {q}"
    assert np.abs(velocities).max() < still
    # efforts are those applied over the step before each message: none yet in a message right after a start,
    # a reset or a set_state, so the first one's are left out
    np.testing.assert_allclose(efforts[1:], np.tile(_gravity_torque(q), (len(efforts) - 1, 1)),
                               atol=TORQUE_TOLERANCE + 200.0 * still)   # + the PD's k_p e + k_d ė


def _trajectory(q, seconds: int):
    """A goal's trajectory: one point at ``q``, at rest, ``seconds`` from the start."""
    from builtin_interfaces.msg import Duration
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

    return JointTrajectory(joint_names=["joint1", "joint2"], points=[
        JointTrajectoryPoint(positions=list(q), velocities=[0.0, 0.0], time_from_start=Duration(sec=seconds))])


def test_the_arm_holds_at_start_and_after_set_state(ros):
    from discrete_robot_interfaces.srv import SetSimulationState
    from sensor_msgs.msg import JointState

    node = ros.start("discrete_robot_node", params={"initial_positions": START, **ARM}, ros_args=IN_NS)
    _held(ros, START)
    request = SetSimulationState.Request()
    request.joint_state = JointState(name=["joint1", "joint2"], position=SET)
    assert ros.call(SetSimulationState, f"{NS}/simulation/set_state", request).success
    _held(ros, SET)
    assert node.alive()


def test_reset_aborts_the_goal_with_the_reason_holds_the_initial_state_and_time_goes_on(ros):
    from action_msgs.msg import GoalStatus
    from control_msgs.action import FollowJointTrajectory
    from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
    from sensor_msgs.msg import JointState
    from std_srvs.srv import Trigger

    node = ros.start("discrete_robot_node", params={"initial_positions": START, **ARM}, ros_args=IN_NS)
    _held(ros, START, duration=0.2)
    stamps, diagnostics = [], []
    ros.node.create_subscription(JointState, f"{NS}/joint_states", lambda m: stamps.append(_seconds(m.header.stamp)),
                                 100)
    ros.node.create_subscription(DiagnosticArray, "/diagnostics", diagnostics.append, 100)
    goal = FollowJointTrajectory.Goal(trajectory=_trajectory(GOAL, 20))
    feedback = []
    handle = ros.send_goal(FollowJointTrajectory, ACTION, goal, feedback=feedback.append)
    assert handle.accepted
    assert ros.spin_until(lambda: feedback, 30.0), "no feedback: the goal does not run"
    before = stamps[-1]
    reset = ros.call(Trigger, f"{NS}/simulation/reset", Trigger.Request())
    assert reset.success and "simulated time goes on" in reset.message, reset.message
    result = ros.goal_result(handle, 30.0)
    assert result.status == GoalStatus.STATUS_ABORTED
    assert "reset" in result.result.error_string, result.result.error_string
    _held(ros, START)

    # the reset publishes the restored state at once, at the time of the tick before it (one repeated stamp), so
    # _held's second may start at `before` and end at exactly before + 1 s: wait for the tick after it
    assert ros.spin_until(lambda: stamps[-1] > before + 1.0, 30.0), "simulated time did not go on after the reset"
    assert len(stamps) > 10 and np.all(np.diff(stamps) >= 0.0), "simulated time ran backwards"
    assert ros.spin_until(lambda: any(s.message.startswith("reset") for m in diagnostics for s in m.status), 10.0)
    announced = next(s for m in diagnostics for s in m.status if s.message.startswith("reset"))
    assert announced.level == DiagnosticStatus.OK and "discrete_robot_node" in announced.name
    assert {v.key: v.value for v in announced.values}["resets"] == "1"
    assert node.alive()


def test_the_arm_holds_where_a_goal_ended_or_was_canceled(ros):
    """After a goal succeeds the arm holds its end point; after a cancel it comes to rest where it was and
    holds there (it does not fall)."""
    from action_msgs.msg import GoalStatus
    from control_msgs.action import FollowJointTrajectory
    from sensor_msgs.msg import JointState

    node = ros.start("discrete_robot_node", params={"initial_positions": START, **ARM}, ros_args=IN_NS)
    _held(ros, START, duration=0.2)
    handle = ros.send_goal(FollowJointTrajectory, ACTION, FollowJointTrajectory.Goal(trajectory=_trajectory(SET, 1)))
    assert ros.goal_result(handle, 60.0).status == GoalStatus.STATUS_SUCCEEDED
    _held(ros, SET, still=1e-6)

    handle = ros.send_goal(FollowJointTrajectory, ACTION, FollowJointTrajectory.Goal(trajectory=_trajectory(GOAL, 10)))
    ros.wait_for_message(f"{NS}/joint_states", JointState, timeout=60.0, predicate=lambda m: (
        np.abs(np.subtract(m.position, SET)).max() > 0.05))
    handle.cancel_goal_async()
    assert ros.goal_result(handle, 30.0).status == GoalStatus.STATUS_CANCELED
    rest = ros.wait_for_message(f"{NS}/joint_states", JointState, timeout=30.0,
                                predicate=lambda m: np.abs(m.velocity).max() < 1e-7)
    assert np.abs(np.subtract(rest.position, SET)).max() > 0.05, "the arm went back instead of holding"
    _held(ros, list(rest.position), still=1e-6)
    assert node.alive()


@pytest.mark.parametrize("executable, namespace", [("discrete_robot_node", f"{NS}/simulation"),
                                                   ("space_robot_node", f"{NS}/space_robot/simulation")])
def test_control_services_false_leaves_them_out(ros, executable, namespace):
    """With control_services false the node serves its other services (its parameters are seen) but none of
    pause, resume, reset, step, set_state; start_paused then cannot be asked for."""
    node = ros.start(executable, params={"control_services": False, **ARM}, ros_args=IN_NS)
    parameters = f"{NS}/{executable}/get_parameters"
    assert ros.spin_until(lambda: parameters in dict(ros.node.get_service_names_and_types()), 60.0), ros.logs()
    ros.spin_until(lambda: False, 1.0)   # the node's services are announced together; give the rest a moment
    served = [name for name, _ in ros.node.get_service_names_and_types() if name.startswith(namespace + "/")]
    assert served == [], f"{executable} serves {served}"
    assert node.alive()

    refused = ros.start(executable, params={"control_services": False, "start_paused": True, **ARM}, ros_args=IN_NS)
    assert refused.wait(timeout=120.0) != 0   # a loaded machine can take a minute to import and compile
    assert "start_paused: needs control_services" in refused.log()
