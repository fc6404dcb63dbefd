"""Time integration of the space robot: a Lie-group Runge–Kutta method in momentum coordinates.

Integrator: RKMK4 (Runge–Kutta–Munthe-Kaas, classical 4th-order tableau). Every attitude — the base
and each spherical joint — is advanced as R_{n+1} = R_n exp([Θ]ₓ) with Θ the RK4 solution of
Θ̇ = dexp⁻¹_Θ(ω) = J_r(Θ)⁻¹ ω, Θ(0) = 0 (J_r the right Jacobian of SO(3)); quaternions are multiplied by
the exact exponential [cos(|Θ|/2), sin(|Θ|/2) Θ/|Θ|] and renormalised only against round-off. No
Euler angle appears, so nothing is singular however far the bodies turn.

Momentum coordinates: instead of the base position and quasi-velocities V0, ω0, the integrated state
holds the system CoM c, the total linear momentum P and the angular momentum L about c (world frame),
whose equations are the paper's (19) and (20) moved to the world frame and to the CoM:

    ċ = P / m_total,    Ṗ = Σ F,    L̇ = Σ (x − c) × F + Σ M_ext.

V0 and ω0 are recovered at every stage from the first six rows of ∂K/∂u = M u (they are R0ᵀ P and R0ᵀ
(L + (c − x0) × P)), and the base CoM from x0 = c − Σ m_b (p_b − x0) / m_total. Without external loads Ṗ
and L̇ are exactly zero and ċ constant, and a Runge–Kutta method reproduces such (linear) invariants
exactly: total momentum and the CoM motion are preserved to round-off whatever the step, which the
generic Cartesian formulation achieves only to the method's truncation error. The joints follow the
recursive forward dynamics of :mod:`.recursive`; the kinetic energy is conserved to O(h⁴).
"""

from dataclasses import dataclass, replace

import numpy as np
from scipy.linalg import cho_factor, cho_solve
from transforms3d.quaternions import mat2quat, qmult

from discrete_robot.errors import ConvergenceError, InputError
from discrete_robot.geometry3d import cross3, quaternion_exp, right_jacobian_inverse
from discrete_robot.space.loads import resolve_loads, validate_joint_torques, validate_loads
from discrete_robot.space.recursive import (
    MomentumReport,
    applied_forces,
    bias_forces,
    configuration_terms,
    momentum_report,
    solve_by_arms,
)
from discrete_robot.space.robot import SpaceRobot
from discrete_robot.space.state import SpaceRobotState, joint_positions, validate_state


@dataclass(frozen=True, eq=False)
class Sample:
    """The robot at one time: per body (base first) CoM position (m, world) and attitude quaternion
    [w, x, y, z] (body → world); reported joint positions (rad, :attr:`SpaceRobot.dof_names` order);
    momenta (world; angular about the system CoM), system CoM and kinetic energy."""

    time: float
    body_positions: np.ndarray
    body_orientations: np.ndarray
    joint_positions: np.ndarray
    momentum: MomentumReport
    state: SpaceRobotState


class _Layout:
    """Slices of the integrated vector y = [c, P, L, Θ0, Θ_spherical..., joint angles, joint rates]."""

    def __init__(self, robot: SpaceRobot):
        sizes = [("c", 3), ("P", 3), ("L", 3), ("theta0", 3), ("theta", 3 * robot.spherical_count),
                 ("angles", robot.angle_count), ("rates", robot.dof)]
        start = 0
        for name, size in sizes:
            setattr(self, name, slice(start, start + size))
            start += size
        self.size = start


