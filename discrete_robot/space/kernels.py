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

w = [V0, ω0, w_1..w_N] are the quasi-velocities of the unconstrained system (all joints 3-DOF); a rotational
joint's block is w_b = ω_b = S_b(q) u_b, and the constrained equations are the projection Gᵀ (19)–(21) with
w = G u, G = blockdiag(I₆, S_1..S_N).

A prismatic (sliding) joint's block is instead the link's relative linear velocity w_b = v_b = a_b ḋ_b (link
frame, S_b = a_b its axis): Ω_b = A_bᵀ Ω_p and V_b = A_bᵀ (V_p − [r_p] Ω_p) − [R_b] Ω_b + v_b with A_b
constant and r_p(q) = r_p⁰ + A_b a_b d_b (the link frame slides with the link, so R_b and its children's
r stay constant). Its partials are X = 0, Y = I (own slot), the inherited ones as above with r_p(q), and
Ṫ_b = [[0, A_b [v_b]], [0, 0]] (ṙ_p = A_b v_b). The E terms of (21) are the moment about the moving joint
of the subtree's momentum rates; for a translation the same (Kane's) projection of the subtree's inertia
forces on v_b gives (d/dt + [Ω_b]) ∂K/∂v_b, ∂K/∂v_b the subtree's linear momentum (link frame), and its
generalised force is the subtree's total load force (link frame).

Every ∂K/∂w is linear in the velocities, so the result is
M(q) u̇ + h(q, u) = Q with M = Gᵀ (Σ_b Y_b m_b Y_bᵀ + X_b I_b X_bᵀ) G; forward dynamics solves it by block
elimination per arm (arms couple only through the base, eq. (39)).

Evaluated by numba kernels over flat arrays: per-call numpy overhead (hundreds of small operations of
~1 µs each) otherwise costs ~30x the arithmetic.

Model/Data as Pinocchio's: :func:`compile_model` flattens a :class:`SpaceRobot` once into a :class:`Model`
(per body b (0 = base, 1..N links, parents first) its parent, joint DOF count, first rate index, first angle
index, quaternion index and depth; the links on its path from the base; joint axes, fixed rotations, offsets
r_p, CoMs R_b, masses and inertias; per arm the indices of its rates in u), :func:`create_data` allocates its
:class:`Data` (every intermediate array, reused by every call; one per thread), and the forward dynamics writes
u̇ into ``data.ddq`` (data.M, data.nle, data.tau = M, h, Q). Its public face, with the state as one configuration
vector and one velocity vector, is :func:`discrete_robot.dynamics.forward_dynamics`; the positional entry points
here (``_forward_dynamics`` and its ``_bound_*`` forms) serve it, :mod:`.recursive` and :mod:`.kinematics`.

The integrator built on these kernels is :mod:`.rkmk4`.

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
from typing import NamedTuple

import numpy as np

from discrete_robot.errors import ConvergenceError, ModelError
from discrete_robot.geometry3d import (
    copy_into,
    cross_add,
    hat_into,
    mat_mul,
    mat_mul_add,
    mat_t_vec,
    mat_vec,
    mat_vec_add,
    matrix_copy_into,
    quaternion_to_matrix_into,
    rotation_into,
)
from discrete_robot.jit import Binding, bind, njit
from discrete_robot.linalg import cholesky_solve
from discrete_robot.space.loads import LoadFrame
from discrete_robot.space.robot import JointKind, SpaceRobot

#: columns of :attr:`Model.tree` (SLIDE: 1 for a prismatic joint, 0 for a rotational one)
PARENT, NDOF, RATE, ANGLE, QUAT, DEPTH, SLIDE = range(7)
#: kernel status codes
OK, NOT_POSITIVE_DEFINITE, NOT_FINITE, TOO_FAST = 0, 1, 2, 3


class Model(NamedTuple):
    """A :class:`SpaceRobot` as flat arrays (SI units; see the module docstring). Pinocchio's ``parents`` is
    ``tree[:, PARENT]``, its ``inertias`` are ``mass``, ``com`` and ``inertia``."""

    tree: np.ndarray          # (nb, 7) int64: parent, ndof, rate start, angle start, quaternion index, depth, slide
    path: np.ndarray          # (nb, max depth) int64: links from the base to b (b last), -1 padded
    axes: np.ndarray          # (nb, 3, 3): joint axes as rows
    fixed: np.ndarray         # (nb, 3, 3): parent -> joint frame rotation at zero angles
    offset: np.ndarray        # (nb, 3): r_p, parent CoM -> joint, parent frame (a prismatic joint's at d = 0)
    com: np.ndarray           # (nb, 3): R_b, joint -> CoM, body frame (base: its CoM in the base frame)
    mass: np.ndarray          # (nb,)
    inertia: np.ndarray       # (nb, 3, 3) about the CoM, body frame
    arm_rates: np.ndarray     # (arms, max arm dof) int64 indices into u, -1 padded
    counts: np.ndarray        # int64 [dof, angle count, spherical count, slots]
    fold: np.ndarray          # (nu,) int64: u_i = fold_gain_i x_fold_i, x the independent rates (mimic joints)
    fold_gain: np.ndarray     # (nu,): 1, or a mimic follower's multiplier


