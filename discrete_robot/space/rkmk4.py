"""One RKMK4 step of the space robot in momentum coordinates, as compiled kernels on :mod:`.kernels`.

The integrated vector (why these coordinates: :mod:`.simulation`) is

    y = [c (3), P (3), L (3), Θ0 (3), Θ_spherical (3 per spherical joint), joint angles, joint rates]:

the system CoM, total linear momentum and angular momentum about c (world frame), the Lie-algebra increments
of the base and spherical-joint attitudes since the step's start, the 1-/2-DOF angles and the joint rates. Its
offsets are named once here (:data:`CENTER` ... :data:`JOINT_TURNS`, :func:`joint_turn`, :func:`state_layout`).

Model/Data: the dynamics' :class:`.kernels.Model`, and this module's :class:`Data` (the dynamics'
:class:`.kernels.Data` plus the integrator's arrays; one per simulator)::

    model = kernels.compile_model(robot)
    data = create_data(model)
    status = rkmk4_step(model, data, y, base_q, joint_q, tau, *kernels.pack_loads(robot, ()), dt, y_out, base_out,
                        joints_out)
"""

import math
from typing import NamedTuple

import numpy as np
from numba.extending import register_jitable

from discrete_robot.geometry3d import (
    copy_into,
    cross_add,
    cross_into,
    mat_t_vec,
    matrix_copy_into,
    quaternion_exp_into,
    quaternion_multiply_into,
    right_jacobian_inverse_into,
)
from discrete_robot.jit import njit
from discrete_robot.linalg import cholesky_solve
from discrete_robot.space import kernels
from discrete_robot.space.kernels import (
    ANGLE,
    NDOF,
    NOT_FINITE,
    NOT_POSITIVE_DEFINITE,
    OK,
    QUAT,
    RATE,
    TOO_FAST,
    applied_forces,
    bias_forces,
    configuration,
    load_in_world,
    mass_matrix,
    partial_derivatives,
    solve_accelerations,
    velocities,
)

#: first index in y of c, P, L, Θ0 and the spherical joints' increments Θ_k (3 each)
CENTER, LINEAR, ANGULAR, BASE_TURN, JOINT_TURNS = 0, 3, 6, 9, 12
#: the largest rotation (rad) of the base or of a joint (a prismatic joint: its slide, m) within one RKMK4 step:
#: beyond it the step is refused
#: (TOO_FAST) and the simulator sub-steps. RK4 stays stable only while ω h is O(1); a link spun up to
#: 130 rad/s about its long axis and stepped at 0.05 s turns 6.5 rad per step, and RK4 then diverges
#: without ever producing a non-finite number (rates of 1e51 rad/s, still "finite").
MAX_STEP_ROTATION = 0.25


@register_jitable
def joint_turn(k):
    """First index in y of the increment Θ_k of spherical joint ``k``."""
    return JOINT_TURNS + 3 * k


@register_jitable
def state_layout(counts):
    """(first index of the joint angles, first index of the joint rates, length) of y for a model's ``counts``."""
    angles = joint_turn(counts[2])
    rates = angles + counts[1]
    return angles, rates, rates + counts[0]


class Data(NamedTuple):
    """The dynamics' data and every array the integrator writes (one per simulator)."""

    dynamics: kernels.Data
    base_attitude: np.ndarray       # (4,) the base quaternion at a stage
    joint_attitudes: np.ndarray     # (spherical, 4) the spherical joints' quaternions at a stage
    world_origin: np.ndarray        # (3,) zeros: the base CoM while the poses are built
    mass_moment: np.ndarray         # (3,) Σ m_b (p_b − x0), kg m
    base_position: np.ndarray       # (3,) x0, the base CoM at a stage (world), m
    lever: np.ndarray               # (3,) c − x0, then a load's point less c, m
    momentum_about_base: np.ndarray  # (3,) L + (c − x0) × P: the angular momentum about x0, N m s
    attitude_turn: np.ndarray       # (4,) exp(Θ) of an attitude's increment
    base_momenta: np.ndarray        # (6, 1) the base rows of M u less the joints' part, then [V0; ω0]
    base_block: np.ndarray          # (6, 6) M's base block, then its Cholesky factor
    load_force: np.ndarray          # (3,) Σ F, N
    load_moment: np.ndarray         # (3,) Σ (x − c) × F + M, N m
    stages: np.ndarray              # (4, n) ẏ at the four stages
    stage: np.ndarray               # (n,) y at a stage
    y_now: np.ndarray               # (n,) rkmk4_steps' state between steps ...
    base_now: np.ndarray            # (4,)
    joints_now: np.ndarray          # (spherical, 4)


