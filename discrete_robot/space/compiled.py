"""The space robot's recursive Boltzmann–Hamel equations as compiled kernels (Model/Data layout).

Khoshnood, Someeh & Nami, "A recursive algorithm for the equations of motion of a multi-arm space
manipulator by Lagrange's equations in quasi-coordinates": the equations of motion (19)–(21) with K
the kinetic energy (18) in body-frame velocities,

- (19) (d/dt + [ω0]) ∂K/∂V0 = F0                       total force, base frame
- (20) (d/dt + [ω0]) ∂K/∂ω0 + [V0] ∂K/∂V0 = M0           total moment about the base CoM, base frame
- (21) (d/dt + [ω_i]) ∂K/∂ω_i + E_i = M_i                moment about joint i of the loads on the
                                                        links outboard of it, link frame, plus the joint torque

with a parent index instead of α − 1, so any tree of links hanging from the base is covered. For body
b with parent p, A_b is the parent → child rotation ([C_{α−1}^α]ᵀ in the paper), [a] the hat map:

- (24) Ω_b = A_bᵀ Ω_p + ω_b;  (25) P_b = P_p + r_p + R_b;  (27) V_b = A_bᵀ (V_p − [r_p] Ω_p) − [R_b] Ω_b
- partial derivatives X_b = ∂Ω_b/∂w, Y_b = ∂V_b/∂w ((30), (32), (34)–(37), (42)–(45)): inherited
  X_b = X_p A_b, Y_b = (Y_p + X_p [r_p]) A_b + X_b [R_b]; own X = I, Y = [R_b];
- E_i = Σ_{α ≥ i} A(α, i) m_α V_α + B(α, i) I_α Ω_α (47) with B, A by (48)–(53) and the seeds
  B(i, i) = [A_iᵀ Ω_p] (50), A(i, i) = [A_iᵀ (V_p − [r_p] Ω_p)] + B(i, i) [R_i] (52). The text of (52)
  lost the factor C_{i−1}^i = A_iᵀ inside the first bracket; it follows from (27) exactly as (50) follows
  from (24), and the Newton–Euler cross-check fails without it. Likewise (51) reads C_{i−1}^α where the
  recursion needs C_{α−1}^α. Neither needs D_i: the Euler-angle matrix cancels, which is what lets the
  joints be quaternions. Time derivatives use Ċ = −[ω]C (13), i.e. Ȧ_b = A_b [ω_b].

w = [V0, ω0, ω_1..ω_N] are the quasi-velocities of the unconstrained system (all joints 3-DOF); a joint
with fewer DOF has ω_b = S_b(q) u_b, and the constrained equations are the projection Gᵀ (19)–(21) with
w = G u, G = blockdiag(I₆, S_1..S_N). Every ∂K/∂w is linear in the velocities, so the result is
M(q) u̇ + h(q, u) = Q with M = Gᵀ (Σ_b Y_b m_b Y_bᵀ + X_b I_b X_bᵀ) G; forward dynamics solves it by block
elimination per arm (arms couple only through the base, eq. (39)).

Evaluated by numba kernels over flat arrays: per-call numpy overhead (hundreds of small operations of
~1 µs each) otherwise costs ~30x the arithmetic.

Model (:class:`CompiledModel`, built once from a :class:`SpaceRobot`): per body b (0 = base,
1..N links, parents first) its parent, joint DOF count, first rate index, first angle index,
quaternion index and depth; the links on its path from the base; joint axes, fixed rotations,
offsets r_p, CoMs R_b, masses and inertias; per arm the indices of its rates in u.

Data (:class:`Workspace`): every intermediate array, allocated once per model and reused; not
shared between threads (each simulator owns one).

Partial derivatives are stored per *slot*: the 3-row blocks of w that body b depends on, slot 0 =
V0, slot 1 = ω0, slot 2 + k = the k-th link on b's path (its own link last). ``X[b, s]`` and
``Y[b, s]`` are the slot-s blocks of ∂Ω_b/∂w and ∂V_b/∂w (the paper's layout, (rows of w) x 3).
The mass matrix in u = [V0, ω0, joint rates] is accumulated directly, each slot block projected
on its joint's motion subspace S, so M_w is never formed. The sums over bodies in M and h are grouped
by subtree (for M, Walker & Orin's composite rigid bodies, "Efficient dynamic computer simulation of robotic
mechanisms"): M costs O(bodies x depth) 3x3 products, h O(bodies).

Loads are flat arrays too (:func:`pack_loads`): per load its body, force, moment, application
point (NaN = the body's CoM) and frame (1 = body, 0 = world).
"""

import math
import weakref
from dataclasses import dataclass

import numpy as np

from discrete_robot.errors import ConvergenceError, ModelError
from discrete_robot.geometry3d import (
    cross_add,
    hat_into,
    mat_mul,
    mat_mul_add,
    mat_t_vec,
    mat_vec,
    mat_vec_add,
    quaternion_exp,
    quaternion_multiply,
    quaternion_to_matrix,
    right_jacobian_inverse,
    rotation_into,
)
from discrete_robot.jit import njit
from discrete_robot.space.loads import LoadFrame
from discrete_robot.space.robot import SpaceRobot

