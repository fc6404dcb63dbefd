"""``experiment replay FILE.mcap``: rerun a recorded push-to-pose experiment in process, without a ROS graph, and
say whether every joint and object sample comes out bit-identical (docs/manipulation.md, determinism).

An experiment's MCAP carries its inputs: the metadata record :data:`INPUTS` (the arm's model file, the scene,
the simulator's parameters) and the executive's finger motions on ``/manipulation/arm_goals`` (each stamped with
the simulated time it starts at). The replay runs what the simulator ran, with the same classes: the world
(FixedBaseWorld with the scene's objects in its step) paused at its start, the trajectory controller's goal life
cycle (JointTrajectoryController, updated on the simulator's publish grid as its ticks update it) and
computed-torque tracking; each goal starts at its stamp and the world then takes the steps that reach
SETTLE_S past its last point, as manipulation_node has it step. The recorded ``/joint_states`` and
``/objects/<name>/pose`` up to the last goal's end are compared with the replay's state at their stamps.
Only the recording's messages are decoded (rclpy.serialization); no node is created.
"""

import json
import tempfile
from pathlib import Path

import numpy as np
import yaml

from discrete_robot.errors import InputError
from discrete_robot.nodes.conversions import stamp_ns
from discrete_robot.simulation.runtime import steps_for

#: the MCAP metadata record holding an experiment's inputs
INPUTS = "discrete_robot.experiment"
#: the simulator's parameters the record keeps (its others are their defaults)
REPLAYED = ("time_step", "publish_rate", "integrator", "kp", "kd", "initial_positions")
GOALS_TOPIC = "/manipulation/arm_goals"


def recorded(path: Path) -> tuple[dict, dict[str, list]]:
    """The inputs and the decoded messages by topic (``/joint_states``, the object poses, the arm goals) of the
    experiment recorded at ``path``; InputError when it holds no inputs."""
    from mcap.reader import make_reader
    from rclpy.serialization import deserialize_message

    from discrete_robot.ros.recorder import message_class

    inputs, messages = None, {}
    with open(path, "rb") as stream:
        reader = make_reader(stream)
        for record in reader.iter_metadata():
            if record.name == INPUTS:
                inputs = dict(record.metadata)
        if inputs is None:
            raise InputError(f"{path}: no {INPUTS} metadata: not an experiment recorded by this version")
        wanted = {"/joint_states", f"/objects/{inputs['object_name']}/pose", GOALS_TOPIC}
        for schema, channel, message in reader.iter_messages(topics=sorted(wanted)):
            decoded = deserialize_message(message.data, message_class(schema.name))
            messages.setdefault(channel.topic, []).append(decoded)
    return inputs, messages


