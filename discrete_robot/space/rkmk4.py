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

from discrete_robot.geometry3d import quaternion_exp, quaternion_multiply, right_jacobian_inverse
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
    solve_by_arms,
    velocities,
)

#: first index in y of c, P, L, Θ0 and the spherical joints' increments Θ_k (3 each)
CENTER, LINEAR, ANGULAR, BASE_TURN, JOINT_TURNS = 0, 3, 6, 9, 12
#: the largest rotation (rad) of the base or of a joint within one RKMK4 step: beyond it the step is refused
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
                base_momenta=np.zeros((6, 1)), base_block=np.zeros((6, 6)), load_force=np.zeros(3),
                load_moment=np.zeros(3), stages=np.zeros((4, n)), stage=np.zeros(n), y_now=np.zeros(n),
                base_now=np.zeros(4), joints_now=np.zeros((spherical, 4)))


@njit
def _attitudes(model, y, base_q, joint_q, base_out, joints_out):
    """R_n exp(Θ) of the base and the spherical joints, as unit quaternions."""
    base = quaternion_multiply(base_q, quaternion_exp(y[BASE_TURN:BASE_TURN + 3]))
    base_out[:] = base / math.sqrt(base @ base)
    for k in range(model.counts[2]):
        t = joint_turn(k)
        joint = quaternion_multiply(joint_q[k], quaternion_exp(y[t:t + 3]))
        joints_out[k] = joint / math.sqrt(joint @ joint)


@njit
def derivative(model, data, y, base_q, joint_q, torques, load_bodies, load_vectors, load_in_body, out):
    """ẏ at y: reconstructs the base pose from c and the base velocities from P, L (first six rows of M u),
    then the joint accelerations by the recursive forward dynamics. Returns a status code."""
    dynamics, mass = data.dynamics, model.mass
    dof = model.counts[0]
    a0, r0, _ = state_layout(model.counts)
    base_now, joints_now = data.base_attitude, data.joint_attitudes
    _attitudes(model, y, base_q, joint_q, base_now, joints_now)
    angles = y[a0:r0]
    rates = y[r0:r0 + dof]
    configuration(model, dynamics, base_now, joints_now, angles, data.world_origin)
    positions, rotations, origins = dynamics.com_positions, dynamics.oRi, dynamics.oPi
    total = mass.sum()
    offset = data.mass_moment
    offset[:] = 0.0
    for b in range(mass.shape[0]):
        offset += mass[b] * positions[b]
    center = y[CENTER:CENTER + 3]
    linear = y[LINEAR:LINEAR + 3]
    base_position = center - offset / total
    for b in range(mass.shape[0]):
        positions[b] += base_position
        origins[b] += base_position
    partial_derivatives(model, dynamics)
    mass_matrix(model, dynamics)
    M = dynamics.M
    R0 = rotations[0]
    momenta = data.base_momenta
    momenta[0:3, 0] = R0.T @ linear
    momenta[3:6, 0] = R0.T @ (y[ANGULAR:ANGULAR + 3] + np.cross(center - base_position, linear))
    for i in range(6):
        for j in range(dof):
            momenta[i, 0] -= M[i, 6 + j] * rates[j]
    base_block = data.base_block
    base_block[:, :] = M[:6, :6]
    if not cholesky_solve(base_block, momenta):
        return NOT_POSITIVE_DEFINITE
    u = dynamics.v
    u[0:6] = momenta[:, 0]
    u[6:] = rates
    velocities(model, dynamics, u)
    bias_forces(model, dynamics)
    applied_forces(model, dynamics, torques, load_bodies, load_vectors, load_in_body)
    if not solve_by_arms(model, dynamics):
        return NOT_POSITIVE_DEFINITE
    force, moment = data.load_force, data.load_moment
    force[:] = 0.0
    moment[:] = 0.0
    for k in range(load_bodies.shape[0]):
        _, f, m, point = load_in_world(dynamics, load_bodies, load_vectors, load_in_body, k)
        force += f
        moment += np.cross(point - center, f) + m
    out[CENTER:CENTER + 3] = linear / total
    out[LINEAR:LINEAR + 3] = force
    out[ANGULAR:ANGULAR + 3] = moment
    out[BASE_TURN:BASE_TURN + 3] = right_jacobian_inverse(y[BASE_TURN:BASE_TURN + 3]) @ u[3:6]
    ints = model.tree
    for b in range(1, ints.shape[0]):
        r = 6 + ints[b, RATE]
        if ints[b, NDOF] == 3:
            t = joint_turn(ints[b, QUAT])
            out[t:t + 3] = right_jacobian_inverse(y[t:t + 3]) @ u[r:r + 3]
        else:
            a = a0 + ints[b, ANGLE]
            out[a:a + ints[b, NDOF]] = u[r:r + ints[b, NDOF]]
    out[r0:r0 + dof] = dynamics.ddq[6:]
    return OK