# columns of CompiledModel.ints
PARENT, NDOF, RATE, ANGLE, QUAT, DEPTH = range(6)
#: kernel status codes
OK, NOT_POSITIVE_DEFINITE, NOT_FINITE, TOO_FAST = 0, 1, 2, 3
#: the largest rotation (rad) of the base or of a joint within one RKMK4 step: beyond it the step is refused
#: (TOO_FAST) and the simulator sub-steps. RK4 stays stable only while ω h is O(1); a link spun up to
#: 130 rad/s about its long axis and stepped at 0.05 s turns 6.5 rad per step, and RK4 then diverges
#: without ever producing a non-finite number (rates of 1e51 rad/s, still "finite").
MAX_STEP_ROTATION = 0.25


@dataclass(frozen=True, eq=False)
class CompiledModel:
    """A :class:`SpaceRobot` as flat arrays (SI units; see the module docstring)."""

    robot: SpaceRobot
    ints: np.ndarray          # (nb, 6) int64: parent, ndof, rate start, angle start, quaternion index, depth
    path: np.ndarray          # (nb, max depth) int64: links from the base to b (b last), -1 padded
    axes: np.ndarray          # (nb, 3, 3): joint axes as rows
    fixed: np.ndarray         # (nb, 3, 3): parent -> joint frame rotation at zero angles
    offset: np.ndarray        # (nb, 3): r_p, parent CoM -> joint, parent frame
    com: np.ndarray           # (nb, 3): R_b, joint -> CoM, body frame (base: its CoM in the base frame)
    mass: np.ndarray          # (nb,)
    inertia: np.ndarray       # (nb, 3, 3) about the CoM, body frame
    arm_rates: np.ndarray     # (arms, max arm dof) int64 indices into u, -1 padded
    counts: np.ndarray        # int64 [dof, angle count, spherical count, slots]

    @property
    def arrays(self) -> tuple:
        """The model as the kernels take it."""
        return (self.ints, self.path, self.axes, self.fixed, self.offset, self.com, self.mass, self.inertia,
                self.arm_rates, self.counts)


def compile_model(robot: SpaceRobot) -> CompiledModel:
    """Flatten ``robot`` into a :class:`CompiledModel` (once per robot)."""
    nb = robot.body_count
    depth = np.array([len(path) for path in robot.ancestors])
    max_depth = max(1, int(depth.max()))
    ints = np.zeros((nb, 6), dtype=np.int64)
    ints[0] = (-1, 0, -1, -1, -1, 0)
    path = -np.ones((nb, max_depth), dtype=np.int64)
    axes = np.zeros((nb, 3, 3))
    fixed = np.zeros((nb, 3, 3))
    fixed[0] = np.eye(3)
    offset = np.zeros((nb, 3))
    com = np.zeros((nb, 3))
    com[0] = robot.base_com
    for b, link in enumerate(robot.links, start=1):
        ints[b] = (link.parent, link.ndof, link.rates.start, link.angles.start, link.quaternion_index, depth[b])
        path[b, :depth[b]] = robot.ancestors[b]
        axes[b, :link.ndof] = link.axes
        fixed[b] = link.fixed_rotation
        offset[b] = link.offset
        com[b] = link.com
    arm_dofs = [[r for body in arm for r in range(6 + robot.links[body - 1].rates.start,
                                                   6 + robot.links[body - 1].rates.stop)] for arm in robot.arms]
    arm_rates = -np.ones((len(arm_dofs), max(len(a) for a in arm_dofs)), dtype=np.int64)
    for k, rates in enumerate(arm_dofs):
        arm_rates[k, :len(rates)] = rates
    counts = np.array([robot.dof, robot.angle_count, robot.spherical_count, 2 + max_depth], dtype=np.int64)
    return CompiledModel(robot, ints, path, axes, fixed, offset, com, robot.masses.astype(float),
                         robot.inertias.astype(float), arm_rates, counts)


class Workspace:
    """Data: every array the kernels write, allocated once for one model and reused by every call."""

    def __init__(self, model: CompiledModel):
        nb = model.ints.shape[0]
        nu = 6 + int(model.counts[0])
        slots = int(model.counts[3])
        self.arrays = (
            np.zeros((nb, 3, 3)),          # 0 relative A_b
            np.zeros((nb, 3, 3)),          # 1 rotations body -> world
            np.zeros((nb, 3)),             # 2 CoM positions, world
            np.zeros((nb, 3)),             # 3 frame origins, world
            np.zeros((nb, 3, 3)),          # 4 motion subspaces S (columns 0..ndof-1)
            np.zeros((nb, slots, 3, 3)),   # 5 X = ∂Ω/∂w
            np.zeros((nb, slots, 3, 3)),   # 6 Y = ∂V/∂w
            np.zeros((nb, 6, 6)),          # 7 T_b, the partials' recursion map
            np.zeros((nb, 6)),             # 8 subtree momenta P_b
            np.zeros((nb, 6)),             # 9 their rates Ṗ_b at u̇ = 0
            np.zeros((nb, 6, 6)),          # 10 composite inertias C_b of the subtrees
            np.zeros((nb, 3)),             # 11 Ω_b
            np.zeros((nb, 3)),             # 12 V_b
            np.zeros((nb, 3)),             # 13 ω_b (relative)
            np.zeros((nb, 3)),             # 14 Ω̇_b at u̇ = 0
            np.zeros((nb, 3)),             # 15 V̇_b at u̇ = 0
            np.zeros((nu, nu)),            # 16 mass matrix in u
            np.zeros(nu),                  # 17 bias h
            np.zeros(nu),                  # 18 generalised forces Q
            np.zeros(nu),                  # 19 u
            np.zeros(nu),                  # 20 u̇
            np.zeros((nb, 3)),             # 21 total world force per body (loads)
            np.zeros((nb + 1, 3)),         # 22 ∂K/∂w per w block (0 V0, 1 ω0, 1 + b link b)
            np.zeros((nb + 1, 3)),         # 23 d/dt ∂K/∂w, then the whole left-hand side at u̇ = 0
        )


