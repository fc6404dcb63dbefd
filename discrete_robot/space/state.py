"""The state of the free-floating space robot: configuration and quasi-velocities.

Attitudes are never Euler angles here. The base attitude and every 3-DOF (spherical) joint are unit
quaternions [w, x, y, z]; their rates are angular velocities, the paper's quasi-velocities (ω0 of
the base in the base frame, ω_α(β) of a link relative to its parent in the link frame), which are
not derivatives of any coordinates. The quaternion follows the kinematic equation
Ṙ = R [ω]ₓ, which :mod:`discrete_robot.space.simulation` integrates with exact exponential updates
R ← R exp([Θ]ₓ) (a Lie-group Runge–Kutta method), so the attitude stays a rotation to round-off and
no representation singularity exists anywhere in the state. Only the 1- and 2-DOF joints keep angles.

Quasi-velocity vector (length 6 + dof): u = [V0, ω0, joint rates], V0 the base CoM velocity in the
base frame (m/s), ω0 the base angular velocity in the base frame (rad/s), joint rates in
:attr:`SpaceRobot.dof_names` order (q̇ for 1-/2-DOF joints, ω_α(β) for spherical joints, rad/s).
"""

from dataclasses import dataclass, replace

import numpy as np

from discrete_robot.errors import InputError
from discrete_robot.geometry3d import quaternion_to_matrix
from discrete_robot.space.robot import JointKind, SpaceRobot
from discrete_robot.validation import finite_vector


@dataclass(frozen=True, eq=False)
class SpaceRobotState:
    """Configuration and quasi-velocities (SI units, quaternions [w, x, y, z])."""

    base_position: np.ndarray
    base_orientation: np.ndarray
    base_velocity: np.ndarray
    base_angular_velocity: np.ndarray
    joint_angles: np.ndarray
    joint_orientations: np.ndarray
    joint_rates: np.ndarray

    @property
    def quasi_velocities(self) -> np.ndarray:
        """u = [V0, ω0, joint rates], shape (6 + dof,)."""
        return np.concatenate([self.base_velocity, self.base_angular_velocity, self.joint_rates])

    def base_rotation(self) -> np.ndarray:
        """Base → world rotation matrix."""
        return quaternion_to_matrix(self.base_orientation)


def rest_state(robot: SpaceRobot, base_position=(0.0, 0.0, 0.0), base_orientation=(1.0, 0.0, 0.0, 0.0),
               joint_positions: np.ndarray | None = None) -> SpaceRobotState:
    """The robot at rest with its joints at ``joint_positions`` (default: the model's ``initial`` values; a mimic
    follower's where its leader puts it, whatever is given for it).

    ``joint_positions`` are in :attr:`SpaceRobot.dof_names` order; for spherical joints they are the
    successive rotation angles about the joint's axes (the reported representation).
    """
    positions = robot.followed(np.concatenate([link.initial for link in robot.links]) if joint_positions is None
                               else finite_vector(joint_positions, robot.dof, "joint positions"))
    angles = np.zeros(robot.angle_count)
    quaternions = np.zeros((robot.spherical_count, 4))
    for link in robot.links:
        values = positions[link.rates]
        if link.kind is JointKind.SPHERICAL:
            quaternions[link.quaternion_index] = robot.spherical_from_angles(link, values)
        else:
            angles[link.angles] = values
    return SpaceRobotState(
        base_position=finite_vector(base_position, 3, "base position"),
        base_orientation=_unit_quaternion(base_orientation, "base orientation"),
        base_velocity=np.zeros(3), base_angular_velocity=np.zeros(3),
        joint_angles=angles, joint_orientations=quaternions, joint_rates=np.zeros(robot.dof))


def random_state(robot: SpaceRobot, rng: np.random.Generator, speed: float = 1.0) -> SpaceRobotState:
    """A random configuration and random quasi-velocities of magnitude ~ ``speed`` (tests, benchmarks)."""
    quaternions = rng.normal(size=(robot.spherical_count, 4))
    quaternions /= np.linalg.norm(quaternions, axis=1, keepdims=True)
    base_orientation = rng.normal(size=4)
    state = SpaceRobotState(
        base_position=rng.normal(size=3), base_orientation=base_orientation / np.linalg.norm(base_orientation),
        base_velocity=speed * rng.normal(size=3), base_angular_velocity=speed * rng.normal(size=3),
        joint_angles=rng.uniform(-np.pi, np.pi, robot.angle_count), joint_orientations=quaternions,
        joint_rates=robot.followed(speed * rng.normal(size=robot.dof), offsets=False))
    if not robot.mimic:
        return state
    angles = state.joint_angles.copy()     # a follower is a 1-DOF joint: its coordinate is an angle (or slide)
    for m in robot.mimic:
        leader, follower = robot.links[m.leader - 1], robot.links[m.follower - 1]
        angles[follower.angles.start] = m.multiplier * angles[leader.angles.start] + m.offset
    return replace(state, joint_angles=angles)


