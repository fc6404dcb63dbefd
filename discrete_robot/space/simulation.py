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

from discrete_robot.errors import ConvergenceError, InputError
from discrete_robot.geometry3d import matrix_to_quaternion
from discrete_robot.jit import bind
from discrete_robot.space import kernels, rkmk4
from discrete_robot.space.loads import validate_joint_torques, validate_loads
from discrete_robot.space.recursive import MomentumReport, momentum_report
from discrete_robot.space.robot import SpaceRobot
from discrete_robot.space.state import SpaceRobotState, joint_positions, validate_state
from discrete_robot.validation import finite_scalar

#: a failing step is retried in halves down to this sub-step (s) before the simulator gives up
SMALLEST_SUBSTEP = 1e-6
#: at most this many sub-steps for one requested step (bounded work per call)
MAX_SUBSTEPS = 4096
_FAILURES = {kernels.NOT_FINITE: "non-finite values", kernels.NOT_POSITIVE_DEFINITE: "mass matrix not positive "
             "definite", kernels.TOO_FAST: f"a body turns more than {rkmk4.MAX_STEP_ROTATION} rad "
             f"(or slides more than {rkmk4.MAX_STEP_ROTATION} m) per sub-step"}


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


class Simulator:
    """Steps the robot forward in time under constant (per step) loads and joint torques.

    ``loads``: :class:`ExternalLoad` list; ``joint_torques``: (dof,) generalised joint torques.
    Both can be replaced between steps (the ROS node does so from topics). The integrated vector
    y = [c, P, L, Θ0, Θ_spherical..., joint angles, joint rates] and the step are compiled kernels
    (:func:`.rkmk4.rkmk4_step`) on this simulator's own :class:`.rkmk4.Data`.
    """

    def __init__(self, robot: SpaceRobot, state: SpaceRobotState, loads=(), joint_torques=None):
        self.robot = robot
        self._model = kernels.compile_model(robot)
        self._data = rkmk4.create_data(self._model)
        self._binding = bind(self._model, self._data)
        self._angles_start, self._rates_start, self._size = (int(i) for i in rkmk4.state_layout(self._model.counts))
        self.set_loads(loads, joint_torques)
        self.reset(state)

    def reset(self, state: SpaceRobotState) -> None:
        """Start again from ``state`` at time 0 (validated; InputError on bad values), with the same loads and
        joint torques and the compiled model and data kept."""
        validate_state(self.robot, state)
        self.time = 0.0
        self._substep = np.inf  # the last sub-step that succeeded; the next step starts from twice it
        self._base_quaternion = state.base_orientation / np.linalg.norm(state.base_orientation)
        quaternions = np.asarray(state.joint_orientations, dtype=float).reshape(-1, 4)
        norms = np.linalg.norm(quaternions, axis=1, keepdims=True)
        self._joint_quaternions = quaternions / np.where(norms > 0, norms, 1.0)
        report = momentum_report(self.robot, state)
        y = np.zeros(self._size)
        y[rkmk4.CENTER:rkmk4.CENTER + 3] = report.center_of_mass
        y[rkmk4.LINEAR:rkmk4.LINEAR + 3] = report.linear
        y[rkmk4.ANGULAR:rkmk4.ANGULAR + 3] = report.angular
        y[self._angles_start:self._rates_start] = state.joint_angles
        y[self._rates_start:] = state.joint_rates
        self._y = y

    def set_loads(self, loads=(), joint_torques=None) -> None:
        """Replace the external loads and joint torques (validated; InputError on bad values)."""
        self.loads = validate_loads(self.robot, loads)
        self.joint_torques = validate_joint_torques(self.robot, joint_torques)
        self._packed_loads = kernels.pack_loads(self.robot, self.loads)

    @property
    def state(self) -> SpaceRobotState:
        """The current state (position and quasi-velocities reconstructed from the momenta)."""
        self._evaluate()
        dynamics = self._data.dynamics
        return SpaceRobotState(
            base_position=dynamics.com_positions[0].copy(), base_orientation=self._base_quaternion.copy(),
            base_velocity=dynamics.v[0:3].copy(), base_angular_velocity=dynamics.v[3:6].copy(),
            joint_angles=self._y[self._angles_start:self._rates_start].copy(),
            joint_orientations=self._joint_quaternions.copy(), joint_rates=dynamics.v[6:].copy())

    def step(self, dt: float) -> None:
        """Advance by ``dt`` seconds with RKMK4.

        A step that fails (a body or joint would turn more than :data:`.rkmk4.MAX_STEP_ROTATION` in it,
        non-finite values, or a mass matrix that is not positive definite on the way) is retried in halves,
        down to :data:`SMALLEST_SUBSTEP`; the next step starts from twice the last sub-step that succeeded,
        so a fast phase costs about one refused try per step. If even that fails, ConvergenceError says
        why and the state is left as it was.
        """
        dt = finite_scalar(dt, "time step", low=SMALLEST_SUBSTEP)
        y, base, joints = self._y, self._base_quaternion, self._joint_quaternions
        remaining, substep, count = dt, min(dt, 2.0 * self._substep), 0
        while remaining > 1e-12 * dt:
            h = min(substep, remaining)
            status, stepped = self._try_step(y, base, joints, h)
            count += 1
            if status == kernels.OK:
                y, base, joints = stepped
                remaining -= h
                if h == substep:
                    self._substep = substep
                continue
            substep = 0.5 * h
            if substep < SMALLEST_SUBSTEP or count >= MAX_SUBSTEPS:
                raise ConvergenceError(
                    f"step of {dt} s at t = {self.time:.6g} s diverged ({_FAILURES[status]}); the loads or torques "
                    f"are too large for this time step even in sub-steps of {h:.3g} s; state kept")
        self._y, self._base_quaternion, self._joint_quaternions = y, base, joints
        self.time += dt

    def advance(self, dt: float, count: int) -> None:
        """``count`` steps of ``dt`` seconds, as :meth:`step` ``count`` times (the same result to the bit): whole
        steps in one compiled call (:func:`.rkmk4.rkmk4_steps`) while they work, :meth:`step` with its
        sub-steps for a step that does not. ConvergenceError as :meth:`step`, with the steps before kept."""
        dt = finite_scalar(dt, "time step", low=SMALLEST_SUBSTEP)
        left = count
        while left > 0:
            if self._substep >= dt:
                y_out, base_out, joints_out = (np.empty_like(a) for a in (self._y, self._base_quaternion,
                                                                          self._joint_quaternions))
                status, done = rkmk4._bound_rkmk4_steps(self._binding, self._y, self._base_quaternion,
                                                       self._joint_quaternions, self.joint_torques,
                                                       *self._packed_loads, dt, left, y_out, base_out, joints_out)
                self._y, self._base_quaternion, self._joint_quaternions = y_out, base_out, joints_out
                for _ in range(done):      # as step() adds it: the same time to the bit
                    self.time += dt
                left -= done
                if status == kernels.OK:
                    return
            self.step(dt)
            left -= 1

    def sample(self) -> Sample:
        """The current :class:`Sample`."""
        state = self.state
        dynamics = self._data.dynamics
        orientations = np.array([matrix_to_quaternion(rotation) for rotation in dynamics.oRi])   # w >= 0
        return Sample(self.time, dynamics.com_positions.copy(), orientations, joint_positions(self.robot, state),
                      momentum_report(self.robot, state), state)

    # ------------------------------------------------------------------ internals
    def _try_step(self, y, base, joints, dt):
        y_out = np.empty_like(y)
        base_out = np.empty(4)
        joints_out = np.empty_like(joints)
        status = rkmk4._bound_rkmk4_step(self._binding, y, base, joints, self.joint_torques, *self._packed_loads, dt,
                                        y_out, base_out, joints_out)
        return status, (y_out, base_out, joints_out)

    def _evaluate(self) -> None:
        """Fill the data at the current y (poses, base pose and quasi-velocities u)."""
        derivative = np.empty_like(self._y)
        status = rkmk4._bound_derivative(self._binding, self._y, self._base_quaternion, self._joint_quaternions,
                                        self.joint_torques, *self._packed_loads, derivative)
        kernels.check_status(status, self.robot, f"the state at t = {self.time:.6g} s")


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