def pack_loads(model: CompiledModel, loads) -> tuple:
    """Validated :class:`ExternalLoad` s as the kernels' flat arrays (body, force, moment, point, in-body-frame)."""
    count = len(loads)
    bodies = np.zeros(count, dtype=np.int64)
    vectors = np.full((count, 3, 3), np.nan)
    in_body = np.zeros(count, dtype=np.int64)
    for k, load in enumerate(loads):
        bodies[k] = model.robot.body_index(load.body)
        vectors[k, 0] = load.force
        vectors[k, 1] = load.moment
        if load.point is not None:
            vectors[k, 2] = load.point
        in_body[k] = load.frame is LoadFrame.BODY
    return bodies, vectors, in_body


# ----------------------------------------------------------------------------------------- kernels


@njit
def _slot_u(ints, path, b, s):
    """(first row in u, number of rows, link index or -1) of slot ``s`` of body ``b``."""
    if s < 2:
        return 3 * s, 3, -1
    link = path[b, s - 2]
    return 6 + ints[link, RATE], ints[link, NDOF], link


@njit
def _project_rows(S, ndof, block, out):
    """out[:ndof] = Sᵀ block (block 3 x k rows of w -> ndof rows of u)."""
    for i in range(ndof):
        for j in range(block.shape[1]):
            out[i, j] = S[0, i] * block[0, j] + S[1, i] * block[1, j] + S[2, i] * block[2, j]


@njit
def configuration(model, work, base_q, joint_q, angles, base_position):
    """Poses, eq. (25): rotations A_b (parent -> child) and body -> world, CoM positions and joint origins
    (world, m) with the base CoM at ``base_position``, and each joint's motion subspace S_b (3 x ndof)."""
    ints, axes, fixed, offset, com = model[0], model[2], model[3], model[4], model[5]
    relative, rotations, positions, origins, S = work[0], work[1], work[2], work[3], work[4]
    # 3x3 products by the small in-place kernels: numba's @ goes through BLAS, whose call costs more than the
    # 27 products of a 3x3 matrix (this loop runs once per body per dynamics evaluation)
    turn, product, vector = np.empty((3, 3)), np.empty((3, 3)), np.empty(3)
    relative[0] = quaternion_to_matrix(base_q)
    rotations[0] = relative[0]
    positions[0] = base_position
    mat_vec(rotations[0], com[0], vector)
    origins[0] = base_position - vector
    for b in range(1, ints.shape[0]):
        p, ndof = ints[b, PARENT], ints[b, NDOF]
        S[b] = 0.0
        if ndof == 3:
            mat_mul(fixed[b], quaternion_to_matrix(joint_q[ints[b, QUAT]]), relative[b])
            for i in range(3):
                S[b, i, i] = 1.0
        else:
            relative[b] = fixed[b]
            for i in range(ndof):
                rotation_into(axes[b, i], angles[ints[b, ANGLE] + i], turn)
                mat_mul(relative[b], turn, product)
                relative[b] = product
            if ndof == 1:
                S[b, :, 0] = axes[b, 0]
            else:
                mat_t_vec(turn, axes[b, 0], vector)    # turn: the second axis' rotation, the last one applied
                S[b, :, 0] = vector
                S[b, :, 1] = axes[b, 1]
        mat_mul(rotations[p], relative[b], rotations[b])
        mat_vec(rotations[p], offset[b], vector)
        for i in range(3):
            origins[b, i] = positions[p, i] + vector[i]
        mat_vec(rotations[b], com[b], vector)
        for i in range(3):
            positions[b, i] = origins[b, i] + vector[i]


@njit
def partial_derivatives(model, work):
    """X_b = ∂Ω_b/∂w and Y_b = ∂V_b/∂w per slot, eqs. (30), (32), (34)–(37), (42)–(45):
    inherited slots X_b = X_p A_b, Y_b = (Y_p + X_p [r_p]) A_b + X_b [R_b]; own slot X = I, Y = [R_b].

    The inherited slots are [X_b | Y_b] = [X_p | Y_p] T_b with T_b = [[A_b, [r_p] A_b + A_b [R_b]], [0, A_b]]
    (6x6), stored per body for the sums grouped by subtree (:func:`mass_matrix`, :func:`bias_forces`)."""
    ints, offset, com = model[0], model[4], model[5]
    relative, X, Y, T = work[0], work[5], work[6], work[7]
    X[0] = 0.0
    Y[0] = 0.0
    X[0, 1] = np.eye(3)
    Y[0, 0] = np.eye(3)
    rx = np.empty((3, 3))
    Rx = np.empty((3, 3))
    carried = np.empty((3, 3))
    for b in range(1, ints.shape[0]):
        p, own = ints[b, PARENT], 1 + ints[b, DEPTH]
        A = relative[b]
        hat_into(offset[b], rx)
        hat_into(com[b], Rx)
        for s in range(own):
            mat_mul(X[p, s], A, X[b, s])
            carried[:, :] = Y[p, s]
            mat_mul_add(X[p, s], rx, carried)
            mat_mul(carried, A, Y[b, s])
            mat_mul_add(X[b, s], Rx, Y[b, s])
        X[b, own] = np.eye(3)
        Y[b, own] = Rx
        _joint_map(A, rx, Rx, T[b])