def compile_model(robot: SpaceRobot) -> Model:
    """Flatten ``robot`` into a :class:`Model` (once per robot: :func:`shared` keeps one)."""
    nb = robot.body_count
    depth = np.array([len(path) for path in robot.ancestors])
    max_depth = max(1, int(depth.max()))
    tree = np.zeros((nb, 7), dtype=np.int64)
    tree[0] = (-1, 0, -1, -1, -1, 0, 0)
    path = -np.ones((nb, max_depth), dtype=np.int64)
    axes = np.zeros((nb, 3, 3))
    fixed = np.zeros((nb, 3, 3))
    fixed[0] = np.eye(3)
    offset = np.zeros((nb, 3))
    com = np.zeros((nb, 3))
    com[0] = robot.base_com
    for b, link in enumerate(robot.links, start=1):
        tree[b] = (link.parent, link.ndof, link.rates.start, link.angles.start, link.quaternion_index, depth[b],
                   link.kind is JointKind.PRISMATIC)
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
    fold, fold_gain = _fold(robot)
    return Model(tree, path, axes, fixed, offset, com, robot.masses.astype(float), robot.inertias.astype(float),
                 arm_rates, counts, fold, fold_gain)


def _fold(robot: SpaceRobot) -> tuple[np.ndarray, np.ndarray]:
    """The map u = S x of the mimic joints (:mod:`.robot`) as one column and gain per row of u: independent rates
    x numbered in u's order, a follower's row on its leader's column with its multiplier."""
    nu = 6 + robot.dof
    follower = {6 + robot.links[m.follower - 1].rates.start: m for m in robot.mimic}
    fold, gain, column = np.zeros(nu, dtype=np.int64), np.ones(nu), 0
    for i in range(nu):
        if i not in follower:
            fold[i], column = column, column + 1
    for i, m in follower.items():
        fold[i], gain[i] = fold[6 + robot.links[m.leader - 1].rates.start], m.multiplier
    return fold, gain


class Data(NamedTuple):
    """Every array the kernels write, allocated once for one model (:func:`create_data`) and reused by every call;
    one per thread. Pinocchio's names where the meaning is the same: ``oRi`` and ``oPi`` are the rotation and
    translation of its ``oMi`` (body frame in the world; a link's frame origin is its joint), ``M``, ``nle``
    (h), ``tau`` (Q: generalised forces of the loads and joint torques), ``v`` (u = [V0, ω0, joint rates]),
    ``ddq`` (u̇) and ``S`` (motion subspaces). The rest are the paper's quantities (module docstring); the
    fields after ``momentum_terms`` are the kernels' scratch."""

    relative: np.ndarray                    # (nb, 3, 3) A_b, parent -> child (the base: base -> world)
    oRi: np.ndarray  # noqa: N815           (nb, 3, 3) body -> world
    com_positions: np.ndarray               # (nb, 3) CoM, world, m
    oPi: np.ndarray  # noqa: N815           (nb, 3) frame origins, world, m
    offsets: np.ndarray                     # (nb, 3) r_p(q), parent CoM -> frame origin, parent frame, m
    S: np.ndarray                           # (nb, 3, 3) motion subspaces (columns 0..ndof-1)
    angular_partials: np.ndarray            # (nb, slots, 3, 3) X = ∂Ω/∂w
    linear_partials: np.ndarray             # (nb, slots, 3, 3) Y = ∂V/∂w
    joint_maps: np.ndarray                  # (nb, 6, 6) T_b, the partials' recursion map
    subtree_momentum: np.ndarray            # (nb, 6) P_b
    subtree_momentum_rate: np.ndarray       # (nb, 6) Ṗ_b at u̇ = 0
    composite_inertia: np.ndarray           # (nb, 6, 6) C_b of the subtrees
    angular_velocity: np.ndarray            # (nb, 3) Ω_b, body frame, rad/s
    linear_velocity: np.ndarray             # (nb, 3) V_b, body frame, m/s
    relative_angular_velocity: np.ndarray   # (nb, 3) ω_b, link frame, rad/s (0 for a prismatic joint)
    relative_linear_velocity: np.ndarray    # (nb, 3) v_b of a prismatic joint, link frame, m/s (else 0)
    angular_velocity_bias_rate: np.ndarray  # (nb, 3) Ω̇_b at u̇ = 0
    linear_velocity_bias_rate: np.ndarray   # (nb, 3) V̇_b at u̇ = 0
    M: np.ndarray                           # (nu, nu) mass matrix in u
    nle: np.ndarray                         # (nu,) h
    tau: np.ndarray                         # (nu,) Q
    v: np.ndarray                           # (nu,) u
    ddq: np.ndarray                         # (nu,) u̇
    body_force: np.ndarray                  # (nb, 3) total world force of the loads per body, N
    momentum_partials: np.ndarray           # (nb + 1, 3) ∂K/∂w per w block (0 V0, 1 ω0, 1 + b link b)
    momentum_terms: np.ndarray              # (nb + 1, 3) d/dt ∂K/∂w, then the left-hand side at u̇ = 0
    block_forces: np.ndarray                # (nb + 1, 3) the loads' generalised forces per w block
    load_world: np.ndarray                  # (3, 3) a load in the world: force, moment, application point
    rhs: np.ndarray                         # (nu,) Q − h
    offset_hat: np.ndarray                  # (3, 3) [r_p]
    com_hat: np.ndarray                     # (3, 3) [R_b]
    matrix: np.ndarray                      # (3, 3) scratch
    product: np.ndarray                     # (3, 3) scratch
    carried: np.ndarray                     # (3, 3) scratch
    e_angular: np.ndarray                   # (3, 3) B(b, b)
    e_linear: np.ndarray                    # (3, 3) A(b, b)
    vector: np.ndarray                      # (3,) scratch
    carried_vector: np.ndarray              # (3,) scratch
    moved_vector: np.ndarray                # (3,) scratch
    coupling: np.ndarray                    # (6, 3) C_j Φ_jtᵀ
    spatial_product: np.ndarray             # (6, 6) scratch
    joint_map_rate: np.ndarray              # (6, 6) Ṫ_b
    schur: np.ndarray                       # (6, 6) the base's Schur complement
    base_solution: np.ndarray               # (6, 1) its right-hand side, then u̇ of the base
    arm_block: np.ndarray                   # (widest arm, widest arm) an arm's block of M
    arm_solutions: np.ndarray               # (arms, widest arm, 7) per arm its block⁻¹ [M_arm,base | rhs_arm]
    folded_mass: np.ndarray                    # (nx, nx) Sᵀ M S, x the independent rates (mimic joints)
    folded_rhs: np.ndarray                  # (nx, 1) Sᵀ (Q − h), then ẋ