@njit
def rkmk4_step(model, data, y, base_q, joint_q, torques, load_bodies, load_vectors, load_in_body, dt, y_out,
               base_out, joints_out):
    """One RKMK4 step of ``dt`` s from (y with zero increments, base_q, joint_q): the classical RK4 tableau on
    ẏ, attitudes advanced by the exact exponential of the RK4 increments. Returns a status code (TOO_FAST when
    an attitude or joint angle would turn more than :data:`MAX_STEP_ROTATION`); the outputs are valid only
    when it is OK."""
    n = y.shape[0]
    k, stage = data.stages, data.stage
    stage[:] = y
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
    _attitudes(model, y_out, base_q, joint_q, base_out, joints_out)
    y_out[BASE_TURN:turns_end] = 0.0
    return OK


@njit
def rkmk4_steps(model, data, y, base_q, joint_q, torques, load_bodies, load_vectors, load_in_body, dt, count, y_out,
                base_out, joints_out):
    """``count`` steps of :func:`rkmk4_step` in one call (a simulator's tick: one dispatch of the model's arrays
    instead of one per step). Returns (status, steps done); the outputs hold the state after the steps done, so
    a failing step leaves the last state that worked."""
    y_now, base_now, joints_now = data.y_now, data.base_now, data.joints_now
    y_now[:], base_now[:], joints_now[:] = y, base_q, joint_q
    for done in range(count):
        status = rkmk4_step(model, data, y_now, base_now, joints_now, torques, load_bodies, load_vectors,
                            load_in_body, dt, y_out, base_out, joints_out)
        if status != OK:
            y_out[:], base_out[:], joints_out[:] = y_now, base_now, joints_now
            return status, done
        y_now[:], base_now[:], joints_now[:] = y_out, base_out, joints_out
    return OK, count


@njit
def bound_derivative(binding, y, base_q, joint_q, torques, load_bodies, load_vectors, load_in_body, out):
    """:func:`derivative` of a :class:`~discrete_robot.jit.Binding` of a model and this module's :class:`Data`."""
    return derivative(binding.model, binding.data, y, base_q, joint_q, torques, load_bodies, load_vectors,
                      load_in_body, out)


@njit
def bound_rkmk4_step(binding, y, base_q, joint_q, torques, load_bodies, load_vectors, load_in_body, dt, y_out,
                     base_out, joints_out):
    """:func:`rkmk4_step` of a :class:`~discrete_robot.jit.Binding`."""
    return rkmk4_step(binding.model, binding.data, y, base_q, joint_q, torques, load_bodies, load_vectors,
                      load_in_body, dt, y_out, base_out, joints_out)


@njit
def bound_rkmk4_steps(binding, y, base_q, joint_q, torques, load_bodies, load_vectors, load_in_body, dt, count,
                      y_out, base_out, joints_out):
    """:func:`rkmk4_steps` of a :class:`~discrete_robot.jit.Binding`."""
    return rkmk4_steps(binding.model, binding.data, y, base_q, joint_q, torques, load_bodies, load_vectors,
                       load_in_body, dt, count, y_out, base_out, joints_out)