@njit
def _joint_map(A, rx, Rx, out):
    """out = [[A, [r_p] A + A [R_b]], [0, A]] (6x6): the map T_b of :func:`partial_derivatives` for A = A_b, and
    its rate Ṫ_b for A = Ȧ_b (r_p and R_b are constant)."""
    out[:3, :3] = A
    out[3:, :3] = 0.0
    out[3:, 3:] = A
    mat_mul(rx, A, out[:3, 3:])
    mat_mul_add(A, Rx, out[:3, 3:])


@njit
def _spatial_congruence_add(T, C, product, out):
    """out += T C Tᵀ (6x6; ``product`` a 6x6 scratch array)."""
    for i in range(6):
        for j in range(6):
            value = 0.0
            for k in range(6):
                value += T[i, k] * C[k, j]
            product[i, j] = value
    for i in range(6):
        for j in range(6):
            value = 0.0
            for k in range(6):
                value += product[i, k] * T[j, k]
            out[i, j] += value


@njit
def composite_inertias(model, work):
    """C_b: the inertia of the subtree rooted at body b moving rigidly with it, 6x6 over (Ω_b, V_b) in b's
    frame at b's CoM (kg m², kg m, kg): C_b = diag(I_b, m_b 1) + Σ_children T_c C_c T_cᵀ, T_c the map
    [X_js | Y_js] -> [X_cs | Y_cs] of :func:`partial_derivatives` (joint c held)."""
    ints, mass, inertia = model[0], model[6], model[7]
    T, C = work[7], work[10]
    nb = ints.shape[0]
    for b in range(nb):
        C[b] = 0.0
        C[b, :3, :3] = inertia[b]
        for i in range(3):
            C[b, 3 + i, 3 + i] = mass[b]
    product = np.empty((6, 6))
    for b in range(nb - 1, 0, -1):      # children before parents: parents come first in the body order
        _spatial_congruence_add(T[b], C[b], product, C[ints[b, PARENT]])


@njit
def mass_matrix(model, work):
    """M = Gᵀ M_w G with M_w = Σ_b Y_b m_b Y_bᵀ + X_b I_b X_bᵀ (kg, kg m²), the sum grouped by subtree.

    Slot t of body j (its own slot, and for the base both of its slots) moves j's whole subtree and nothing
    else, so for every slot s of j the (s, t) block of M_w is Φ_js C_j Φ_jtᵀ, with Φ_js = [X_js | Y_js] and C_j
    the subtree's composite inertia (:func:`composite_inertias`). This grouping (Walker & Orin's composite
    rigid bodies) costs O(bodies x depth) 3x3 products, summing body by body O(bodies x depth²)."""
    ints, path = model[0], model[1]
    S, X, Y, M, C = work[4], work[5], work[6], work[16], work[10]
    composite_inertias(model, work)
    M[:, :] = 0.0
    G = np.empty((6, 3))
    block = np.empty((3, 3))
    left = np.empty((3, 3))
    for j in range(ints.shape[0]):
        own = 1 + ints[j, DEPTH]
        for t in range(0 if j == 0 else own, own + 1):
            rt, nt, lt = _slot_u(ints, path, j, t)
            for i in range(6):      # G = C_j Φ_jtᵀ
                for k in range(3):
                    value = 0.0
                    for m in range(3):
                        value += C[j, i, m] * X[j, t, k, m] + C[j, i, 3 + m] * Y[j, t, k, m]
                    G[i, k] = value
            for s in range(t + 1):
                rs, ns, ls = _slot_u(ints, path, j, s)
                for a in range(3):
                    for k in range(3):
                        value = 0.0
                        for m in range(3):
                            value += X[j, s, a, m] * G[m, k] + Y[j, s, a, m] * G[3 + m, k]
                        block[a, k] = value
                if ls >= 0 and ns < 3:
                    _project_rows(S[ls], ns, block, left)
                else:
                    left[:, :] = block
                for a in range(ns):
                    for b in range(nt):
                        value = 0.0
                        if lt >= 0 and nt < 3:
                            for k in range(3):
                                value += left[a, k] * S[lt, k, b]
                        else:
                            value = left[a, b]
                        M[rs + a, rt + b] += value
                        if s != t:
                            M[rt + b, rs + a] += value


@njit
def velocities(model, work, u):
    """Recursive kinematics (24), (27): Ω_b, V_b (body frames) and ω_b = S_b u_b from u = [V0, ω0, rates]."""
    ints, offset, com = model[0], model[4], model[5]
    relative, S, omega, velocity, rel = work[0], work[4], work[11], work[12], work[13]
    velocity[0] = u[0:3]
    omega[0] = u[3:6]
    rel[0] = 0.0
    carried = np.empty(3)
    for b in range(1, ints.shape[0]):
        p, ndof, r = ints[b, PARENT], ints[b, NDOF], 6 + ints[b, RATE]
        A = relative[b]
        for i in range(3):
            rel[b, i] = 0.0
            for j in range(ndof):
                rel[b, i] += S[b, i, j] * u[r + j]
        mat_t_vec(A, omega[p], omega[b])
        omega[b] += rel[b]
        carried[:] = velocity[p]
        cross_add(omega[p], offset[b], carried)
        mat_t_vec(A, carried, velocity[b])
        cross_add(omega[b], com[b], velocity[b])