def create_data(model: Model) -> Data:
    """The :class:`Data` of ``model``, every array allocated once (zeros)."""
    nb = model.tree.shape[0]
    nu = 6 + int(model.counts[0])
    slots = int(model.counts[3])
    arms, widest = model.arm_rates.shape
    nx = int(model.fold.max()) + 1
    return Data(
        relative=np.zeros((nb, 3, 3)), oRi=np.zeros((nb, 3, 3)), com_positions=np.zeros((nb, 3)),
        oPi=np.zeros((nb, 3)), offsets=np.zeros((nb, 3)), S=np.zeros((nb, 3, 3)),
        angular_partials=np.zeros((nb, slots, 3, 3)),
        linear_partials=np.zeros((nb, slots, 3, 3)), joint_maps=np.zeros((nb, 6, 6)),
        subtree_momentum=np.zeros((nb, 6)), subtree_momentum_rate=np.zeros((nb, 6)),
        composite_inertia=np.zeros((nb, 6, 6)), angular_velocity=np.zeros((nb, 3)), linear_velocity=np.zeros((nb, 3)),
        relative_angular_velocity=np.zeros((nb, 3)), relative_linear_velocity=np.zeros((nb, 3)),
        angular_velocity_bias_rate=np.zeros((nb, 3)),
        linear_velocity_bias_rate=np.zeros((nb, 3)), M=np.zeros((nu, nu)), nle=np.zeros(nu), tau=np.zeros(nu),
        v=np.zeros(nu), ddq=np.zeros(nu), body_force=np.zeros((nb, 3)), momentum_partials=np.zeros((nb + 1, 3)),
        momentum_terms=np.zeros((nb + 1, 3)), block_forces=np.zeros((nb + 1, 3)),
        load_world=np.zeros((3, 3)), rhs=np.zeros(nu),
        offset_hat=np.zeros((3, 3)), com_hat=np.zeros((3, 3)), matrix=np.zeros((3, 3)), product=np.zeros((3, 3)),
        carried=np.zeros((3, 3)), e_angular=np.zeros((3, 3)), e_linear=np.zeros((3, 3)), vector=np.zeros(3),
        carried_vector=np.zeros(3), moved_vector=np.zeros(3), coupling=np.zeros((6, 3)),
        spatial_product=np.zeros((6, 6)), joint_map_rate=np.zeros((6, 6)), schur=np.zeros((6, 6)),
        base_solution=np.zeros((6, 1)), arm_block=np.zeros((widest, widest)), arm_solutions=np.zeros((arms, widest, 7)),
        folded_mass=np.zeros((nx, nx)), folded_rhs=np.zeros((nx, 1)))


def pack_loads(robot: SpaceRobot, loads) -> tuple:
    """Validated :class:`ExternalLoad` s as the kernels' flat arrays (body, force, moment, point, in-body-frame)."""
    count = len(loads)
    bodies = np.zeros(count, dtype=np.int64)
    vectors = np.full((count, 3, 3), np.nan)
    in_body = np.zeros(count, dtype=np.int64)
    for k, load in enumerate(loads):
        bodies[k] = robot.body_index(load.body)
        vectors[k, 0] = load.force
        vectors[k, 1] = load.moment
        if load.point is not None:
            vectors[k, 2] = load.point
        in_body[k] = load.frame is LoadFrame.BODY
    return bodies, vectors, in_body


# ----------------------------------------------------------------------------------------- kernels


@njit(allocates=False)
def _slot_u(ints, path, b, s):
    """(first row in u, number of rows, link index or -1) of slot ``s`` of body ``b``."""
    if s < 2:
        return 3 * s, 3, -1
    link = path[b, s - 2]
    return 6 + ints[link, RATE], ints[link, NDOF], link


@njit(allocates=False)
def _project_rows(S, ndof, block, out):
    """out[:ndof] = Sᵀ block (block 3 x k rows of w -> ndof rows of u)."""
    for i in range(ndof):
        for j in range(block.shape[1]):
            out[i, j] = S[0, i] * block[0, j] + S[1, i] * block[1, j] + S[2, i] * block[2, j]