class Replay:
    """The simulator of an experiment's inputs, stepped as the recorded run stepped it; ``samples`` maps each
    published stamp (ns) to (q, q̇, object pose)."""

    def __init__(self, inputs: dict):
        from discrete_robot.control.computed_torque import TrajectoryTracking, saturate
        from discrete_robot.control.joint_trajectory_controller import (
            JointTrajectoryController,
            continuous_joints,
            effective_cmd_timeout,
            effective_deceleration,
        )
        from discrete_robot.manipulation.arm import ArmFinger
        from discrete_robot.manipulation.scene import scene_from_dict
        from discrete_robot.model.description import load_model
        from discrete_robot.nodes.jtc_parameters import (
            CONTROLLER_PARAMETERS,
            controller_settings,
            gain_specs,
            joint_constraint_specs,
        )
        from discrete_robot.simulation.fixed_base import FixedBaseWorld
        from discrete_robot.simulation.pacing import TickGrid
        from discrete_robot.simulation.scene import SceneWorld

        settings = json.loads(inputs["simulator"])
        with tempfile.TemporaryDirectory() as folder:
            model_path = Path(folder) / inputs["model_name"]
            model_path.write_text(inputs["model"])
            self.model = model = load_model(model_path)
        scene = scene_from_dict(yaml.safe_load(inputs["scene"]), "the recorded scene")
        q0 = np.asarray(settings["initial_positions"], dtype=float)
        self.name = inputs["object_name"]
        self.world = FixedBaseWorld(model, settings["integrator"], settings["time_step"], q0, np.zeros(model.dof),
                                    scene=SceneWorld.from_scene(ArmFinger.in_scene(model, scene), scene, q0))
        joints = list(model.joint_names)
        values = {spec.name: spec.default for spec in
                  [*CONTROLLER_PARAMETERS, *joint_constraint_specs(joints), *gain_specs(joints)]}
        cmd_timeout, _ = effective_cmd_timeout(values["cmd_timeout"], values["constraints.goal_time"])
        deceleration, _ = effective_deceleration(
            values["constraints.decelerate_on_cancel"],
            np.array([values[f"constraints.{joint}.max_deceleration_on_cancel"] for joint in joints]),
            model.velocity_limits, joints)
        self.wraparound = continuous_joints(model, joints)
        self.core = JointTrajectoryController(controller_settings(
            joints, values, self.wraparound, cmd_timeout, deceleration, 1.0 / settings["publish_rate"]))
        gains = (np.full(model.dof, float(settings["kp"])), np.full(model.dof, float(settings["kd"])))
        self.tracking = TrajectoryTracking(self.world.system, np.arange(model.dof), model.effort_limits,
                                           self._reference, lambda: gains)
        self.torques = lambda t, q, v: saturate(self.tracking.update(t, q, v), model.effort_limits)
        self.grid = TickGrid(1.0 / settings["publish_rate"], 0.0)
        self.settle_s = float(inputs["settle_s"])
        self.samples: dict[int, tuple] = {}
        self.core.hold(0.0, q0)          # hold_on_start
        self._publish()

    def _reference(self, t: float):
        simulation = self.world.simulation
        return self.core.sample(t, simulation.q) if self.wraparound.any() else self.core.sample(t)

    def _publish(self) -> None:
        """What a tick does at the world's time: the controller's update, and the state published."""
        from discrete_robot.nodes.conversions import time_msg

        simulation = self.world.simulation
        self.core.update(simulation.time, simulation.q, simulation.qd)
        self.samples[stamp_ns(time_msg(simulation.time))] = (simulation.q.copy(), simulation.qd.copy(),
                                                              tuple(self.world.scene.poses[self.name]))

    def goal(self, trajectory) -> float:
        """Follow ``trajectory`` (a recorded arm goal, starting at the paused world's time) and take the steps
        that reach SETTLE_S past its last point, publishing on the grid; the time reached, s."""
        from discrete_robot.control.joint_trajectory_controller import goal_tolerances, validate_trajectory

        simulation = self.world.simulation
        now = simulation.time
        tolerances, _ = goal_tolerances(self.core.defaults, list(self.model.joint_names), [], [], 0.0)
        self.core.follow(validate_trajectory(self.core.settings, trajectory, now), now, simulation.q,
                         simulation.qd, goal=trajectory, tolerances=tolerances)
        self._publish()
        last = trajectory.points[-1].time_from_start
        span = last.sec + last.nanosec * 1e-9 + self.settle_s
        steps = steps_for(span, simulation.time_step)
        self.tracking.take_over(simulation.q)
        while steps > 0:
            chunk = min(steps, self.grid.steps_to_line(simulation.time, simulation.time_step))
            self.world.step(chunk, self.torques)
            steps -= chunk
            if self.grid.due(simulation.time):
                self._publish()
        self._publish()
        return simulation.time


def compare(replay: Replay, messages: dict[str, list], until_ns: int) -> tuple[int, dict | None]:
    """(samples compared, the first that differs or None): the recorded joint states and object poses stamped
    up to ``until_ns``, against the replay's state at their stamps."""
    from discrete_robot.geometry2d import yaw_quaternion
    from discrete_robot.nodes.conversions import quaternion_msg

    def orientation(theta: float) -> list[float]:     # as the simulator publishes it (normalised)
        rotation = quaternion_msg(yaw_quaternion(theta))
        return [rotation.w, rotation.z]

    compared = 0
    for topic, fields in (("/joint_states", lambda m: (list(m.position), list(m.velocity))),
                          (f"/objects/{replay.name}/pose", lambda m: (
                              [m.pose.position.x, m.pose.position.y],
                              [m.pose.orientation.w, m.pose.orientation.z]))):
        for message in messages.get(topic, []):
            stamp = stamp_ns(message.header.stamp)
            if stamp > until_ns:
                continue
            state = replay.samples.get(stamp)
            if state is None:
                return compared, {"topic": topic, "stamp_s": stamp * 1e-9, "reason": "the replay has no sample here"}
            q, v, pose = state
            expected = ((q.tolist(), v.tolist()) if topic == "/joint_states" else
                        ([float(pose[0]), float(pose[1])], orientation(pose[2])))
            got = fields(message)
            if got != expected:
                return compared, {"topic": topic, "stamp_s": stamp * 1e-9, "recorded": got, "replayed": expected}
            compared += 1
    return compared, None


def replay_file(path) -> dict:
    """Rerun the experiment recorded at ``path``: ``identical``, ``samples`` compared, ``first_difference``."""
    inputs, messages = recorded(Path(path))
    goals = messages.get(GOALS_TOPIC, [])
    if not goals:
        raise InputError(f"{path}: no {GOALS_TOPIC}: the experiment sent the arm nothing to replay")
    replay = Replay(inputs)
    end = 0.0
    for goal in goals:
        if abs(stamp_ns(goal.header.stamp) - round(end * 1e9)) > 1:
            raise InputError(f"{path}: a goal stamped {stamp_ns(goal.header.stamp) * 1e-9:.6f} s does not start "
                             f"where the world was paused ({end:.6f} s): not a lockstep experiment")
        end = replay.goal(goal)
    samples, difference = compare(replay, messages, round(end * 1e9))
    return {"identical": difference is None and samples > 0, "samples": samples, "first_difference": difference,
            "goals": len(goals), "until_s": end}