@njit
def _bias_accelerations(model, work):
    """Ω̇_b, V̇_b at u̇ = 0 (only the Ṡ u of universal joints, −q̇₀ q̇₁ a₁ × S₀, drives them besides
    the velocity products), by differentiating (24) and (27) with Ċ = −[ω]C."""
    ints, axes, offset, com = model[0], model[2], model[4], model[5]
    relative, S, omega, velocity, rel, omega_dot, velocity_dot, u = (work[0], work[4], work[11], work[12], work[13],
                                                                     work[14], work[15], work[19])
    omega_dot[0] = 0.0
    velocity_dot[0] = 0.0
    parent_omega = np.empty(3)
    carried = np.empty(3)
    moved = np.empty(3)
    for b in range(1, ints.shape[0]):
        p, ndof, r = ints[b, PARENT], ints[b, NDOF], 6 + ints[b, RATE]
        A = relative[b]
        # Ω̇_b = Aᵀ Ω̇_p − ω_b × (Aᵀ Ω_p) + Ṡ u
        mat_t_vec(A, omega_dot[p], omega_dot[b])
        mat_t_vec(A, omega[p], parent_omega)
        cross_add(parent_omega, rel[b], omega_dot[b])
        if ndof == 2:
            scale = -u[r] * u[r + 1]
            second, first = axes[b, 1], S[b, :, 0]
            omega_dot[b, 0] += scale * (second[1] * first[2] - second[2] * first[1])
            omega_dot[b, 1] += scale * (second[2] * first[0] - second[0] * first[2])
            omega_dot[b, 2] += scale * (second[0] * first[1] - second[1] * first[0])
        # V̇_b = Aᵀ (V̇_p + Ω̇_p × r_p) − ω_b × Aᵀ (V_p + Ω_p × r_p) + Ω̇_b × R_b
        moved[:] = velocity[p]
        cross_add(omega[p], offset[b], moved)
        mat_t_vec(A, moved, carried)
        moved[:] = velocity_dot[p]
        cross_add(omega_dot[p], offset[b], moved)
        mat_t_vec(A, moved, velocity_dot[b])
        cross_add(carried, rel[b], velocity_dot[b])
        cross_add(omega_dot[b], com[b], velocity_dot[b])


@njit
def _scatter(ints, path, S, b, s, vector3, out):
    """out[rows of slot s of body b in u] += S_linkᵀ vector3 (the projection Gᵀ of one 3-row w block)."""
    r, n, link = _slot_u(ints, path, b, s)
    for i in range(n):
        if link >= 0:
            out[r + i] += S[link, 0, i] * vector3[0] + S[link, 1, i] * vector3[1] + S[link, 2, i] * vector3[2]
        else:
            out[r + i] += vector3[i]


@njit
def _spatial_mat_vec_add(T, v, out):
    """out += T v (6x6 by 6)."""
    for i in range(6):
        value = 0.0
        for k in range(6):
            value += T[i, k] * v[k]
        out[i] += value


@njit
def bias_forces(model, work):
    """h = Gᵀ × the left-hand sides of (19)–(21) at u̇ = 0: d/dt ∂K/∂w (velocity products), the transport
    terms [ω0] p_V0, [ω0] p_ω0 + [V0] p_V0, [ω_i] p_ω_i, and the E terms (47)–(53).

    Each is a sum over the bodies a w block moves, grouped by subtree as in :func:`mass_matrix`. With each
    body's momentum μ_b = [I_b Ω_b; m_b V_b] and its subtree's P_j = μ_j + Σ_c T_c P_c, ∂K/∂ω_j = [1 | [R_j]] P_j
    (∂K/∂ω0 = P_0[:3], ∂K/∂V0 = P_0[3:]); its rate is [1 | [R_j]] Ṗ_j with Ṗ_j = μ̇_j + Σ_c (Ṫ_c P_c + T_c Ṗ_c),
    μ̇_b at u̇ = 0 and Ṫ_c from Ȧ_c = A_c [ω_c]. The E-term stacks B(α, i), A(α, i) (48)–(53) follow the partials'
    recursion from their seeds B(i, i) (50), A(i, i) (52), so E_i = [B(i, i) | A(i, i)] P_i."""
    ints, path, offset, com, mass, inertia = model[0], model[1], model[4], model[5], model[6], model[7]
    (relative, S, T, P, P_rate, omega, velocity, rel, omega_dot, velocity_dot, h) = (
        work[0], work[4], work[7], work[8], work[9], work[11], work[12], work[13], work[14], work[15], work[17])
    _bias_accelerations(model, work)
    nb = ints.shape[0]
    for b in range(nb):
        mat_vec(inertia[b], omega[b], P[b, :3])
        mat_vec(inertia[b], omega_dot[b], P_rate[b, :3])
        for i in range(3):
            P[b, 3 + i] = mass[b] * velocity[b, i]
            P_rate[b, 3 + i] = mass[b] * velocity_dot[b, i]
    T_rate = np.empty((6, 6))
    rx = np.empty((3, 3))
    Rx = np.empty((3, 3))
    w_hat = np.empty((3, 3))
    A_rate = np.empty((3, 3))
    for b in range(nb - 1, 0, -1):      # children before parents
        p = ints[b, PARENT]
        hat_into(rel[b], w_hat)
        mat_mul(relative[b], w_hat, A_rate)
        hat_into(offset[b], rx)
        hat_into(com[b], Rx)
        _joint_map(A_rate, rx, Rx, T_rate)
        _spatial_mat_vec_add(T_rate, P[b], P_rate[p])
        _spatial_mat_vec_add(T[b], P_rate[b], P_rate[p])
        _spatial_mat_vec_add(T[b], P[b], P[p])
    # ∂K/∂w and the left-hand sides per w block (block 0 V0, 1 ω0, 1 + link)
    momentum = work[22]
    terms = work[23]
    momentum[0] = P[0, 3:]
    momentum[1] = P[0, :3]
    terms[0] = P_rate[0, 3:]
    terms[1] = P_rate[0, :3]
    for b in range(1, nb):
        momentum[1 + b] = P[b, :3]
        cross_add(com[b], P[b, 3:], momentum[1 + b])
        terms[1 + b] = P_rate[b, :3]
        cross_add(com[b], P_rate[b, 3:], terms[1 + b])
    cross_add(omega[0], momentum[0], terms[0])
    cross_add(omega[0], momentum[1], terms[1])
    cross_add(velocity[0], momentum[0], terms[1])
    own_b = np.empty((3, 3))
    own_a = np.empty((3, 3))
    vector = np.empty(3)
    carried_velocity = np.empty(3)
    for b in range(1, nb):
        p = ints[b, PARENT]
        A = relative[b]
        cross_add(rel[b], momentum[1 + b], terms[1 + b])
        # E_b = B(b, b) (subtree I Ω part) + A(b, b) (subtree m V part), eqs. (47), (50), (52)
        hat_into(com[b], Rx)
        mat_t_vec(A, omega[p], vector)
        hat_into(vector, own_b)
        carried_velocity[:] = velocity[p]
        cross_add(omega[p], offset[b], carried_velocity)
        mat_t_vec(A, carried_velocity, vector)
        hat_into(vector, own_a)
        mat_mul_add(own_b, Rx, own_a)
        mat_vec_add(own_b, P[b, :3], terms[1 + b])
        mat_vec_add(own_a, P[b, 3:], terms[1 + b])
    h[:] = 0.0
    h[0:6] = terms[0:2].ravel()
    for b in range(1, nb):
        _scatter(ints, path, S, b, 1 + ints[b, DEPTH], terms[1 + b], h)