# The kernels a dynamics evaluation runs are inlined into their callers (numba IR, `inline="always"`): a call
# passes Data's 43 arrays field by field, and the RKMK4 step of the dual arm took 59-65 µs against 52-53 µs for
# the positional layout before; inlined, 54-55 µs (the price: ~10 s more compilation in make setup).
@njit(inline="always", allocates=False)
def configuration(model, data, base_q, joint_q, angles, base_position):
    """Poses, eq. (25): rotations A_b (parent -> child) and body -> world, CoM positions and joint origins
    (world, m) with the base CoM at ``base_position``, each joint's motion subspace S_b (3 x ndof) and the
    offsets r_p(q) (a prismatic joint's displacement d is in ``angles``: r_p = r_p⁰ + A_b a_b d, m)."""
    ints, axes, fixed, com = model.tree, model.axes, model.fixed, model.com
    relative, rotations, positions, origins, S = data.relative, data.oRi, data.com_positions, data.oPi, data.S
    offset = data.offsets
    # 3x3 products by the small in-place kernels: numba's @ goes through BLAS, whose call costs more than the
    # 27 products of a 3x3 matrix (this loop runs once per body per dynamics evaluation)
    turn, product, vector = data.matrix, data.product, data.vector
    quaternion_to_matrix_into(base_q, relative[0])
    matrix_copy_into(relative[0], rotations[0])
    copy_into(base_position, positions[0])
    mat_vec(rotations[0], com[0], vector)
    for i in range(3):
        origins[0, i] = base_position[i] - vector[i]
    for b in range(1, ints.shape[0]):
        p, ndof = ints[b, PARENT], ints[b, NDOF]
        S[b] = 0.0
        copy_into(model.offset[b], offset[b])
        if ints[b, SLIDE] == 1:
            matrix_copy_into(fixed[b], relative[b])
            copy_into(axes[b, 0], S[b, :, 0])
            mat_vec(fixed[b], axes[b, 0], vector)
            for i in range(3):
                offset[b, i] += angles[ints[b, ANGLE]] * vector[i]
        elif ndof == 3:
            quaternion_to_matrix_into(joint_q[ints[b, QUAT]], turn)
            mat_mul(fixed[b], turn, relative[b])
            for i in range(3):
                S[b, i, i] = 1.0
        else:
            matrix_copy_into(fixed[b], relative[b])
            for i in range(ndof):
                rotation_into(axes[b, i], angles[ints[b, ANGLE] + i], turn)
                mat_mul(relative[b], turn, product)
                matrix_copy_into(product, relative[b])
            if ndof == 1:
                copy_into(axes[b, 0], S[b, :, 0])
            else:
                mat_t_vec(turn, axes[b, 0], vector)    # turn: the second axis' rotation, the last one applied
                copy_into(vector, S[b, :, 0])
                copy_into(axes[b, 1], S[b, :, 1])
        mat_mul(rotations[p], relative[b], rotations[b])
        mat_vec(rotations[p], offset[b], vector)
        for i in range(3):
            origins[b, i] = positions[p, i] + vector[i]
        mat_vec(rotations[b], com[b], vector)
        for i in range(3):
            positions[b, i] = origins[b, i] + vector[i]


@njit(inline="always", allocates=False)
def partial_derivatives(model, data):
    """X_b = ∂Ω_b/∂w and Y_b = ∂V_b/∂w per slot, eqs. (30), (32), (34)–(37), (42)–(45):
    inherited slots X_b = X_p A_b, Y_b = (Y_p + X_p [r_p]) A_b + X_b [R_b]; own slot X = I, Y = [R_b] (a
    prismatic joint's: X = 0, Y = I).

    The inherited slots are [X_b | Y_b] = [X_p | Y_p] T_b with T_b = [[A_b, [r_p] A_b + A_b [R_b]], [0, A_b]]
    (6x6), stored per body for the sums grouped by subtree (:func:`mass_matrix`, :func:`bias_forces`)."""
    ints, offset, com = model.tree, data.offsets, model.com
    relative, X, Y, T = data.relative, data.angular_partials, data.linear_partials, data.joint_maps
    X[0] = 0.0
    Y[0] = 0.0
    for i in range(3):      # identity blocks written in place: np.eye would allocate per call
        X[0, 1, i, i] = 1.0
        Y[0, 0, i, i] = 1.0
    rx, Rx, carried = data.offset_hat, data.com_hat, data.carried
    for b in range(1, ints.shape[0]):
        p, own = ints[b, PARENT], 1 + ints[b, DEPTH]
        A = relative[b]
        hat_into(offset[b], rx)
        hat_into(com[b], Rx)
        for s in range(own):
            mat_mul(X[p, s], A, X[b, s])
            matrix_copy_into(Y[p, s], carried)
            mat_mul_add(X[p, s], rx, carried)
            mat_mul(carried, A, Y[b, s])
            mat_mul_add(X[b, s], Rx, Y[b, s])
        X[b, own] = 0.0
        if ints[b, SLIDE] == 1:
            Y[b, own] = 0.0
            for i in range(3):
                Y[b, own, i, i] = 1.0
        else:
            for i in range(3):
                X[b, own, i, i] = 1.0
            matrix_copy_into(Rx, Y[b, own])
        _joint_map(A, rx, Rx, T[b])


@njit(allocates=False)
def _joint_map(A, rx, Rx, out):
    """out = [[A, [r_p] A + A [R_b]], [0, A]] (6x6): the map T_b of :func:`partial_derivatives` for A = A_b, and
    its rate Ṫ_b of a rotational joint for A = Ȧ_b (its r_p and R_b are constant)."""
    matrix_copy_into(A, out[:3, :3])
    out[3:, :3] = 0.0
    matrix_copy_into(A, out[3:, 3:])
    mat_mul(rx, A, out[:3, 3:])
    mat_mul_add(A, Rx, out[:3, 3:])


@njit(allocates=False)
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