def validate_state(robot: SpaceRobot, state: SpaceRobotState) -> None:
    """InputError unless every field has its shape, is finite, and the quaternions are nonzero."""
    expected = {"base_position": (3,), "base_orientation": (4,), "base_velocity": (3,),
                "base_angular_velocity": (3,), "joint_angles": (robot.angle_count,),
                "joint_orientations": (robot.spherical_count, 4), "joint_rates": (robot.dof,)}
    for name, shape in expected.items():
        value = np.asarray(getattr(state, name), dtype=float)
        if value.shape != shape:
            raise InputError(f"state.{name}: expected shape {shape}, got {value.shape}")
        if not np.all(np.isfinite(value)):
            raise InputError(f"state.{name}: values must be finite, got {value.tolist()}")
    norms = np.linalg.norm(np.vstack([state.base_orientation, *state.joint_orientations]), axis=1)
    if np.any(norms < 1e-6):
        raise InputError("state: a quaternion has (almost) zero norm; attitudes must be unit quaternions")


def joint_positions(robot: SpaceRobot, state: SpaceRobotState) -> np.ndarray:
    """The reported joint coordinates in :attr:`SpaceRobot.dof_names` order (rad).

    1-/2-DOF joints: their angles. Spherical joints: the successive rotation angles about the
    joint's three axes (:meth:`SpaceRobot.spherical_to_angles`), which is how the URDF export splits
    the joint into revolute joints ``<joint>_0.._2``.
    """
    positions = np.zeros(robot.dof)
    for link in robot.links:
        if link.kind is JointKind.SPHERICAL:
            rotation = quaternion_to_matrix(state.joint_orientations[link.quaternion_index])
            positions[link.rates] = robot.spherical_to_angles(link, rotation)
        else:
            positions[link.rates] = state.joint_angles[link.angles]
    return positions


def base_frame_origin(robot: SpaceRobot, state: SpaceRobotState) -> np.ndarray:
    """The base frame's origin in the world (m), o = x₀ − R₀ r₀: the state holds the base CoM x₀, R₀ is the base
    rotation and r₀ = ``robot.base_com`` the CoM in the base frame (what a ROS pose or TF of the base reports)."""
    return state.base_position - state.base_rotation() @ robot.base_com


def state_from_base_frame(robot: SpaceRobot, origin, orientation, joint_positions, base_velocity,
                          base_angular_velocity, joint_rates) -> SpaceRobotState:
    """The state whose base frame has its origin at ``origin`` (m, world) and attitude ``orientation``
    ([w, x, y, z], normalised), the inverse of :func:`base_frame_origin`: base CoM x₀ = o + R₀ r₀. Joints at
    ``joint_positions`` (as :func:`rest_state`), rates ``joint_rates`` (rad/s); ``base_velocity`` (m/s) and
    ``base_angular_velocity`` (rad/s) are the base quasi-velocities V0, ω0 (base frame) as given."""
    state = rest_state(robot, origin, orientation, joint_positions)
    return replace(state, base_position=state.base_position + state.base_rotation() @ robot.base_com,
                   base_velocity=finite_vector(base_velocity, 3, "base velocity"),
                   base_angular_velocity=finite_vector(base_angular_velocity, 3, "base angular velocity"),
                   joint_rates=robot.followed(finite_vector(joint_rates, robot.dof, "joint rates"), offsets=False))


def _unit_quaternion(values, what: str) -> np.ndarray:
    quaternion = finite_vector(values, 4, what)
    norm = np.linalg.norm(quaternion)
    if norm < 1e-6:
        raise InputError(f"{what}: a quaternion [w, x, y, z] must be nonzero, got {quaternion.tolist()}")
    return quaternion / norm