@njit
def applied_forces(model, work, torques, load_bodies, load_vectors, load_in_body):
    """Q = Gᵀ [F0; M0; M_i] of the loads plus the joint torques; also each body's world force in work[21].

    F0, M0: total force and moment about the base CoM (base frame); M_i: moment about joint i of the loads on
    link i and every link outboard of it (link frame)."""
    ints, path = model[0], model[1]
    rotations, positions, origins, S, Q, body_force = work[1], work[2], work[3], work[4], work[18], work[21]
    nb = ints.shape[0]
    w_forces = np.zeros((nb + 1, 3))
    body_force[:] = 0.0
    for k in range(load_bodies.shape[0]):
        b = load_bodies[k]
        R = rotations[b]
        force, moment = load_vectors[k, 0], load_vectors[k, 1]
        if load_in_body[k] == 1:
            force, moment = R @ force, R @ moment
        point = positions[b] if math.isnan(load_vectors[k, 2, 0]) else origins[b] + R @ load_vectors[k, 2]
        body_force[b] += force
        w_forces[0] += rotations[0].T @ force
        w_forces[1] += rotations[0].T @ (np.cross(point - positions[0], force) + moment)
        for j in range(ints[b, DEPTH]):
            i = path[b, j]
            w_forces[1 + i] += rotations[i].T @ (np.cross(point - origins[i], force) + moment)
    Q[:] = 0.0
    Q[0:6] = w_forces[0:2].ravel()
    Q[6:] = torques
    for b in range(1, nb):
        _scatter(ints, path, S, b, 1 + ints[b, DEPTH], w_forces[1 + b], Q)


@njit
def _cholesky_solve(A, B):
    """Solve A X = B in place (B overwritten by X) for a symmetric positive-definite A (its lower triangle read,
    then overwritten by the Cholesky factor L). Returns False if A is not positive definite. Written out: arm
    blocks are small and LAPACK's per-call dispatch would dominate; the substitutions run row by row over all
    right-hand sides at once, an inner loop the compiler vectorises."""
    n, m = A.shape[0], B.shape[1]
    for j in range(n):
        d = A[j, j]
        for k in range(j):
            d -= A[j, k] * A[j, k]
        if not d > 0.0:
            return False
        A[j, j] = math.sqrt(d)
        inverse = 1.0 / A[j, j]
        for i in range(j + 1, n):
            s = A[i, j]
            for k in range(j):
                s -= A[i, k] * A[j, k]
            A[i, j] = s * inverse
    for i in range(n):          # L Z = B
        for k in range(i):
            factor = A[i, k]
            for c in range(m):
                B[i, c] -= factor * B[k, c]
        inverse = 1.0 / A[i, i]
        for c in range(m):
            B[i, c] *= inverse
    for i in range(n - 1, -1, -1):      # Lᵀ X = Z
        inverse = 1.0 / A[i, i]
        for c in range(m):
            B[i, c] *= inverse
        for k in range(i):
            factor = A[i, k]
            for c in range(m):
                B[k, c] -= factor * B[i, c]
    return True


@njit
def _arm_size(arm_rates, a):
    """Number of joint rates of arm ``a`` (its row of ``arm_rates`` is -1 padded)."""
    n = 0
    while n < arm_rates.shape[1] and arm_rates[a, n] >= 0:
        n += 1
    return n