@njit(inline="always", allocates=False)
def composite_inertias(model, data):
    """C_b: the inertia of the subtree rooted at body b moving rigidly with it, 6x6 over (Ω_b, V_b) in b's
    frame at b's CoM (kg m², kg m, kg): C_b = diag(I_b, m_b 1) + Σ_children T_c C_c T_cᵀ, T_c the map
    [X_js | Y_js] -> [X_cs | Y_cs] of :func:`partial_derivatives` (joint c held)."""
    ints, mass, inertia = model.tree, model.mass, model.inertia
    T, C = data.joint_maps, data.composite_inertia
    nb = ints.shape[0]
    for b in range(nb):
        C[b] = 0.0
        matrix_copy_into(inertia[b], C[b, :3, :3])
        for i in range(3):
            C[b, 3 + i, 3 + i] = mass[b]
    product = data.spatial_product
    for b in range(nb - 1, 0, -1):      # children before parents: parents come first in the body order
        _spatial_congruence_add(T[b], C[b], product, C[ints[b, PARENT]])


@njit(inline="always", allocates=False)
def mass_matrix(model, data):
    """M = Gᵀ M_w G with M_w = Σ_b Y_b m_b Y_bᵀ + X_b I_b X_bᵀ (kg, kg m²), the sum grouped by subtree.

    Slot t of body j (its own slot, and for the base both of its slots) moves j's whole subtree and nothing
    else, so for every slot s of j the (s, t) block of M_w is Φ_js C_j Φ_jtᵀ, with Φ_js = [X_js | Y_js] and C_j
    the subtree's composite inertia (:func:`composite_inertias`). This grouping (Walker & Orin's composite
    rigid bodies) costs O(bodies x depth) 3x3 products, summing body by body O(bodies x depth²)."""
    ints, path = model.tree, model.path
    S, X, Y, M, C = data.S, data.angular_partials, data.linear_partials, data.M, data.composite_inertia
    composite_inertias(model, data)
    M[:, :] = 0.0
    G, block, left = data.coupling, data.matrix, data.product
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
                    matrix_copy_into(block, left)
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


@njit(inline="always", allocates=False)
def velocities(model, data, u):
    """Recursive kinematics (24), (27): Ω_b, V_b (body frames) and ω_b = S_b u_b (a prismatic joint's v_b = S_b u_b)
    from u = [V0, ω0, rates]."""
    ints, offset, com = model.tree, data.offsets, model.com
    relative, S, omega, velocity = data.relative, data.S, data.angular_velocity, data.linear_velocity
    rel, slide = data.relative_angular_velocity, data.relative_linear_velocity
    copy_into(u[0:3], velocity[0])
    copy_into(u[3:6], omega[0])
    rel[0] = 0.0
    carried = data.carried_vector
    for b in range(1, ints.shape[0]):
        p, ndof, r = ints[b, PARENT], ints[b, NDOF], 6 + ints[b, RATE]
        A = relative[b]
        moving = slide if ints[b, SLIDE] == 1 else rel
        rel[b] = 0.0
        slide[b] = 0.0
        for i in range(3):
            for j in range(ndof):
                moving[b, i] += S[b, i, j] * u[r + j]
        mat_t_vec(A, omega[p], omega[b])
        for i in range(3):
            omega[b, i] += rel[b, i]
        copy_into(velocity[p], carried)
        cross_add(omega[p], offset[b], carried)
        mat_t_vec(A, carried, velocity[b])
        cross_add(omega[b], com[b], velocity[b])
        for i in range(3):
            velocity[b, i] += slide[b, i]


@njit(inline="always", allocates=False)
def _bias_accelerations(model, data):
    """Ω̇_b, V̇_b at u̇ = 0 (only the Ṡ u of universal joints, −q̇₀ q̇₁ a₁ × S₀, drives them besides
    the velocity products), by differentiating (24) and (27) with Ċ = −[ω]C; a prismatic joint adds
    Aᵀ (Ω_p × ṙ_p) = Ω_b × v_b."""
    ints, axes, offset, com = model.tree, model.axes, data.offsets, model.com
    relative, S, omega, velocity = data.relative, data.S, data.angular_velocity, data.linear_velocity
    rel, omega_dot, velocity_dot = (data.relative_angular_velocity, data.angular_velocity_bias_rate,
                                    data.linear_velocity_bias_rate)
    u = data.v
    omega_dot[0] = 0.0
    velocity_dot[0] = 0.0
    parent_omega, carried, moved = data.vector, data.carried_vector, data.moved_vector
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
        copy_into(velocity[p], moved)
        cross_add(omega[p], offset[b], moved)
        mat_t_vec(A, moved, carried)
        copy_into(velocity_dot[p], moved)
        cross_add(omega_dot[p], offset[b], moved)
        mat_t_vec(A, moved, velocity_dot[b])
        cross_add(carried, rel[b], velocity_dot[b])
        cross_add(omega_dot[b], com[b], velocity_dot[b])
        cross_add(omega[b], data.relative_linear_velocity[b], velocity_dot[b])


@njit(allocates=False)
def _scatter(ints, path, S, b, s, vector3, out):
    """out[rows of slot s of body b in u] += S_linkᵀ vector3 (the projection Gᵀ of one 3-row w block)."""
    r, n, link = _slot_u(ints, path, b, s)
    for i in range(n):
        if link >= 0:
            out[r + i] += S[link, 0, i] * vector3[0] + S[link, 1, i] * vector3[1] + S[link, 2, i] * vector3[2]
        else:
            out[r + i] += vector3[i]


@njit(allocates=False)
def _spatial_mat_vec_add(T, v, out):
    """out += T v (6x6 by 6)."""
    for i in range(6):
        value = 0.0
        for k in range(6):
            value += T[i, k] * v[k]
        out[i] += value