class Simulator:
    """Steps the robot forward in time under constant (per step) loads and joint torques.

    ``loads``: :class:`ExternalLoad` list; ``joint_torques``: (dof,) generalised joint torques.
    Both can be replaced between steps (the ROS node does so from topics).
    """

    def __init__(self, robot: SpaceRobot, state: SpaceRobotState, loads=(), joint_torques=None):
        validate_state(robot, state)
        self.robot = robot
        self.time = 0.0
        self._layout = _Layout(robot)
        self.loads = validate_loads(robot, loads)
        self.joint_torques = validate_joint_torques(robot, joint_torques)
        self._base_quaternion = state.base_orientation / np.linalg.norm(state.base_orientation)
        norms = np.linalg.norm(state.joint_orientations, axis=1, keepdims=True)
        self._joint_quaternions = state.joint_orientations / np.where(norms > 0, norms, 1.0)
        report = momentum_report(robot, state)
        y = np.zeros(self._layout.size)
        y[self._layout.c] = report.center_of_mass
        y[self._layout.P] = report.linear
        y[self._layout.L] = report.angular
        y[self._layout.angles] = state.joint_angles
        y[self._layout.rates] = state.joint_rates
        self._y = y

    def set_loads(self, loads=(), joint_torques=None) -> None:
        """Replace the external loads and joint torques (validated; InputError on bad values)."""
        self.loads = validate_loads(self.robot, loads)
        self.joint_torques = validate_joint_torques(self.robot, joint_torques)

    @property
    def state(self) -> SpaceRobotState:
        """The current state (position and quasi-velocities reconstructed from the momenta)."""
        state, _ = self._reconstruct(self._y)
        return state

    def step(self, dt: float) -> None:
        """One RKMK4 step of ``dt`` seconds; ConvergenceError (state unchanged) if the step blows up."""
        if not (np.isfinite(dt) and dt > 0.0):
            raise InputError(f"time step must be a positive finite number of seconds, got {dt}")
        y = self._y
        try:
            with np.errstate(over="ignore", invalid="ignore"):  # a blow-up is reported below, not warned about
                k1 = self._derivative(y)
                k2 = self._derivative(y + 0.5 * dt * k1)
                k3 = self._derivative(y + 0.5 * dt * k2)
                k4 = self._derivative(y + dt * k3)
                y = y + dt / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
        except (np.linalg.LinAlgError, ValueError) as error:
            raise ConvergenceError(f"step of {dt} s at t = {self.time:.6g} s diverged ({error}); the loads or "
                                   f"torques are too large for this time step") from None
        if not np.all(np.isfinite(y)):
            raise ConvergenceError(f"step of {dt} s at t = {self.time:.6g} s produced non-finite values; the "
                                   f"loads or torques are too large for this time step")
        self._base_quaternion, self._joint_quaternions = self._attitudes(y)
        y[self._layout.theta0] = 0.0
        y[self._layout.theta] = 0.0
        self._y = y
        self.time += dt

    def sample(self) -> Sample:
        """The current :class:`Sample`."""
        state = self.state
        config = configuration_terms(self.robot, state)
        orientations = np.array([mat2quat(rotation) for rotation in config.poses.rotations])
        orientations *= np.where(orientations[:, :1] < 0.0, -1.0, 1.0)
        return Sample(self.time, config.poses.com_positions.copy(), orientations,
                      joint_positions(self.robot, state), momentum_report(self.robot, state), state)

    # ------------------------------------------------------------------ internals
    def _attitudes(self, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Base and spherical-joint quaternions R_n exp(Θ) at the Lie-algebra increments held in y."""
        base = qmult(self._base_quaternion, quaternion_exp(y[self._layout.theta0]))
        thetas = y[self._layout.theta].reshape(-1, 3)
        joints = np.array([qmult(q, quaternion_exp(t)) for q, t in zip(self._joint_quaternions, thetas, strict=True)])
        joints = joints.reshape(-1, 4)
        return base / np.linalg.norm(base), joints / np.linalg.norm(joints, axis=1, keepdims=True)

    def _reconstruct(self, y: np.ndarray):
        """State and configuration terms at y: base CoM from c, V0 and ω0 from P and L (first six rows of M u)."""
        layout, robot = self._layout, self.robot
        base_quaternion, joint_quaternions = self._attitudes(y)
        rates = y[layout.rates]
        state = SpaceRobotState(
            base_position=np.zeros(3), base_orientation=base_quaternion, base_velocity=np.zeros(3),
            base_angular_velocity=np.zeros(3), joint_angles=y[layout.angles], joint_orientations=joint_quaternions,
            joint_rates=rates)
        config = configuration_terms(robot, state)
        offset = robot.masses @ config.poses.com_positions / robot.total_mass
        base_position = y[layout.c] - offset
        config = _shifted(config, base_position)
        base_to_world = config.poses.rotations[0]
        momentum = y[layout.P]
        base_momenta = np.concatenate([
            base_to_world.T @ momentum,
            base_to_world.T @ (y[layout.L] + cross3(y[layout.c] - base_position, momentum))])
        M = config.mass_matrix
        base_velocities = cho_solve(cho_factor(M[:6, :6]), base_momenta - M[:6, 6:] @ rates)
        state = replace(state, base_position=base_position, base_velocity=base_velocities[:3],
                        base_angular_velocity=base_velocities[3:])
        return state, config

    def _derivative(self, y: np.ndarray) -> np.ndarray:
        layout, robot = self._layout, self.robot
        state, config = self._reconstruct(y)
        forces = applied_forces(robot, config, self.loads, self.joint_torques)
        accelerations = solve_by_arms(robot, config.mass_matrix, forces - bias_forces(robot, state, config))
        world = resolve_loads(robot, config.poses, self.loads)
        center = y[layout.c]
        derivative = np.empty_like(y)
        derivative[layout.c] = y[layout.P] / robot.total_mass
        derivative[layout.P] = world.total_force()
        derivative[layout.L] = world.moment_about(center)
        derivative[layout.theta0] = right_jacobian_inverse(y[layout.theta0]) @ state.base_angular_velocity
        thetas = y[layout.theta].reshape(-1, 3)
        derivative[layout.theta] = np.concatenate(
            [right_jacobian_inverse(theta) @ state.joint_rates[link.rates]
             for link, theta in zip((lk for lk in robot.links if lk.quaternion_index >= 0), thetas, strict=True)]
            or [np.zeros(0)])
        derivative[layout.angles] = np.concatenate(
            [state.joint_rates[link.rates] for link in robot.links if link.quaternion_index < 0] or [np.zeros(0)])
        derivative[layout.rates] = accelerations[6:]
        return derivative


def _shifted(config, base_position: np.ndarray):
    """Configuration terms with every body translated by ``base_position`` (they were built with x0 = 0)."""
    poses = replace(config.poses, com_positions=config.poses.com_positions + base_position,
                    frame_origins=config.poses.frame_origins + base_position)
    return replace(config, poses=poses)


def time_grid(duration: float, dt: float, times) -> tuple[np.ndarray, np.ndarray]:
    """Integration nodes (steps of at most ``dt`` landing on every requested time) and the sorted times."""
    if not (np.isfinite(duration) and duration > 0.0):
        raise InputError(f"duration must be a positive finite number of seconds, got {duration}")
    if not (np.isfinite(dt) and 0.0 < dt <= duration):
        raise InputError(f"dt must be a positive finite number of seconds not above the duration, got {dt}")
    requested = np.asarray(times, dtype=float).ravel()
    if requested.size == 0:
        raise InputError("at least one output time is needed")
    if not np.all(np.isfinite(requested)) or requested.min() < 0.0 or requested.max() > duration + 1e-12:
        raise InputError(f"output times must be finite and within [0, {duration}] s, got {requested.tolist()}")
    requested = np.unique(requested)
    uniform = np.arange(int(np.floor(duration / dt + 1e-9)) + 1) * dt
    nodes = np.unique(np.concatenate([uniform, requested, [duration]]))
    nodes = nodes[np.concatenate([[True], np.diff(nodes) > 1e-12])]
    return nodes, requested


def simulate(robot: SpaceRobot, state: SpaceRobotState, duration: float, dt: float, times,
             loads=(), joint_torques=None) -> list[Sample]:
    """Integrate from ``state`` for ``duration`` s with steps of at most ``dt``; a :class:`Sample` at each
    requested time (seconds from the start)."""
    nodes, requested = time_grid(duration, dt, times)
    simulator = Simulator(robot, state, loads, joint_torques)
    samples = []
    pending = list(requested)
    for k, node in enumerate(nodes):
        if k > 0:
            simulator.step(node - simulator.time)
            simulator.time = node
        while pending and abs(pending[0] - node) <= 1e-12:
            samples.append(replace(simulator.sample(), time=float(pending.pop(0))))
    return samples