@njit
def solve_by_arms(model, M, rhs, out):
    """out = M⁻¹ rhs by block elimination (eq. (39)): each arm's block factored alone, then the 6x6 base
    Schur complement; arms couple only through the base, so the cost is linear in the number of arms."""
    arm_rates = model[8]
    schur = M[:6, :6].copy()
    reduced = rhs[:6].copy()
    arms, widest = arm_rates.shape
    solved = np.empty((arms, widest, 7))      # per arm: its block⁻¹ [M_arm,base | rhs_arm]
    storage = np.empty((widest, widest))
    for a in range(arms):
        n = _arm_size(arm_rates, a)
        rows = arm_rates[a, :n]
        block = storage[:n, :n]
        right = solved[a, :n]
        for i in range(n):
            for j in range(i + 1):
                block[i, j] = M[rows[i], rows[j]]
            for j in range(6):
                right[i, j] = M[rows[i], j]
            right[i, 6] = rhs[rows[i]]
        if not _cholesky_solve(block, right):
            return False
        for k in range(n):
            for i in range(6):
                coupling = M[rows[k], i]
                for j in range(6):
                    schur[i, j] -= coupling * right[k, j]
                reduced[i] -= coupling * right[k, 6]
    base = reduced.reshape(6, 1).copy()
    if not _cholesky_solve(schur, base):
        return False
    out[:6] = base[:, 0]
    for a in range(arms):
        for k in range(_arm_size(arm_rates, a)):
            value = solved[a, k, 6]
            for j in range(6):
                value -= solved[a, k, j] * out[j]
            out[arm_rates[a, k]] = value
    return True


@njit
def forward_dynamics(model, work, base_q, joint_q, angles, base_position, u, torques, load_bodies, load_vectors,
                     load_in_body):
    """u̇ = M⁻¹ (Q − h) of the state (written to work[20]); returns a status code (OK when solved)."""
    configuration(model, work, base_q, joint_q, angles, base_position)
    partial_derivatives(model, work)
    mass_matrix(model, work)
    work[19][:] = u
    velocities(model, work, u)
    bias_forces(model, work)
    applied_forces(model, work, torques, load_bodies, load_vectors, load_in_body)
    if not solve_by_arms(model, work[16], work[18] - work[17], work[20]):
        return NOT_POSITIVE_DEFINITE
    return OK


# ------------------------------------------------------------------------- RKMK4 in momentum coordinates
#
# y = [c (3), P (3), L (3), Θ0 (3), Θ_spherical (3 per spherical joint), joint angles, joint rates]:
# the system CoM, total linear momentum and angular momentum about c (world frame), the Lie-algebra
# increments of the base and spherical-joint attitudes since the step's start, the 1-/2-DOF angles and
# the joint rates (see discrete_robot.space.simulation for why these coordinates).


@njit
def _attitudes(model, y, base_q, joint_q, base_out, joints_out):
    """R_n exp(Θ) of the base and the spherical joints, as unit quaternions."""
    counts = model[9]
    base = quaternion_multiply(base_q, quaternion_exp(y[9:12]))
    base_out[:] = base / math.sqrt(base @ base)
    for k in range(counts[2]):
        joint = quaternion_multiply(joint_q[k], quaternion_exp(y[12 + 3 * k:15 + 3 * k]))
        joints_out[k] = joint / math.sqrt(joint @ joint)


@njit
def derivative(model, work, y, base_q, joint_q, torques, load_bodies, load_vectors, load_in_body, out):
    """ẏ at y: reconstructs the base pose from c and the base velocities from P, L (first six rows of M u),
    then the joint accelerations by the recursive forward dynamics. Returns a status code."""
    counts, mass = model[9], model[6]
    dof, n_angles, n_spherical = counts[0], counts[1], counts[2]
    a0 = 12 + 3 * n_spherical
    r0 = a0 + n_angles
    base_now = np.empty(4)
    joints_now = np.empty((n_spherical, 4))
    _attitudes(model, y, base_q, joint_q, base_now, joints_now)
    angles = y[a0:r0]
    rates = y[r0:r0 + dof]
    configuration(model, work, base_now, joints_now, angles, np.zeros(3))
    positions, rotations, origins = work[2], work[1], work[3]
    total = mass.sum()
    offset = np.zeros(3)
    for b in range(mass.shape[0]):
        offset += mass[b] * positions[b]
    base_position = y[0:3] - offset / total
    for b in range(mass.shape[0]):
        positions[b] += base_position
        origins[b] += base_position
    partial_derivatives(model, work)
    mass_matrix(model, work)
    M = work[16]
    R0 = rotations[0]
    momenta = np.empty((6, 1))
    momenta[0:3, 0] = R0.T @ y[3:6]
    momenta[3:6, 0] = R0.T @ (y[6:9] + np.cross(y[0:3] - base_position, y[3:6]))
    for i in range(6):
        for j in range(dof):
            momenta[i, 0] -= M[i, 6 + j] * rates[j]
    base_block = M[:6, :6].copy()
    if not _cholesky_solve(base_block, momenta):
        return NOT_POSITIVE_DEFINITE
    u = work[19]
    u[0:6] = momenta[:, 0]
    u[6:] = rates
    velocities(model, work, u)
    bias_forces(model, work)
    applied_forces(model, work, torques, load_bodies, load_vectors, load_in_body)
    if not solve_by_arms(model, M, work[18] - work[17], work[20]):
        return NOT_POSITIVE_DEFINITE
    force, moment = np.zeros(3), np.zeros(3)
    for k in range(load_bodies.shape[0]):
        b = load_bodies[k]
        R = rotations[b]
        f, m = load_vectors[k, 0], load_vectors[k, 1]
        if load_in_body[k] == 1:
            f, m = R @ f, R @ m
        point = positions[b] if math.isnan(load_vectors[k, 2, 0]) else origins[b] + R @ load_vectors[k, 2]
        force += f
        moment += np.cross(point - y[0:3], f) + m
    out[0:3] = y[3:6] / total
    out[3:6] = force
    out[6:9] = moment
    out[9:12] = right_jacobian_inverse(y[9:12]) @ u[3:6]
    ints = model[0]
    for b in range(1, ints.shape[0]):
        r = 6 + ints[b, RATE]
        if ints[b, NDOF] == 3:
            k = ints[b, QUAT]
            out[12 + 3 * k:15 + 3 * k] = right_jacobian_inverse(y[12 + 3 * k:15 + 3 * k]) @ u[r:r + 3]
        else:
            a = a0 + ints[b, ANGLE]
            out[a:a + ints[b, NDOF]] = u[r:r + ints[b, NDOF]]
    out[r0:r0 + dof] = work[20][6:]
    return OK