def create_data(model: kernels.Model) -> Data:
    """The :class:`Data` of ``model``, every array allocated once."""
    n = int(state_layout(model.counts)[2])
    spherical = int(model.counts[2])
    return Data(dynamics=kernels.create_data(model), base_attitude=np.zeros(4),
                joint_attitudes=np.zeros((spherical, 4)), world_origin=np.zeros(3), mass_moment=np.zeros(3),
                base_position=np.zeros(3), lever=np.zeros(3), momentum_about_base=np.zeros(3),
                attitude_turn=np.zeros(4),
                base_momenta=np.zeros((6, 1)), base_block=np.zeros((6, 6)), load_force=np.zeros(3),
                load_moment=np.zeros(3), stages=np.zeros((4, n)), stage=np.zeros(n), y_now=np.zeros(n),
                base_now=np.zeros(4), joints_now=np.zeros((spherical, 4)))


@njit(allocates=False)
def _attitude(q, theta, turn, out):
    """R_n exp(Θ) of the attitude ``q`` (a unit quaternion) and the increment ``theta``, normalised, into ``out``;
    ``turn`` (4,): workspace."""
    quaternion_exp_into(theta, turn)
    quaternion_multiply_into(q, turn, out)
    norm = math.sqrt(out[0] * out[0] + out[1] * out[1] + out[2] * out[2] + out[3] * out[3])
    for i in range(4):
        out[i] /= norm


@njit(allocates=False)
def _attitudes(model, data, y, base_q, joint_q, base_out, joints_out):
    """R_n exp(Θ) of the base and the spherical joints, as unit quaternions."""
    turn = data.attitude_turn
    _attitude(base_q, y[BASE_TURN:BASE_TURN + 3], turn, base_out)
    for k in range(model.counts[2]):
        t = joint_turn(k)
        _attitude(joint_q[k], y[t:t + 3], turn, joints_out[k])


@njit(allocates=False)
def derivative(model, data, y, base_q, joint_q, torques, load_bodies, load_vectors, load_in_body, out):
    """ẏ at y: reconstructs the base pose from c and the base velocities from P, L (first six rows of M u),
    then the joint accelerations by the recursive forward dynamics. Returns a status code."""
    dynamics, mass = data.dynamics, model.mass
    dof = model.counts[0]
    a0, r0, _ = state_layout(model.counts)
    base_now, joints_now = data.base_attitude, data.joint_attitudes
    _attitudes(model, data, y, base_q, joint_q, base_now, joints_now)
    angles = y[a0:r0]
    rates = y[r0:r0 + dof]
    configuration(model, dynamics, base_now, joints_now, angles, data.world_origin)
    positions, rotations, origins = dynamics.com_positions, dynamics.oRi, dynamics.oPi
    total = mass.sum()
    offset = data.mass_moment
    offset[:] = 0.0
    for b in range(mass.shape[0]):
        for i in range(3):
            offset[i] += mass[b] * positions[b, i]
    center = y[CENTER:CENTER + 3]
    linear = y[LINEAR:LINEAR + 3]
    base_position, lever, about_base = data.base_position, data.lever, data.momentum_about_base
    for i in range(3):
        base_position[i] = center[i] - offset[i] / total
        lever[i] = center[i] - base_position[i]
    for b in range(mass.shape[0]):
        for i in range(3):
            positions[b, i] += base_position[i]
            origins[b, i] += base_position[i]
    partial_derivatives(model, dynamics)
    mass_matrix(model, dynamics)
    M = dynamics.M
    R0 = rotations[0]
    momenta = data.base_momenta
    # R0ᵀ P and R0ᵀ (L + (c − x0) × P): the base rows of M u
    mat_t_vec(R0, linear, momenta[0:3, 0])
    cross_into(lever, linear, about_base)
    for i in range(3):
        about_base[i] += y[ANGULAR + i]
    mat_t_vec(R0, about_base, momenta[3:6, 0])
    for i in range(6):
        for j in range(dof):
            momenta[i, 0] -= M[i, 6 + j] * rates[j]
    base_block = data.base_block
    matrix_copy_into(M[:6, :6], base_block)
    if not cholesky_solve(base_block, momenta):
        return NOT_POSITIVE_DEFINITE
    u = dynamics.v
    copy_into(momenta[:, 0], u[0:6])
    copy_into(rates, u[6:])
    velocities(model, dynamics, u)
    bias_forces(model, dynamics)
    applied_forces(model, dynamics, torques, load_bodies, load_vectors, load_in_body)
    if not solve_accelerations(model, dynamics):
        return NOT_POSITIVE_DEFINITE
    force, moment = data.load_force, data.load_moment
    force[:] = 0.0
    moment[:] = 0.0
    f, m, point = dynamics.load_world[0], dynamics.load_world[1], dynamics.load_world[2]
    for k in range(load_bodies.shape[0]):
        load_in_world(dynamics, load_bodies, load_vectors, load_in_body, k)
        for i in range(3):
            force[i] += f[i]
            moment[i] += m[i]
            lever[i] = point[i] - center[i]
        cross_add(lever, f, moment)
    for i in range(3):
        out[CENTER + i] = linear[i] / total
        out[LINEAR + i] = force[i]
        out[ANGULAR + i] = moment[i]
    right_jacobian_inverse_into(y[BASE_TURN:BASE_TURN + 3], u[3:6], out[BASE_TURN:BASE_TURN + 3])
    ints = model.tree
    for b in range(1, ints.shape[0]):
        r = 6 + ints[b, RATE]
        if ints[b, NDOF] == 3:
            t = joint_turn(ints[b, QUAT])
            right_jacobian_inverse_into(y[t:t + 3], u[r:r + 3], out[t:t + 3])
        else:
            a = a0 + ints[b, ANGLE]
            copy_into(u[r:r + ints[b, NDOF]], out[a:a + ints[b, NDOF]])
    copy_into(dynamics.ddq[6:], out[r0:r0 + dof])
    return OK