@njit(inline="always", allocates=False)
def bias_forces(model, data):
    """h = Gᵀ × the left-hand sides of (19)–(21) at u̇ = 0: d/dt ∂K/∂w (velocity products), the transport
    terms [ω0] p_V0, [ω0] p_ω0 + [V0] p_V0, [ω_i] p_ω_i, and the E terms (47)–(53).

    Each is a sum over the bodies a w block moves, grouped by subtree as in :func:`mass_matrix`. With each
    body's momentum μ_b = [I_b Ω_b; m_b V_b] and its subtree's P_j = μ_j + Σ_c T_c P_c, ∂K/∂ω_j = [1 | [R_j]] P_j
    (∂K/∂ω0 = P_0[:3], ∂K/∂V0 = P_0[3:]); its rate is [1 | [R_j]] Ṗ_j with Ṗ_j = μ̇_j + Σ_c (Ṫ_c P_c + T_c Ṗ_c),
    μ̇_b at u̇ = 0 and Ṫ_c from Ȧ_c = A_c [ω_c]. The E-term stacks B(α, i), A(α, i) (48)–(53) follow the partials'
    recursion from their seeds B(i, i) (50), A(i, i) (52), so E_i = [B(i, i) | A(i, i)] P_i. A prismatic joint's
    block is (d/dt + [Ω_j]) ∂K/∂v_j with ∂K/∂v_j = P_j[3:], and its Ṫ_j = [[0, A_j [v_j]], [0, 0]] (module
    docstring)."""
    ints, path, offset, com, mass, inertia = model.tree, model.path, data.offsets, model.com, model.mass, model.inertia
    relative, S, T = data.relative, data.S, data.joint_maps
    P, P_rate = data.subtree_momentum, data.subtree_momentum_rate
    omega, velocity, rel = data.angular_velocity, data.linear_velocity, data.relative_angular_velocity
    omega_dot, velocity_dot, h = data.angular_velocity_bias_rate, data.linear_velocity_bias_rate, data.nle
    _bias_accelerations(model, data)
    nb = ints.shape[0]
    for b in range(nb):
        mat_vec(inertia[b], omega[b], P[b, :3])
        mat_vec(inertia[b], omega_dot[b], P_rate[b, :3])
        for i in range(3):
            P[b, 3 + i] = mass[b] * velocity[b, i]
            P_rate[b, 3 + i] = mass[b] * velocity_dot[b, i]
    T_rate, rx, Rx, w_hat, A_rate = data.joint_map_rate, data.offset_hat, data.com_hat, data.matrix, data.product
    for b in range(nb - 1, 0, -1):      # children before parents
        p = ints[b, PARENT]
        if ints[b, SLIDE] == 1:
            T_rate[:, :] = 0.0
            hat_into(data.relative_linear_velocity[b], w_hat)
            mat_mul(relative[b], w_hat, T_rate[:3, 3:])
        else:
            hat_into(rel[b], w_hat)
            mat_mul(relative[b], w_hat, A_rate)
            hat_into(offset[b], rx)
            hat_into(com[b], Rx)
            _joint_map(A_rate, rx, Rx, T_rate)
        _spatial_mat_vec_add(T_rate, P[b], P_rate[p])
        _spatial_mat_vec_add(T[b], P_rate[b], P_rate[p])
        _spatial_mat_vec_add(T[b], P[b], P[p])
    # ∂K/∂w and the left-hand sides per w block (block 0 V0, 1 ω0, 1 + link)
    momentum = data.momentum_partials
    terms = data.momentum_terms
    copy_into(P[0, 3:], momentum[0])
    copy_into(P[0, :3], momentum[1])
    copy_into(P_rate[0, 3:], terms[0])
    copy_into(P_rate[0, :3], terms[1])
    for b in range(1, nb):
        if ints[b, SLIDE] == 1:
            copy_into(P[b, 3:], momentum[1 + b])
            copy_into(P_rate[b, 3:], terms[1 + b])
            cross_add(omega[b], momentum[1 + b], terms[1 + b])
            continue
        copy_into(P[b, :3], momentum[1 + b])
        cross_add(com[b], P[b, 3:], momentum[1 + b])
        copy_into(P_rate[b, :3], terms[1 + b])
        cross_add(com[b], P_rate[b, 3:], terms[1 + b])
    cross_add(omega[0], momentum[0], terms[0])
    cross_add(omega[0], momentum[1], terms[1])
    cross_add(velocity[0], momentum[0], terms[1])
    own_b, own_a, vector, carried_velocity = data.e_angular, data.e_linear, data.vector, data.carried_vector
    for b in range(1, nb):
        if ints[b, SLIDE] == 1:
            continue
        p = ints[b, PARENT]
        A = relative[b]
        cross_add(rel[b], momentum[1 + b], terms[1 + b])
        # E_b = B(b, b) (subtree I Ω part) + A(b, b) (subtree m V part), eqs. (47), (50), (52)
        hat_into(com[b], Rx)
        mat_t_vec(A, omega[p], vector)
        hat_into(vector, own_b)
        copy_into(velocity[p], carried_velocity)
        cross_add(omega[p], offset[b], carried_velocity)
        mat_t_vec(A, carried_velocity, vector)
        hat_into(vector, own_a)
        mat_mul_add(own_b, Rx, own_a)
        mat_vec_add(own_b, P[b, :3], terms[1 + b])
        mat_vec_add(own_a, P[b, 3:], terms[1 + b])
    h[:] = 0.0
    for i in range(6):      # the V0 and ω0 blocks
        h[i] = terms[i // 3, i % 3]
    for b in range(1, nb):
        _scatter(ints, path, S, b, 1 + ints[b, DEPTH], terms[1 + b], h)


@njit(inline="always", allocates=False)
def load_in_world(data, load_bodies, load_vectors, load_in_body, k):
    """Load ``k`` in the world at the configuration in ``data``, into the rows of ``data.load_world``: force (N),
    moment (N m), application point (m); returns its body. A load given in the body frame is turned by the
    body's rotation; a point given as NaN is the body's CoM, any other is in the body frame from its origin
    (:func:`pack_loads`)."""
    b = load_bodies[k]
    R, world = data.oRi[b], data.load_world
    if load_in_body[k] == 1:
        mat_vec(R, load_vectors[k, 0], world[0])
        mat_vec(R, load_vectors[k, 1], world[1])
    else:
        copy_into(load_vectors[k, 0], world[0])
        copy_into(load_vectors[k, 1], world[1])
    if math.isnan(load_vectors[k, 2, 0]):
        copy_into(data.com_positions[b], world[2])
    else:
        mat_vec(R, load_vectors[k, 2], world[2])
        for i in range(3):
            world[2, i] += data.oPi[b, i]
    return b


@njit(inline="always", allocates=False)
def applied_forces(model, data, torques, load_bodies, load_vectors, load_in_body):
    """Q = Gᵀ [F0; M0; M_i] of the loads plus the joint torques; also each body's world force in data.body_force.

    F0, M0: total force and moment about the base CoM (base frame); M_i: moment about joint i of the loads on
    link i and every link outboard of it (link frame), or for a prismatic joint their total force (link frame)."""
    ints, path = model.tree, model.path
    rotations, positions, origins, S, Q = data.oRi, data.com_positions, data.oPi, data.S, data.tau
    body_force, w_forces = data.body_force, data.block_forces
    world, lever, moment_about, turned = data.load_world, data.vector, data.carried_vector, data.moved_vector
    force, moment, point = world[0], world[1], world[2]
    nb = ints.shape[0]
    w_forces[:] = 0.0
    body_force[:] = 0.0
    for k in range(load_bodies.shape[0]):
        b = load_in_world(data, load_bodies, load_vectors, load_in_body, k)
        mat_t_vec(rotations[0], force, turned)
        for i in range(3):
            body_force[b, i] += force[i]
            w_forces[0, i] += turned[i]
        # the moment about the base CoM, then about each joint on the way to b, in that body's frame
        for j in range(-1, ints[b, DEPTH]):
            i = 0 if j < 0 else path[b, j]
            if ints[i, SLIDE] == 1:
                mat_t_vec(rotations[i], force, turned)
                for m in range(3):
                    w_forces[1 + i, m] += turned[m]
                continue
            centre = positions[0] if j < 0 else origins[i]
            for m in range(3):
                lever[m] = point[m] - centre[m]
            copy_into(moment, moment_about)
            cross_add(lever, force, moment_about)
            mat_t_vec(rotations[i], moment_about, turned)
            for m in range(3):
                w_forces[1 + i, m] += turned[m]
    Q[:] = 0.0
    for i in range(6):      # the V0 and ω0 blocks
        Q[i] = w_forces[i // 3, i % 3]
    copy_into(torques, Q[6:])
    for b in range(1, nb):
        _scatter(ints, path, S, b, 1 + ints[b, DEPTH], w_forces[1 + b], Q)


@njit(allocates=False)
def _arm_size(arm_rates, a):
    """Number of joint rates of arm ``a`` (its row of ``arm_rates`` is -1 padded)."""
    n = 0
    while n < arm_rates.shape[1] and arm_rates[a, n] >= 0:
        n += 1
    return n


@njit(inline="always", allocates=False)
def solve_by_arms(model, data):
    """u̇ = M⁻¹ (Q − h) into ``data.ddq`` by block elimination (eq. (39)): each arm's block factored alone, then
    the 6x6 base Schur complement; arms couple only through the base, so the cost is linear in the number of
    arms. Returns False if a block is not positive definite."""
    arm_rates, M, rhs, out = model.arm_rates, data.M, data.rhs, data.ddq
    for i in range(rhs.shape[0]):
        rhs[i] = data.tau[i] - data.nle[i]
    schur, base, solved, storage = data.schur, data.base_solution, data.arm_solutions, data.arm_block
    matrix_copy_into(M[:6, :6], schur)
    copy_into(rhs[:6], base[:, 0])
    arms = arm_rates.shape[0]
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
        if not cholesky_solve(block, right):
            return False
        for k in range(n):
            for i in range(6):
                coupling = M[rows[k], i]
                for j in range(6):
                    schur[i, j] -= coupling * right[k, j]
                base[i, 0] -= coupling * right[k, 6]
    if not cholesky_solve(schur, base):
        return False
    copy_into(base[:, 0], out[:6])
    for a in range(arms):
        for k in range(_arm_size(arm_rates, a)):
            value = solved[a, k, 6]
            for j in range(6):
                value -= solved[a, k, j] * out[j]
            out[arm_rates[a, k]] = value
    return True


@njit(inline="always", allocates=False)
def solve_folded(model, data):
    """u̇ = S ẋ with Sᵀ M S ẋ = Sᵀ (Q − h) into ``data.ddq`` (the mimic joints' fold, :func:`_fold`): S has one
    nonzero per row, so each product is a scatter onto the leaders' columns; one dense Cholesky of the
    independent rates' matrix (a robot with mimic joints is small: Baxter's is 23 x 23). Returns False if it is not
    positive definite."""
    fold, gain, M, A, x = model.fold, model.fold_gain, data.M, data.folded_mass, data.folded_rhs
    A[:, :] = 0.0
    x[:, 0] = 0.0
    for i in range(fold.shape[0]):
        x[fold[i], 0] += gain[i] * (data.tau[i] - data.nle[i])
        for j in range(fold.shape[0]):
            A[fold[i], fold[j]] += gain[i] * gain[j] * M[i, j]
    if not cholesky_solve(A, x):
        return False
    for i in range(fold.shape[0]):
        data.ddq[i] = gain[i] * x[fold[i], 0]
    return True


@njit(inline="always", allocates=False)
def solve_accelerations(model, data):
    """u̇ = M⁻¹ (Q − h) into ``data.ddq``: by arms (:func:`solve_by_arms`), or folded when the robot has mimic
    joints (:func:`solve_folded`: their coupling crosses the arms' blocks). False if M is not positive definite."""
    if data.folded_mass.shape[0] < data.M.shape[0]:
        return solve_folded(model, data)
    return solve_by_arms(model, data)


@njit(allocates=False)
def _forward_kinematics(model, data, base_q, joint_q, angles, base_position, u):
    """Poses (:func:`configuration`) and velocities (:func:`velocities`) into ``data`` at the configuration (base
    attitude ``base_q``, spherical joints' ``joint_q`` (quaternions [w, x, y, z]), other joints' ``angles`` (rad),
    base CoM ``base_position`` (m, world)) and quasi-velocities ``u`` = [V0, ω0, joint rates]."""
    configuration(model, data, base_q, joint_q, angles, base_position)
    velocities(model, data, u)


@njit(allocates=False)
def _equation_terms(model, data, base_q, joint_q, angles, base_position, u, torques, load_bodies, load_vectors,
                    load_in_body):
    """M, h and Q of M u̇ + h = Q into ``data.M``, ``data.nle``, ``data.tau`` (and the poses and velocities) at
    the state of :func:`_forward_kinematics` under joint ``torques`` and the loads of :func:`pack_loads`."""
    configuration(model, data, base_q, joint_q, angles, base_position)
    partial_derivatives(model, data)
    mass_matrix(model, data)
    copy_into(u, data.v)
    velocities(model, data, u)
    bias_forces(model, data)
    applied_forces(model, data, torques, load_bodies, load_vectors, load_in_body)


@njit(allocates=False)
def _forward_dynamics(model, data, base_q, joint_q, angles, base_position, u, torques, load_bodies, load_vectors,
                      load_in_body):
    """u̇ = M⁻¹ (Q − h) into ``data.ddq`` at the state of :func:`_equation_terms`. Returns a status code (OK when
    solved, NOT_POSITIVE_DEFINITE when M is not)."""
    _equation_terms(model, data, base_q, joint_q, angles, base_position, u, torques, load_bodies, load_vectors,
                    load_in_body)
    if not solve_accelerations(model, data):
        return NOT_POSITIVE_DEFINITE
    return OK


@njit
def _bound_forward_kinematics(binding, base_q, joint_q, angles, base_position, u):
    """:func:`_forward_kinematics` of a :class:`Binding` (the callers in Python)."""
    _forward_kinematics(binding.model, binding.data, base_q, joint_q, angles, base_position, u)


@njit
def _bound_equation_terms(binding, base_q, joint_q, angles, base_position, u, torques, load_bodies, load_vectors,
                          load_in_body):
    """:func:`_equation_terms` of a :class:`Binding`."""
    _equation_terms(binding.model, binding.data, base_q, joint_q, angles, base_position, u, torques, load_bodies,
                    load_vectors, load_in_body)


@njit
def _bound_forward_dynamics(binding, base_q, joint_q, angles, base_position, u, torques, load_bodies, load_vectors,
                            load_in_body):
    """:func:`_forward_dynamics` of a :class:`Binding`."""
    return _forward_dynamics(binding.model, binding.data, base_q, joint_q, angles, base_position, u, torques,
                             load_bodies, load_vectors, load_in_body)


def check_status(status: int, robot: SpaceRobot, what: str) -> None:
    """Raise the error a kernel's status code stands for."""
    if status == NOT_POSITIVE_DEFINITE:
        raise ModelError(f"robot '{robot.name}': the mass matrix is not positive definite ({what})")
    if status == NOT_FINITE:
        raise ConvergenceError(f"{what} produced non-finite values")


class Shared(NamedTuple):
    """A robot's model, a data and their :class:`Binding` (:func:`shared`)."""

    model: Model
    data: Data
    binding: Binding


_SHARED: "weakref.WeakKeyDictionary[SpaceRobot, Shared]" = weakref.WeakKeyDictionary()


def shared(robot: SpaceRobot) -> Shared:
    """The :class:`Shared` model, data and :class:`Binding` of ``robot``, built on first use and kept while the
    robot lives.

    For the one-off evaluations of :mod:`.recursive` and :mod:`.kinematics` (one thread); a
    :class:`~discrete_robot.space.simulation.Simulator` owns its own data.
    """
    if robot not in _SHARED:
        _SHARED[robot] = bind_robot(robot)
    return _SHARED[robot]


def bind_robot(robot: SpaceRobot) -> Shared:
    """``robot``'s model, a new data and their :class:`Binding` (a caller's own, e.g. a dynamics front door data's)."""
    model = compile_model(robot)
    data = create_data(model)
    return Shared(model, data, bind(model, data))