@njit
def rkmk4_step(model, work, y, base_q, joint_q, torques, load_bodies, load_vectors, load_in_body, dt, y_out,
               base_out, joints_out):
    """One RKMK4 step of ``dt`` s from (y with zero increments, base_q, joint_q): the classical RK4 tableau on
    ẏ, attitudes advanced by the exact exponential of the RK4 increments. Returns a status code (TOO_FAST when
    an attitude or joint angle would turn more than :data:`MAX_STEP_ROTATION`); the outputs are valid only
    when it is OK."""
    n = y.shape[0]
    k = np.empty((4, n))
    stage = y.copy()
    weights = (0.0, 0.5, 0.5, 1.0)
    for i in range(4):
        if i > 0:
            stage = y + weights[i] * dt * k[i - 1]
        status = derivative(model, work, stage, base_q, joint_q, torques, load_bodies, load_vectors, load_in_body,
                            k[i])
        if status != OK:
            return status
    y_out[:] = y + dt / 6.0 * (k[0] + 2.0 * k[1] + 2.0 * k[2] + k[3])
    for i in range(n):
        if not math.isfinite(y_out[i]):
            return NOT_FINITE
    counts = model[9]
    rotations_end = 12 + 3 * counts[2] + counts[1]
    for i in range(9, rotations_end):
        if abs(y_out[i] - y[i]) > MAX_STEP_ROTATION:
            return TOO_FAST
    _attitudes(model, y_out, base_q, joint_q, base_out, joints_out)
    y_out[9:12 + 3 * counts[2]] = 0.0
    return OK


@njit
def rkmk4_steps(model, work, y, base_q, joint_q, torques, load_bodies, load_vectors, load_in_body, dt, count, y_out,
                base_out, joints_out):
    """``count`` steps of :func:`rkmk4_step` in one call (a simulator's tick: one dispatch of the model's arrays
    instead of one per step). Returns (status, steps done); the outputs hold the state after the steps done, so
    a failing step leaves the last state that worked."""
    y_now, base_now, joints_now = y.copy(), base_q.copy(), joint_q.copy()
    for done in range(count):
        status = rkmk4_step(model, work, y_now, base_now, joints_now, torques, load_bodies, load_vectors,
                            load_in_body, dt, y_out, base_out, joints_out)
        if status != OK:
            y_out[:], base_out[:], joints_out[:] = y_now, base_now, joints_now
            return status, done
        y_now[:], base_now[:], joints_now[:] = y_out, base_out, joints_out
    return OK, count


def check_status(status: int, robot: SpaceRobot, what: str) -> None:
    """Raise the error a kernel's status code stands for."""
    if status == NOT_POSITIVE_DEFINITE:
        raise ModelError(f"robot '{robot.name}': the mass matrix is not positive definite ({what})")
    if status == NOT_FINITE:
        raise ConvergenceError(f"{what} produced non-finite values")


def warm_up() -> None:
    """Compile every kernel on the paper's dual-arm robot and on a mixed-joint tree (make setup)."""
    from discrete_robot.model.description import model_from_dict
    from discrete_robot.space.generated import multi_arm_model_data
    from discrete_robot.space.simulation import Simulator
    from discrete_robot.space.state import random_state

    robot = SpaceRobot.from_model(model_from_dict(multi_arm_model_data(2, 3, mixed_joints=True)))
    simulator = Simulator(robot, random_state(robot, np.random.default_rng(0), speed=0.1))
    simulator.step(1e-3)
    simulator.advance(1e-3, 2)
    simulator.sample()      # the attitude conversions of geometry3d


_SHARED: "weakref.WeakKeyDictionary[SpaceRobot, tuple[CompiledModel, Workspace]]" = weakref.WeakKeyDictionary()


def shared(robot: SpaceRobot) -> tuple[CompiledModel, Workspace]:
    """The compiled model and a workspace for ``robot``, built on first use and kept while the robot lives.

    For the one-off evaluations of :mod:`.recursive` and :mod:`.kinematics` (one thread); a
    :class:`~discrete_robot.space.simulation.Simulator` owns its own workspace.
    """
    if robot not in _SHARED:
        model = compile_model(robot)
        _SHARED[robot] = (model, Workspace(model))
    return _SHARED[robot]