@njit(allocates=False)
def rkmk4_step(model, data, y, base_q, joint_q, torques, load_bodies, load_vectors, load_in_body, dt, y_out,
               base_out, joints_out):
    """One RKMK4 step of ``dt`` s from (y with zero increments, base_q, joint_q): the classical RK4 tableau on
    ẏ, attitudes advanced by the exact exponential of the RK4 increments. Returns a status code (TOO_FAST when
    an attitude or joint angle would turn more than :data:`MAX_STEP_ROTATION`, in rad, or a prismatic joint slide
    more than it in m); the outputs are valid only
    when it is OK."""
    n = y.shape[0]
    k, stage = data.stages, data.stage
    copy_into(y, stage)
    weights = (0.0, 0.5, 0.5, 1.0)
    for i in range(4):
        if i > 0:
            for j in range(n):
                stage[j] = y[j] + weights[i] * dt * k[i - 1, j]
        status = derivative(model, data, stage, base_q, joint_q, torques, load_bodies, load_vectors, load_in_body,
                            k[i])
        if status != OK:
            return status
    for j in range(n):
        y_out[j] = y[j] + dt / 6.0 * (k[0, j] + 2.0 * k[1, j] + 2.0 * k[2, j] + k[3, j])
    for i in range(n):
        if not math.isfinite(y_out[i]):
            return NOT_FINITE
    turns_end, _, _ = state_layout(model.counts)
    for i in range(BASE_TURN, turns_end + model.counts[1]):
        if abs(y_out[i] - y[i]) > MAX_STEP_ROTATION:
            return TOO_FAST
    _attitudes(model, data, y_out, base_q, joint_q, base_out, joints_out)
    y_out[BASE_TURN:turns_end] = 0.0
    return OK


@njit(allocates=False)
def rkmk4_steps(model, data, y, base_q, joint_q, torques, load_bodies, load_vectors, load_in_body, dt, count, y_out,
                base_out, joints_out):
    """``count`` steps of :func:`rkmk4_step` in one call (a simulator's tick: one dispatch of the model's arrays
    instead of one per step). Returns (status, steps done); the outputs hold the state after the steps done, so
    a failing step leaves the last state that worked."""
    y_now, base_now, joints_now = data.y_now, data.base_now, data.joints_now
    _copy_state(y, base_q, joint_q, y_now, base_now, joints_now)
    for done in range(count):
        status = rkmk4_step(model, data, y_now, base_now, joints_now, torques, load_bodies, load_vectors,
                            load_in_body, dt, y_out, base_out, joints_out)
        if status != OK:
            _copy_state(y_now, base_now, joints_now, y_out, base_out, joints_out)
            return status, done
        _copy_state(y_out, base_out, joints_out, y_now, base_now, joints_now)
    return OK, count


@njit(allocates=False)
def _copy_state(y, base_q, joint_q, y_to, base_to, joints_to):
    """(y, base_q, joint_q) into (y_to, base_to, joints_to)."""
    copy_into(y, y_to)
    copy_into(base_q, base_to)
    matrix_copy_into(joint_q, joints_to)


@njit
def _bound_derivative(binding, y, base_q, joint_q, torques, load_bodies, load_vectors, load_in_body, out):
    """:func:`derivative` of a :class:`~discrete_robot.jit.Binding` of a model and this module's :class:`Data`."""
    return derivative(binding.model, binding.data, y, base_q, joint_q, torques, load_bodies, load_vectors,
                      load_in_body, out)


@njit
def _bound_rkmk4_step(binding, y, base_q, joint_q, torques, load_bodies, load_vectors, load_in_body, dt, y_out,
                     base_out, joints_out):
    """:func:`rkmk4_step` of a :class:`~discrete_robot.jit.Binding`."""
    return rkmk4_step(binding.model, binding.data, y, base_q, joint_q, torques, load_bodies, load_vectors,
                      load_in_body, dt, y_out, base_out, joints_out)


@njit
def _bound_rkmk4_steps(binding, y, base_q, joint_q, torques, load_bodies, load_vectors, load_in_body, dt, count,
                      y_out, base_out, joints_out):
    """:func:`rkmk4_steps` of a :class:`~discrete_robot.jit.Binding`."""
    return rkmk4_steps(binding.model, binding.data, y, base_q, joint_q, torques, load_bodies, load_vectors,
                       load_in_body, dt, count, y_out, base_out, joints_out)
