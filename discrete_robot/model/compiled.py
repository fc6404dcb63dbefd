"""The fixed-base rigid-body terms a(q), V(q), ∂a/∂q, ∂V/∂q as one compiled kernel (Model/Data layout).

The formulation is :class:`discrete_robot.model.dynamics.RigidBodySystem`'s (whose docstrings give the
derivations), evaluated by a numba kernel over flat arrays: per-call numpy overhead (hundreds of small
operations of ~1 µs each) otherwise costs far more than the arithmetic.

For a configuration q, in the frame of each arm's first link (so that nothing depends on that link's first
coordinate: a cyclic first joint leaves a(q) bit-for-bit unchanged):

- link poses by composing the joints' local transforms along the tree; each DOF's twist ξ_k = (o_k × z_k, z_k)
  (revolute) or (z_k, 0) (prismatic) from its axis z_k through the joint origin o_k;
- each link's spatial inertia about the frame origin G_i = [[m E, −m ĉ], [m ĉ, I_c − m ĉ ĉ]] and the composite
  inertias G^c of the subtrees (one backward pass), each kept as its ten numbers (m, m c, the rotational block):
  G is linear in them, and applying it to a twist costs fewer products than the 6×6 matrix;
- a_ab = ξ_aᵀ G^c_b ξ_b for DOF a before-or-equal DOF b on a path from the base (composite rigid body), 0 for
  DOFs on different branches, evaluated about the composite's own CoM c̄ (:func:`_composite_about_com`):
  a_ab = m^c v_a(c̄)·v_b(c̄) + ω_aᵀ I^c ω_b, every term of the subtree's own size. About the frame origin the
  same number is a sum of terms of size m |c|² (up to 1 kg m² on the wrist of a UR5-sized arm) that cancel down
  to the wrist's 1e-4 kg m²: its round-off was 2000 of its own ε, and at wrist speeds of 80 rad/s that was the
  floor of the discrete model's T + V drift;
- V = −Σ_i m_i gᵀ c_i with g expressed in each link's reference frame;
- ∂a_ab/∂q_k by Park's Lie-bracket formula (three cases, see ``RigidBodySystem.mass_matrix_derivatives``) and
  ∂V/∂q_k = −gᵀ (G^c_k ξ_k)_linear;
- on request, a(q + δ e_k) − a(q) and V(q + δ e_k) − V(q) for a DOF k that turns or slides its subtree
  rigidly (:func:`_edge_difference`): products of the turn D = Rot(z_k, δ) − E with terms of their own size,
  without the cancellation (ε |a| / |δ| of the quotient) of subtracting two evaluations: the discrete step's
  divided differences along its paths' edges;
- on request, the gradient ∂/∂q [V − ½ uᵀ a(q) w] for two rate vectors u, w in O(n) (the subtrees' momenta,
  :func:`_lagrangian_gradient`): what the discrete step's Newton Jacobian needs at every vertex, where ∂a/∂q
  costs O(n³);
- sin and cos of each angle are kept for the last two angles met (:func:`_sine`): the discrete step's vertices
  take each coordinate from q(k) or q(k+1), and the trigonometry was 12–19 % of a configuration's cost.

Model/Data (as Pinocchio's): :func:`compile_model` flattens a :class:`RobotModel` into a :class:`Model` (built once
per model and cached): per link its parent (parents first), first DOF and DOF count, joint rotation and origin,
CoM, mass and inertia; per DOF its link, axis and kind; the before-or-equal relation of the DOFs; gravity.
:func:`create_data` allocates a :class:`Data` for a batch of B configurations: the results (``M``,
``potential_energy``, ``dM``, ``g``) and every array the kernel works in, so :func:`rigid_body_terms` allocates
nothing. One Data per thread. Usage::

    model = compile_model(load_model("config/arm_6dof.yaml"))
    data = create_data(model, batch=1, derivatives=True)
    rigid_body_terms(model, data, q[None], True)       # q (n,): data.M[0], data.g[0] = ∂V/∂q, data.dM[0]

From Python, numba types a NamedTuple argument in Python at every call (~1 µs per array it holds; a plain array
takes its C fast path): callers that call often pass a :class:`Binding` of the two instead
(:class:`Evaluator` keeps them for any batch).
"""

import functools
import math
import threading
from typing import NamedTuple

import numpy as np

from discrete_robot.errors import ModelError
from discrete_robot.geometry3d import (
    copy_into,
    cross_into,
    mat_mul,
    mat_t_vec,
    mat_vec,
    matrix_copy_into,
    rotation_from_sine_into,
    turn_from_sine_into,
)
from discrete_robot.jit import Binding, bind, njit
from discrete_robot.model import mimic
from discrete_robot.model.description import RobotModel
from discrete_robot.model.kinematics import kinematic_tree
from discrete_robot.model.lagrangian import Terms

# columns of Model.links
PARENT, FIRST_DOF, NDOF = range(3)


class Model(NamedTuple):
    """A fixed-base :class:`RobotModel` as flat arrays (SI units; see the module docstring)."""

    links: np.ndarray            # (L, 3) int64: parent (-1 = the base), first DOF, DOF count
    joint_rotation: np.ndarray   # (L, 3, 3): parent -> joint frame at zero joint angles
    joint_origin: np.ndarray     # (L, 3): joint origin in the parent's frame, m
    com: np.ndarray              # (L, 3): CoM in the link frame, m
    mass: np.ndarray             # (L,), kg
    inertia: np.ndarray          # (L, 3, 3): about the CoM, link frame, kg m²
    dof_link: np.ndarray         # (n,) int64
    prismatic: np.ndarray        # (n,) bool
    axes: np.ndarray             # (n, 3): each DOF's unit axis in its joint frame (after the DOFs before it)
    before_eq: np.ndarray        # (n, n) bool: [k, a] = DOF k is DOF a or moves DOF a's axis
    gravity: np.ndarray          # (3,), world, m/s²
    # mimic followers (F of them, the tree's last F DOFs: n = n_model + F; F = 0 without mimic joints), see
    # :mod:`.mimic`: follower f's coordinate is multiplier[f] · q[leader[f]] + offset[f]
    follower_leader: np.ndarray      # (F,) int64: the leader's column among the model's n_model coordinates
    follower_multiplier: np.ndarray  # (F,)
    follower_offset: np.ndarray      # (F,), rad or m


def model_dof(model: Model) -> int:
    """The number of the model's own coordinates (its DOFs without the mimic followers): the size of q and of the
    results."""
    return model.dof_link.shape[0] - model.follower_leader.shape[0]


class Data(NamedTuple):
    """The results of :func:`rigid_body_terms` for a batch of B configurations, and its workspace (one
    configuration's; "reference frame": each link's arm's first link, see the module docstring). n: the model's
    own coordinates, n̄ = n + F with the mimic followers (the tree's DOFs)."""

    M: np.ndarray                # (B, n, n): the mass matrix a(q) (Pinocchio's M), kg m² (kg for prismatic DOFs)
    potential_energy: np.ndarray  # (B,): V(q), J (Pinocchio's potential_energy)
    dM: np.ndarray  # noqa: N815  (B, n, n, n): [b, k, i, j] = ∂a_ij/∂q_k ((0, n, n, n) without derivatives)
    g: np.ndarray                # (B, n): ∂V/∂q, the generalised gravity (Pinocchio's g), N m or N
    derivative_rows: np.ndarray  # (B, n) bool: [b, k] = write dM[b, k] and g[b, k] (create_data: all True)
    mass_wanted: np.ndarray      # (B,) bool: [b] = write M[b] (create_data: all True)
    oRi: np.ndarray  # noqa: N815  (L, 3, 3): link rotations in the reference frame (Pinocchio's oMi rotations)
    oPi: np.ndarray  # noqa: N815  (L, 3): link origins in the reference frame (oMi translations), m
    reference_rotation: np.ndarray  # (L, 3, 3): each link's reference frame in the world
    reference_origin: np.ndarray    # (L, 3): ... and its origin, m
    link_com: np.ndarray         # (L, 3): each link's CoM in the reference frame, m
    dof_axis: np.ndarray         # (n, 3): each DOF's axis z_k in the reference frame
    dof_point: np.ndarray        # (n, 3): a point o_k on it, m
    matrix_scratch: np.ndarray   # (4, 3, 3)
    vector_scratch: np.ndarray   # (2, 3)
    twist: np.ndarray            # (n, 6): ξ_k = (v, ω)
    composite_mass: np.ndarray   # (L,): the subtrees' composite G^c (see _body_inertia): m^c, kg
    composite_moment: np.ndarray  # (L, 3): h = m^c c̄, kg m
    composite_origin_inertia: np.ndarray  # (L, 3, 3): J, the rotational block about the frame origin, kg m²
    composite_com: np.ndarray    # (L, 3): c̄, the subtrees' CoMs (Pinocchio's com), m
    composite_inertia: np.ndarray  # (L, 3, 3): I^c about c̄, kg m²
    inertia_twist: np.ndarray    # (n, n, 6): [k, b] = G^c_k ξ_b (G^c of DOF k's link; b = k or b before k)
    twist_bracket: np.ndarray    # (n, n, 6): [k, a] = ad_{ξ_k} ξ_a (a before k)
    local_gravity: np.ndarray    # (3,): gravity in a reference frame, m/s²
    # the Lagrangian's gradient for a pair of rates (rigid_body_terms' ``gradient``)
    rates: np.ndarray            # (2, n): the rates u and w (input), rad/s or m/s
    lagrangian_gradient: np.ndarray  # (B, n): ∂/∂q [V − ½ uᵀ a(q) w], N m or N
    gradient_rows: np.ndarray    # (B, n) bool: [b, k] = write lagrangian_gradient[b, k] (create_data: all True)
    link_velocity: np.ndarray    # (2, L, 6): each link's twist under u and under w
    link_momentum: np.ndarray    # (2, L, 6): G_i V_i, then summed over each link's subtree
    rate_scratch: np.ndarray     # (3, 6)
    trig: np.ndarray             # (n̄, 2, 3): each DOF's last two angles and their sine and 1 − cosine (_sine)
    frames_q: np.ndarray         # (n̄,): the configuration whose link frames the arrays above hold (NaN: none)
    # with mimic followers, the tree's terms before the fold (size 0 without them)
    tree_q: np.ndarray           # (n̄,): q̄ = S q + c
    tree_M: np.ndarray  # noqa: N815  (1, n̄, n̄): ā(q̄)
    tree_dM: np.ndarray  # noqa: N815  (1, n̄, n̄, n̄): ∂ā/∂q̄ (size 0 without derivatives)
    tree_g: np.ndarray           # (1, n̄): ∂V̄/∂q̄
    tree_rows: np.ndarray        # (1, n̄) bool: the rows of ∂ā/∂q̄ and ∂V̄/∂q̄ to write
    tree_rates: np.ndarray       # (2, n̄): ū = S u, w̄ = S w
    tree_gradient: np.ndarray    # (1, n̄): ∂/∂q̄ [V̄ − ½ ūᵀ ā w̄]
    tree_gradient_rows: np.ndarray   # (1, n̄) bool: its rows to write
    # edges (rigid_body_terms' edge requests): up to two per configuration, each a DOF k and a step δ asking for
    # a(q + δ e_k) − a(q) and V(q + δ e_k) − V(q) without the cancellation of the difference (_edge_difference)
    edge_dof: np.ndarray         # (B, 2) int64: the DOF k of each request, −1 for none (create_data: none)
    edge_step: np.ndarray        # (B, 2): its δ, rad or m
    edge_dM: np.ndarray  # noqa: N815  (B, 2, n, n): a(q + δ e_k) − a(q)
    edge_dV: np.ndarray  # noqa: N815  (B, 2): V(q + δ e_k) − V(q), J
    tree_edge: np.ndarray        # (n̄, n̄): the tree's difference before the fold (size 0 without followers)


@functools.lru_cache(maxsize=32)
def compile_model(model: RobotModel) -> Model:
    """Flatten a fixed-base ``model`` into a :class:`Model` (cached per model); mimic followers as the tree's last
    DOFs with their leader, multiplier and offset (:func:`.mimic.expanded`)."""
    if model.base.floating:
        raise ModelError(f"model '{model.name}': a compiled arm needs a fixed base")
    leaders = np.array([model.joint_names.index(m.leader) for m in model.mimic], dtype=np.int64)
    multipliers = np.array([m.multiplier for m in model.mimic], dtype=float)
    offsets = np.array([m.offset for m in model.mimic], dtype=float)
    if model.mimic:
        model = mimic.expanded(model)[0]
    tree = kinematic_tree(model)
    parents = np.array(model.parent_index, dtype=np.int64)
    if np.any(parents >= np.arange(len(parents))):
        raise ModelError(f"model '{model.name}': links must be listed parents first")
    links = np.array([(parent, sl.start, sl.stop - sl.start) for parent, sl in zip(parents, model.dof_slices,
                                                                                    strict=True)], dtype=np.int64)
    return Model(
        links=links,
        joint_rotation=np.array([link.joint.rotation for link in model.links], dtype=float).reshape(-1, 3, 3),
        joint_origin=np.array([link.joint.origin for link in model.links], dtype=float).reshape(-1, 3),
        com=tree.coms.astype(float), mass=tree.masses.astype(float), inertia=tree.inertias.astype(float),
        dof_link=tree.dof_link.astype(np.int64), prismatic=tree.prismatic.copy(), axes=tree.axes.astype(float),
        before_eq=tree.precedes | np.eye(tree.n, dtype=bool), gravity=np.asarray(model.gravity, dtype=float),
        follower_leader=leaders, follower_multiplier=multipliers, follower_offset=offsets)


def create_data(model: Model, batch: int, derivatives: bool) -> Data:
    """A :class:`Data` for ``batch`` configurations; ``derivatives``: room for ∂a/∂q and ∂V/∂q."""
    L, n, m = model.links.shape[0], model.dof_link.shape[0], model_dof(model)
    rows = batch if derivatives else 0
    t = n if n > m else 0               # the tree's work arrays: only with mimic followers
    return Data(M=np.empty((batch, m, m)), potential_energy=np.empty(batch), dM=np.empty((rows, m, m, m)),
                g=np.empty((rows, m)), derivative_rows=np.ones((rows, m), dtype=np.bool_),
                mass_wanted=np.ones(batch, dtype=np.bool_), oRi=np.empty((L, 3, 3)),
                oPi=np.empty((L, 3)),
                reference_rotation=np.empty((L, 3, 3)), reference_origin=np.empty((L, 3)),
                link_com=np.empty((L, 3)), dof_axis=np.empty((n, 3)), dof_point=np.empty((n, 3)),
                matrix_scratch=np.empty((4, 3, 3)), vector_scratch=np.empty((2, 3)), twist=np.empty((n, 6)),
                composite_mass=np.empty(L), composite_moment=np.empty((L, 3)),
                composite_origin_inertia=np.empty((L, 3, 3)), composite_com=np.empty((L, 3)),
                composite_inertia=np.empty((L, 3, 3)), inertia_twist=np.empty((n, n, 6)),
                twist_bracket=np.empty((n, n, 6)), local_gravity=np.empty(3), rates=np.zeros((2, m)),
                lagrangian_gradient=np.empty((batch, m)), gradient_rows=np.ones((batch, m), dtype=np.bool_),
                link_velocity=np.empty((2, L, 6)),
                link_momentum=np.empty((2, L, 6)), rate_scratch=np.empty((3, 6)),
                trig=np.full((n, 2, 3), np.nan), frames_q=np.full(n, np.nan), tree_q=np.empty(t),
                tree_M=np.empty((1, t, t)), tree_dM=np.empty((1 if derivatives and t else 0, t, t, t)),
                tree_g=np.empty((1, t)), tree_rows=np.ones((1, t), dtype=np.bool_), tree_rates=np.empty((2, t)),
                tree_gradient=np.empty((1, t)), tree_gradient_rows=np.ones((1, t), dtype=np.bool_),
                edge_dof=np.full((batch, 2), -1, dtype=np.int64), edge_step=np.zeros((batch, 2)),
                edge_dM=np.empty((batch, 2, m, m)), edge_dV=np.empty((batch, 2)), tree_edge=np.empty((t, t)))


@njit(allocates=False)
def _identity(out):
    out[:] = 0.0
    out[0, 0] = out[1, 1] = out[2, 2] = 1.0


@njit(allocates=False)
def _sine(trig, k, angle):
    """(sin θ, 1 − cos θ) of DOF k's angle θ, from ``trig`` (n, 2, 3), the last two angles met and their pair:
    the discrete step evaluates vertices whose coordinates are each q(k) or q(k+1), and sin and cos were 12–19 %
    of a configuration's cost (Panda, arm_6dof). Equal angles give the very same numbers: bit for bit unchanged."""
    for slot in range(2):
        if trig[k, slot, 0] == angle:
            return trig[k, slot, 1], trig[k, slot, 2]
    s, v = math.sin(angle), 1.0 - math.cos(angle)
    for x in range(3):
        trig[k, 1, x] = trig[k, 0, x]
    trig[k, 0, 0], trig[k, 0, 1], trig[k, 0, 2] = angle, s, v
    return s, v


@njit(allocates=False)
def _first_changed_link(links, q, held):
    """The first link (parents first) with a DOF whose coordinate in q differs from ``held``, the configuration
    whose frames the workspace holds (NaN: none), which becomes q; the number of links when none does. A link's
    frame depends on its ancestors' coordinates alone, which come before it: the links before this one keep their
    frames. The discrete step's path vertices differ from the one evaluated before in one coordinate each, so a
    chain's vertex costs the links from that coordinate's on (on arm_6dof, 40 of the 66 links of the 11 vertices
    after q(k))."""
    start = links.shape[0]
    for i in range(links.shape[0] - 1, -1, -1):
        for k in range(links[i, 1], links[i, 1] + links[i, 2]):
            if q[k] != held[k]:         # NaN (nothing held) differs too
                start = i
            held[k] = q[k]
    return start


@njit(allocates=False)
def _link_frames(links, joint_rotation, joint_origin, com, prismatic, axes, q, R, p, c, ref_R, ref_p, axis, point,
                 scratch, vectors, trig, start=0):
    """Link rotations R and origins p, CoMs c, each link's reference pose (ref_R, ref_p: its arm's first link in
    the world) and each DOF's axis and a point on it, all in the reference frames, for one configuration q, from
    link ``start`` on (the links before it hold q's already: :func:`_first_changed_link`). ``scratch`` (4, 3, 3)
    and ``vectors`` (2, 3): workspace; ``trig``: :func:`_sine`'s. (Called once per configuration: it takes the
    arrays, as the other per-configuration helpers do, rather than the whole Model and Data, which numba passes
    field by field.)"""
    local_R, turn, product, later = scratch[0], scratch[1], scratch[2], scratch[3]
    local_p, v = vectors[0], vectors[1]
    for i in range(start, links.shape[0]):
        parent, first, ndof = links[i, 0], links[i, 1], links[i, 2]
        matrix_copy_into(joint_rotation[i], local_R)
        copy_into(joint_origin[i], local_p)
        for k in range(first, first + ndof):
            mat_vec(local_R, axes[k], axis[k])             # in the parent's frame, for now
            if prismatic[k]:
                for x in range(3):
                    local_p[x] += axis[k, x] * q[k]
            else:
                s, c1 = _sine(trig, k, q[k])
                rotation_from_sine_into(axes[k], s, c1, turn)
                mat_mul(local_R, turn, product)
                matrix_copy_into(product, local_R)
        if parent < 0:
            # the arm's own frame: the link sits at its origin and its axes do not depend on its first coordinate
            matrix_copy_into(local_R, ref_R[i])
            copy_into(local_p, ref_p[i])
            _identity(R[i])
            p[i] = 0.0
            _identity(later)
            for k in range(first + ndof - 1, first - 1, -1):
                mat_t_vec(later, axes[k], axis[k])
                point[k] = 0.0
                if not prismatic[k]:
                    s, c1 = _sine(trig, k, q[k])
                    rotation_from_sine_into(axes[k], s, c1, turn)
                    mat_mul(turn, later, product)
                    matrix_copy_into(product, later)
        else:
            matrix_copy_into(ref_R[parent], ref_R[i])
            copy_into(ref_p[parent], ref_p[i])
            mat_mul(R[parent], local_R, R[i])
            mat_vec(R[parent], local_p, v)
            mat_vec(R[parent], joint_origin[i], local_p)
            for x in range(3):
                p[i, x] = v[x] + p[parent, x]
                local_p[x] += p[parent, x]
            for k in range(first, first + ndof):
                mat_vec(R[parent], axis[k], v)
                copy_into(v, axis[k])
                copy_into(local_p, point[k])
        mat_vec(R[i], com[i], v)
        for x in range(3):
            c[i, x] = v[x] + p[i, x]


@njit(allocates=False)
def _twist(prismatic, axis, point, k, out):
    """ξ_k = (o_k × z_k, z_k) for a revolute DOF, (z_k, 0) for a prismatic one."""
    if prismatic[k]:
        copy_into(axis[k], out[:3])
        out[3:] = 0.0
    else:
        cross_into(point[k], axis[k], out[:3])
        copy_into(axis[k], out[3:])


@njit(allocates=False)
def _body_inertia(m, c, R, I_body, h, J):
    """The link's spatial inertia about the frame origin, G = [[m E, −ĥ], [ĥ, J]], as its ten numbers: the mass m,
    the first moment h = m c and J = R I Rᵀ − m ĉ ĉ = R I Rᵀ + m (|c|² E − c cᵀ). Composites add them."""
    for i in range(3):
        h[i] = m * c[i]
    squared = c[0] * c[0] + c[1] * c[1] + c[2] * c[2]
    for i in range(3):
        RI0 = R[i, 0] * I_body[0, 0] + R[i, 1] * I_body[1, 0] + R[i, 2] * I_body[2, 0]
        RI1 = R[i, 0] * I_body[0, 1] + R[i, 1] * I_body[1, 1] + R[i, 2] * I_body[2, 1]
        RI2 = R[i, 0] * I_body[0, 2] + R[i, 1] * I_body[1, 2] + R[i, 2] * I_body[2, 2]
        for j in range(i, 3):
            value = RI0 * R[j, 0] + RI1 * R[j, 1] + RI2 * R[j, 2] + m * ((squared if i == j else 0.0) - c[i] * c[j])
            J[i, j] = value
            J[j, i] = value


@njit(allocates=False)
def _linear_momentum(m, h, xi):
    """The linear part of G ξ (below), m v − h × ω: it needs only the mass and the first moment."""
    return (m * xi[0] - (h[1] * xi[5] - h[2] * xi[4]), m * xi[1] - (h[2] * xi[3] - h[0] * xi[5]),
            m * xi[2] - (h[0] * xi[4] - h[1] * xi[3]))


@njit(allocates=False)
def _apply_inertia(m, h, J, xi, out):
    """G ξ for G = [[m E, −ĥ], [ĥ, J]] and the twist ξ = (v, ω): (m v − h × ω, h × v + J ω)."""
    v0, v1, v2, w0, w1, w2 = xi[0], xi[1], xi[2], xi[3], xi[4], xi[5]
    out[0], out[1], out[2] = _linear_momentum(m, h, xi)
    out[3] = h[1] * v2 - h[2] * v1 + J[0, 0] * w0 + J[0, 1] * w1 + J[0, 2] * w2
    out[4] = h[2] * v0 - h[0] * v2 + J[1, 0] * w0 + J[1, 1] * w1 + J[1, 2] * w2
    out[5] = h[0] * v1 - h[1] * v0 + J[2, 0] * w0 + J[2, 1] * w1 + J[2, 2] * w2


@njit(allocates=False)
def _composite_about_com(links, mass, inertia, R, c, mc, h, cbar, Ic, vectors):
    """Each subtree's CoM c̄ = h / m^c (its own link's CoM when massless) into ``cbar`` (L, 3) and its rotational
    inertia about c̄ into ``Ic`` (L, 3, 3): Ic_i = R_i I_i R_iᵀ + m_i S(c_i − c̄_i) + Σ_children [Ic_ch
    + m^c_ch S(c̄_ch − c̄_i)] with S(d) = |d|² E − d dᵀ (parallel axes), so every term is of the subtree's own
    size. ``mc``, ``h``: the composites' masses and first moments; ``vectors`` (2, 3): workspace."""
    L = links.shape[0]
    d = vectors[0]
    for i in range(L):
        for x in range(3):
            cbar[i, x] = h[i, x] / mc[i] if mc[i] > 0.0 else c[i, x]
            d[x] = c[i, x] - cbar[i, x]
        _body_inertia(mass[i], d, R[i], inertia[i], vectors[1], Ic[i])
    for i in range(L - 1, -1, -1):                      # children come after their parents
        parent = links[i, 0]
        if parent < 0:
            continue
        for x in range(3):
            d[x] = cbar[i, x] - cbar[parent, x]
        squared = d[0] * d[0] + d[1] * d[1] + d[2] * d[2]
        for x in range(3):
            for y in range(3):
                Ic[parent, x, y] += Ic[i, x, y] + mc[i] * ((squared if x == y else 0.0) - d[x] * d[y])


@njit(allocates=False)
def _times(A, x0, x1, x2):
    """A x for a 3×3 A."""
    return (A[0, 0] * x0 + A[0, 1] * x1 + A[0, 2] * x2, A[1, 0] * x0 + A[1, 1] * x1 + A[1, 2] * x2,
            A[2, 0] * x0 + A[2, 1] * x1 + A[2, 2] * x2)


@njit(allocates=False)
def _point_velocity(prismatic, axis, point, j, x0, x1, x2):
    """v_j(x) (the velocity of the point x under DOF j's unit rate) and ω_j: (z_j × (x − o_j), z_j) for a revolute
    DOF, (z_j, 0) for a prismatic one."""
    z = axis[j]
    if prismatic[j]:
        return z[0], z[1], z[2], 0.0, 0.0, 0.0
    d0, d1, d2 = x0 - point[j, 0], x1 - point[j, 1], x2 - point[j, 2]
    return z[1] * d2 - z[2] * d1, z[2] * d0 - z[0] * d2, z[0] * d1 - z[1] * d0, z[0], z[1], z[2]


@njit(allocates=False)
def _mass_matrix(prismatic, axis, point, before_eq, dof_link, mc, cbar, Ic, out):
    """a (n, n) into ``out``: a_lo,hi = m v_lo(c̄)·v_hi(c̄) + ω_loᵀ I ω_hi for DOF lo before-or-equal DOF hi, with
    (m, c̄, I about c̄) the composite of hi's link and v_k(x) = z_k × (x − o_k) (revolute; z_k, ω_k = 0 when
    prismatic) the velocity of the point x under DOF k's unit rate; 0 for DOFs on different branches."""
    n = out.shape[0]
    out[...] = 0.0
    for hi in range(n):
        i = dof_link[hi]
        m, x0, x1, x2 = mc[i], cbar[i, 0], cbar[i, 1], cbar[i, 2]
        v0, v1, v2, z0, z1, z2 = _point_velocity(prismatic, axis, point, hi, x0, x1, x2)
        w0, w1, w2 = _times(Ic[i], z0, z1, z2)         # I ω_hi
        for lo in range(n):
            if not before_eq[lo, hi]:
                continue            # another branch, or lo after hi: that pair is (hi, lo)
            u0, u1, u2, a0, a1, a2 = _point_velocity(prismatic, axis, point, lo, x0, x1, x2)
            value = m * (u0 * v0 + u1 * v1 + u2 * v2)
            if not prismatic[lo]:
                value = value + a0 * w0 + a1 * w1 + a2 * w2
            out[lo, hi] = value
            out[hi, lo] = value


@njit(allocates=False)
def _edge_difference(prismatic, axis, point, before_eq, dof_link, mc, cbar, Ic, g, xi, k, delta, scratch, out):
    """a(q + δ e_k) − a(q) into ``out`` (n, n) and V(q + δ e_k) − V(q) returned (J), from the composites of q
    (:func:`_composite_about_com`), its axes, points and twists ``xi`` and gravity g in k's reference frame, for a
    DOF k that turns (or slides) the subtree of its link rigidly: what a divided difference of a and V along one
    edge of the discrete step's paths needs, computed without subtracting a(q) from a(q + δ e_k).

    That subtraction loses ε |a| / |δ| of the quotient (ε |V| / |δ| for V) to cancellation, which at the steps of
    an accurate run (δ ~ 1e-4 rad) is the error floor of the state. Here the motion is D = Rot(z_k, δ) − E about
    the axis z_k through o_k (s = sin δ and w = 1 − cos δ = 2 sin²(δ/2) without cancellation; a slide: every
    point moves by δ z_k, D = 0) and each term is a product of things of their own size with D or with a CoM's
    displacement e = D (c̄ − o_k), in the mass matrix's composite form a_lo,hi = m v_lo(c̄)·v_hi(c̄) + ω_loᵀ I ω_hi
    (:func:`_mass_matrix`):

    - lo and hi both turned with the subtree (k itself, or moved by k): the pair moves rigidly, 0;
    - hi turned, lo before k: v_hi(c̄) and I ω_hi turn (D v_hi, D I ω_hi), v_lo gains ω_lo × e;
    - hi before k (lo too): hi's composite holds k's, whose (m_S, c̄_S, I_S) turn: v_lo and v_hi gain ω × e_S
      and I_S becomes Rot I_S Rotᵀ (ΔI_S, once per edge);
    - V: −m_S g · e_S.

    Each difference is linear in lo's twist ξ_lo = (v⁰, ω) (v_lo(c̄) = v⁰ + ω × c̄): per hi, the pair (P, Q) with
    Δa_lo,hi = v⁰·P + ω·Q, P = m Δv_hi, Q = m (c̄ × Δv_hi + e × (v_hi + Δv_hi)) + ΔL (ΔL: D I ω_hi or ΔI ω_hi).

    Not for a root link's DOF when it has others (its reference frame turns the DOFs before it) or a DOF that
    followers mimic: the caller divides the difference of a and V there. ``scratch``: (3, 3, 3)."""
    n = out.shape[0]
    out[...] = 0.0
    z, o = axis[k], point[k]
    s = w = 0.0
    if not prismatic[k]:
        half = math.sin(0.5 * delta)
        s, w = math.sin(delta), 2.0 * half * half       # 1 − cos δ without its cancellation
    D, DI, dI = scratch[0], scratch[1], scratch[2]
    turn_from_sine_into(z, s, w, D)                     # 0 for a slide
    S = dof_link[k]
    if prismatic[k]:
        eS0, eS1, eS2 = delta * z[0], delta * z[1], delta * z[2]
    else:
        eS0, eS1, eS2 = _times(D, cbar[S, 0] - o[0], cbar[S, 1] - o[1], cbar[S, 2] - o[2])
    dV = -mc[S] * (g[0] * eS0 + g[1] * eS1 + g[2] * eS2)
    upstream = False                # some DOF before k: without one, a does not change (k's subtree is everything)
    for lo in range(k):
        upstream = upstream or before_eq[lo, k]
    if not upstream:
        return dV
    # ΔI_S = Rot I_S Rotᵀ − I_S = D I_S + (D I_S)ᵀ + D I_S Dᵀ
    mat_mul(D, Ic[S], DI)
    for a in range(3):
        for b in range(3):
            dI[a, b] = DI[a, b] + DI[b, a] + DI[a, 0] * D[b, 0] + DI[a, 1] * D[b, 1] + DI[a, 2] * D[b, 2]
    for hi in range(n):
        turned = before_eq[k, hi]
        if not turned and not before_eq[hi, k]:
            continue                            # another branch: its composite does not hold k's subtree
        i = dof_link[hi] if turned else S
        m, x0, x1, x2 = mc[i], cbar[i, 0], cbar[i, 1], cbar[i, 2]
        vh0, vh1, vh2, wh0, wh1, wh2 = _point_velocity(prismatic, axis, point, hi, x0, x1, x2)
        if turned:
            Icom = Ic[i]
            L0 = Icom[0, 0] * wh0 + Icom[0, 1] * wh1 + Icom[0, 2] * wh2
            L1 = Icom[1, 0] * wh0 + Icom[1, 1] * wh1 + Icom[1, 2] * wh2
            L2 = Icom[2, 0] * wh0 + Icom[2, 1] * wh1 + Icom[2, 2] * wh2
            if prismatic[k]:
                e0, e1, e2 = eS0, eS1, eS2
            else:
                e0, e1, e2 = _times(D, x0 - o[0], x1 - o[1], x2 - o[2])
            dv0, dv1, dv2 = _times(D, vh0, vh1, vh2)
            dL0, dL1, dL2 = _times(D, L0, L1, L2)
        else:
            e0, e1, e2 = eS0, eS1, eS2
            dv0, dv1, dv2 = wh1 * e2 - wh2 * e1, wh2 * e0 - wh0 * e2, wh0 * e1 - wh1 * e0
            dL0, dL1, dL2 = _times(dI, wh0, wh1, wh2)
        W0, W1, W2 = vh0 + dv0, vh1 + dv1, vh2 + dv2
        P0, P1, P2 = m * dv0, m * dv1, m * dv2
        Q0 = m * (x1 * dv2 - x2 * dv1 + e1 * W2 - e2 * W1) + dL0
        Q1 = m * (x2 * dv0 - x0 * dv2 + e2 * W0 - e0 * W2) + dL1
        Q2 = m * (x0 * dv1 - x1 * dv0 + e0 * W1 - e1 * W0) + dL2
        for lo in range(hi + 1):
            if not before_eq[lo, hi] or (turned and before_eq[k, lo]):
                continue
            t = xi[lo]
            value = t[0] * P0 + t[1] * P1 + t[2] * P2 + t[3] * Q0 + t[4] * Q1 + t[5] * Q2
            out[lo, hi] = value
            out[hi, lo] = value
    return dV


@njit(allocates=False)
def _ad(xi, eta, out):
    """ad_ξ η = (ω × v_η + v × ω_η, ω × ω_η) for twists ξ = (v, ω), η = (v_η, ω_η)."""
    w, v = xi[3:], xi[:3]
    out[0] = w[1] * eta[2] - w[2] * eta[1] + v[1] * eta[5] - v[2] * eta[4]
    out[1] = w[2] * eta[0] - w[0] * eta[2] + v[2] * eta[3] - v[0] * eta[5]
    out[2] = w[0] * eta[1] - w[1] * eta[0] + v[0] * eta[4] - v[1] * eta[3]
    out[3] = w[1] * eta[5] - w[2] * eta[4]
    out[4] = w[2] * eta[3] - w[0] * eta[5]
    out[5] = w[0] * eta[4] - w[1] * eta[3]


@njit(allocates=False)
def _dot(a, b):
    total = 0.0
    for i in range(a.shape[0]):
        total += a[i] * b[i]
    return total


@njit(allocates=False)
def _link_momenta(links, mass, inertia, R, c, xi, rates, velocity, momentum):
    """Each link's twist V_i = V_parent + Σ_k ξ_k u_k (its DOFs k) under the two ``rates`` (2, n) into ``velocity``
    (2, L, 6), and its spatial momentum about the frame origin G_i V_i = (l, c_i × l + R_i I_i R_iᵀ ω) with
    l = m_i (v + ω × c_i) into ``momentum`` (2, L, 6), then summed over each link's subtree (H_i). About the CoM
    rather than through :func:`_apply_inertia`: that takes J = R I Rᵀ + m(|c|² E − c cᵀ), which only the
    derivatives compute, where R (I (Rᵀ ω)) is three products."""
    for i in range(links.shape[0]):
        parent, first = links[i, 0], links[i, 1]
        m, Ri, Ii, ci = mass[i], R[i], inertia[i], c[i]
        for s in range(2):
            V, H = velocity[s, i], momentum[s, i]
            for x in range(6):
                V[x] = velocity[s, parent, x] if parent >= 0 else 0.0
            for k in range(first, first + links[i, 2]):
                for x in range(6):
                    V[x] += xi[k, x] * rates[s, k]
            w0, w1, w2 = V[3], V[4], V[5]
            l0 = m * (V[0] + w1 * ci[2] - w2 * ci[1])
            l1 = m * (V[1] + w2 * ci[0] - w0 * ci[2])
            l2 = m * (V[2] + w0 * ci[1] - w1 * ci[0])
            b0 = Ri[0, 0] * w0 + Ri[1, 0] * w1 + Ri[2, 0] * w2        # Rᵀ ω, then I Rᵀ ω
            b1 = Ri[0, 1] * w0 + Ri[1, 1] * w1 + Ri[2, 1] * w2
            b2 = Ri[0, 2] * w0 + Ri[1, 2] * w1 + Ri[2, 2] * w2
            e0 = Ii[0, 0] * b0 + Ii[0, 1] * b1 + Ii[0, 2] * b2
            e1 = Ii[1, 0] * b0 + Ii[1, 1] * b1 + Ii[1, 2] * b2
            e2 = Ii[2, 0] * b0 + Ii[2, 1] * b1 + Ii[2, 2] * b2
            H[0], H[1], H[2] = l0, l1, l2
            H[3] = ci[1] * l2 - ci[2] * l1 + Ri[0, 0] * e0 + Ri[0, 1] * e1 + Ri[0, 2] * e2
            H[4] = ci[2] * l0 - ci[0] * l2 + Ri[1, 0] * e0 + Ri[1, 1] * e1 + Ri[1, 2] * e2
            H[5] = ci[0] * l1 - ci[1] * l0 + Ri[2, 0] * e0 + Ri[2, 1] * e1 + Ri[2, 2] * e2
    for i in range(links.shape[0] - 1, -1, -1):        # children come after their parents
        parent = links[i, 0]
        if parent >= 0:
            for s in range(2):
                for x in range(6):
                    momentum[s, parent, x] += momentum[s, i, x]


@njit(allocates=False)
def _lagrangian_gradient(links, ref_R, gravity, xi, mc, h, velocity, momentum, rates, rows, scratch, g, out):
    """∂/∂q_k [V − ½ uᵀ a(q) w] into ``out`` (n,) for the DOFs k where ``rows``, from the twists ξ, the composites'
    masses ``mc`` and first moments ``h``, and :func:`_link_momenta`'s twists V_i and subtree momenta H_i.

    q_k moves its link's subtree by the screw ξ_k; ½ uᵀ a w = ½ Σ_i V_i(u)ᵀ G_i V_i(w) is invariant when
    everything moves together, so only the twist U_k⁻ = Σ_{j before k} ξ_j u_j of the DOFs before k (and W_k⁻)
    moves relative to the subtree: ∂(uᵀ a w)/∂q_k = −(ad_{ξ_k} U_k⁻)ᵀ H_k(w) − (ad_{ξ_k} W_k⁻)ᵀ H_k(u) (Park's
    bracket summed over the DOF pairs: O(n) where ∂a/∂q costs O(n³)); ∂V/∂q_k = −gᵀ (G^c_k ξ_k)_linear.
    ``scratch`` (3, 6) and ``g`` (3,): workspace."""
    before, bracket = scratch[:2], scratch[2]
    for i in range(links.shape[0]):
        parent, first = links[i, 0], links[i, 1]
        for s in range(2):
            for x in range(6):
                before[s, x] = velocity[s, parent, x] if parent >= 0 else 0.0
        mat_t_vec(ref_R[i], gravity, g)
        for k in range(first, first + links[i, 2]):
            if rows[k]:
                linear0, linear1, linear2 = _linear_momentum(mc[i], h[i], xi[k])
                value = -(g[0] * linear0 + g[1] * linear1 + g[2] * linear2)
                for s in range(2):
                    _ad(xi[k], before[s], bracket)
                    value += 0.5 * _dot(bracket, momentum[1 - s, i])
                out[k] = value
            for s in range(2):
                for x in range(6):
                    before[s, x] += xi[k, x] * rates[s, k]


# inlined into rigid_body_terms (numba IR): a call would pass the Model and Data field by field per configuration
@njit(allocates=False, inline="always")
def _tree_terms(model, data, q, derivatives, only, M, dM, dV, rows, batch, gradient, rates, out_gradient,
                gradient_rows, matrix, edges):
    """The tree's terms at one configuration q (n̄,) (mimic followers as free DOFs): a into M (n̄, n̄) (with
    ``matrix``, unless ``only`` ≥ 0; with ``edges``, the composites about their CoMs all the same), ∂a/∂q into
    dM[batch] and ∂V/∂q into dV[batch] on the rows where rows[batch] (with ``derivatives``; ``only`` ≥ 0: row
    ``only`` alone, M not written; ``only`` = −2: every row, M not written); with ``gradient``, ∂/∂q [V − ½ uᵀ a w]
    for the rates (u, w) = ``rates`` (2, n̄) into out_gradient[batch] on the rows where gradient_rows[batch]
    (:func:`_lagrangian_gradient`); returns V(q). See :func:`rigid_body_terms`."""
    links, mass, inertia, dof_link, prismatic = model.links, model.mass, model.inertia, model.dof_link, \
        model.prismatic
    before_eq, gravity = model.before_eq, model.gravity
    R, c, ref_R, ref_p = data.oRi, data.link_com, data.reference_rotation, data.reference_origin
    axis, point, xi = data.dof_axis, data.dof_point, data.twist
    mc, h, J = data.composite_mass, data.composite_moment, data.composite_origin_inertia
    GX, A, g = data.inertia_twist, data.twist_bracket, data.local_gravity
    p, cbar, Ic = data.oPi, data.composite_com, data.composite_inertia
    scratch, vectors = data.matrix_scratch, data.vector_scratch
    L, n = links.shape[0], q.shape[0]
    _link_frames(links, model.joint_rotation, model.joint_origin, model.com, prismatic, model.axes, q, R,
                 p, c, ref_R, ref_p, axis, point, scratch, vectors, data.trig,
                 _first_changed_link(links, q, data.frames_q))
    if derivatives or gradient:
        for k in range(n):
            _twist(prismatic, axis, point, k, xi[k])
    energy = 0.0
    for i in range(L):
        mc[i] = mass[i]
        for x in range(3):
            h[i, x] = mass[i] * c[i, x]
        if derivatives:     # G about the frame origin: only the derivatives use it
            _body_inertia(mass[i], c[i], R[i], inertia[i], h[i], J[i])
        mat_t_vec(ref_R[i], gravity, g)
        energy -= mass[i] * (_dot(g, c[i]) + _dot(ref_p[i], gravity))
    for i in range(L - 1, -1, -1):                  # composites: children come after their parents
        parent = links[i, 0]
        if parent >= 0:
            mc[parent] += mc[i]
            for x in range(3):
                h[parent, x] += h[i, x]
                if derivatives:
                    for y in range(3):
                        J[parent, x, y] += J[i, x, y]
    if gradient:
        _link_momenta(links, mass, inertia, R, c, xi, rates, data.link_velocity, data.link_momentum)
        _lagrangian_gradient(links, ref_R, gravity, xi, mc, h, data.link_velocity, data.link_momentum, rates,
                             gradient_rows[batch], data.rate_scratch, g, out_gradient[batch])
    if only == -1 and (matrix or edges):    # the mass matrix, the edge differences (not derivative rows alone)
        _composite_about_com(links, mass, inertia, R, c, mc, h, cbar, Ic, vectors)
    if only == -1 and matrix:
        _mass_matrix(prismatic, axis, point, before_eq, dof_link, mc, cbar, Ic, M)
    if not derivatives:
        return energy
    first, stop = (0, n) if only < 0 else (only, only + 1)
    for b in range(n):
        i = dof_link[b]
        _apply_inertia(mc[i], h[i], J[i], xi[b], GX[b, b])
    # ∂a_lo,hi/∂q_k (lo before-or-equal hi) is 0 unless lo is strictly before k (else k is on another branch, or
    # k before-or-equal lo moves a rigid subtree), and then hi is after k or strictly before it: the cases below
    # read ad_{ξ_k} ξ_b and G^c_k ξ_b for b strictly before k only (a tree's DOFs before k: a chain)
    for k in range(first, stop):
        if not rows[batch, k]:
            continue
        i = dof_link[k]
        for b in range(k):
            if before_eq[b, k]:
                _apply_inertia(mc[i], h[i], J[i], xi[b], GX[k, b])
                _ad(xi[k], xi[b], A[k, b])
        mat_t_vec(ref_R[i], gravity, g)
        dV[batch, k] = -(g[0] * GX[k, k, 0] + g[1] * GX[k, k, 1] + g[2] * GX[k, k, 2])
        dM[batch, k] = 0.0
        for lo in range(k):
            if not before_eq[lo, k]:
                continue
            for hi in range(lo, n):           # parents first: lo before-or-equal hi only if lo ≤ hi
                if not before_eq[lo, hi]:
                    continue
                if before_eq[k, hi]:
                    value = -_dot(A[k, lo], GX[hi, hi])
                elif before_eq[hi, k]:
                    value = -_dot(A[k, lo], GX[k, hi]) - _dot(A[k, hi], GX[k, lo])
                else:
                    continue          # hi on another branch below lo
                dM[batch, k, lo, hi] = value
                dM[batch, k, hi, lo] = value
    return energy


@njit(allocates=False)
def _column(n, leader, k):
    """The model's coordinate that the tree's DOF k follows (itself for k < n)."""
    return k if k < n else leader[k - n]


@njit(allocates=False)
def _factor(n, multiplier, k):
    """dq̄_k/dq_column(k): 1 for the model's own DOFs, the follower's multiplier."""
    return 1.0 if k < n else multiplier[k - n]


@njit(allocates=False)
def _fold_into(n, leader, multiplier, X, scale, out, assign):
    """The upper triangle of out (n, n) set to (``assign``) or increased by ``scale`` Sᵀ X S, for the tree's
    symmetric X (n̄, n̄): S is the identity on the model's own DOFs (a copy of that block) and has one
    multiplier at its leader's column in a follower's row (that row and column, scattered)."""
    t = X.shape[0]
    for a in range(n):
        for b in range(a, n):
            out[a, b] = scale * X[a, b] if assign else out[a, b] + scale * X[a, b]
    for k in range(n, t):
        ck, mk = leader[k - n], scale * multiplier[k - n]
        for m in range(t):
            cm, mm = _column(n, leader, m), _factor(n, multiplier, m)
            if ck <= cm:
                out[ck, cm] += mk * mm * X[k, m]
            if m < n and m <= ck:               # the pair (m, k): its transpose, from the model's own DOF m
                out[m, ck] += mm * mk * X[m, k]


@njit(allocates=False)
def _fold_vector(n, leader, multiplier, x, rows, only, out):
    """out_j = (Sᵀ x)_j, the tree's x (n̄,) at the model's DOF j plus its followers' multiples, for the j where
    rows[j] (and j = ``only`` when ``only`` ≥ 0); the other entries left as they were."""
    for j in range(n):
        if (only < 0 or j == only) and rows[j]:
            out[j] = x[j]
    for k in range(n, x.shape[0]):
        j = leader[k - n]
        if (only < 0 or j == only) and rows[j]:
            out[j] += multiplier[k - n] * x[k]


@njit(allocates=False)
def _mirror(out):
    """The lower triangle of out (n, n) from its upper one: exactly symmetric."""
    for a in range(out.shape[0]):
        for b in range(a):
            out[a, b] = out[b, a]


@njit(allocates=False)
def _fold(model, data, batch, derivatives, only, matrix):
    """The model's terms of configuration ``batch`` from the tree's (data.tree_*, at q̄ = S q + c): a = Sᵀ ā S,
    ∂a/∂q_j = Σ_k S_kj Sᵀ (∂ā/∂q̄_k) S, ∂V/∂q = Sᵀ ∂V̄/∂q̄ (:mod:`.mimic`; S has one nonzero per row, so each sum
    is a scatter over the tree's indices; a only with ``matrix``). Upper triangles are summed and mirrored: a and
    ∂a/∂q_j stay exactly symmetric."""
    leader, multiplier = model.follower_leader, model.follower_multiplier
    M, dM, dV, rows = data.M[batch], data.dM, data.g, data.derivative_rows
    tM, tdM, tdV = data.tree_M[0], data.tree_dM, data.tree_g[0]
    n, t = M.shape[0], tM.shape[0]
    if only < 0 and matrix:
        _fold_into(n, leader, multiplier, tM, 1.0, M, True)
        _mirror(M)
    if not derivatives:
        return
    _fold_vector(n, leader, multiplier, tdV, rows[batch], only, dV[batch])
    for j in range(n):                  # the tree's row j, then its followers' rows k (leader j) below
        if (only < 0 or j == only) and rows[batch, j]:
            _fold_into(n, leader, multiplier, tdM[0, j], 1.0, dM[batch, j], True)
    for k in range(n, t):
        j = leader[k - n]
        if (only < 0 or j == only) and rows[batch, j]:
            _fold_into(n, leader, multiplier, tdM[0, k], multiplier[k - n], dM[batch, j], False)
    for j in range(n):
        if (only < 0 or j == only) and rows[batch, j]:
            _mirror(dM[batch, j])


@njit(allocates=False)
def _edges(model, data, batch, twists):
    """Configuration ``batch``'s edge requests (data.edge_dof, edge_step) into edge_dM and edge_dV by
    :func:`_edge_difference`, from the tree's frames and composites it has just left in ``data`` (``twists``: and
    the DOFs' twists); with mimic followers the tree's difference is folded as a is (Sᵀ Δā S: the offsets
    cancel)."""
    n = data.M.shape[1]
    if data.edge_dof[batch, 0] < 0 and data.edge_dof[batch, 1] < 0:
        return
    if not twists:                          # the tree's terms left them out
        for j in range(model.dof_link.shape[0]):
            _twist(model.prismatic, data.dof_axis, data.dof_point, j, data.twist[j])
    for e in range(2):
        k = data.edge_dof[batch, e]
        if k < 0:
            continue
        link = model.dof_link[k]
        mat_t_vec(data.reference_rotation[link], model.gravity, data.local_gravity)
        tree = data.tree_edge if model.follower_leader.shape[0] else data.edge_dM[batch, e]
        data.edge_dV[batch, e] = _edge_difference(model.prismatic, data.dof_axis, data.dof_point, model.before_eq,
                                                  model.dof_link, data.composite_mass, data.composite_com,
                                                  data.composite_inertia, data.local_gravity, data.twist, k,
                                                  data.edge_step[batch, e], data.matrix_scratch, tree)
        if model.follower_leader.shape[0]:
            _fold_into(n, model.follower_leader, model.follower_multiplier, tree, 1.0, data.edge_dM[batch, e],
                       True)
            _mirror(data.edge_dM[batch, e])


@njit(allocates=False)
def rigid_body_terms(model, data, q, derivatives, only=-1, gradient=False, first=0):
    """a(q) into ``data.M`` (B, n, n), V(q) into ``potential_energy`` (B,) and, with ``derivatives``, ∂a/∂q into
    ``dM`` (B, n, n, n) ([b, k, i, j] = ∂a_ij/∂q_k) and ∂V/∂q into ``g`` (B, n), for the B configurations q (B, n)
    (B at most the Data's batch).

    ``only`` = k ≥ 0: the derivatives with respect to q_k alone (dM[:, k] and g[:, k]) and V; M and the other
    derivatives are not written. Row k of configuration b is written only where ``data.derivative_rows[b, k]``
    (a caller that needs fewer rows clears the others: each costs n² brackets and n inertia products). M[b] is
    written only where ``data.mass_wanted[b]`` (the discrete step's path vertices need only their edges').

    With ``gradient``, also ∂/∂q [V − ½ uᵀ a(q) w] into ``lagrangian_gradient`` (B, n) for the rates (u, w) in
    ``data.rates`` (2, n), on the rows where ``data.gradient_rows`` (a configuration with none costs nothing more):
    the gradient the discrete step's Jacobian needs, O(n) a configuration (:func:`_lagrangian_gradient`).

    Configurations before ``first`` are skipped, their results left as they were (a caller that has them).

    Configuration b's edge requests (``data.edge_dof[b]``, ``edge_step[b]``: a DOF k ≥ 0 and a step δ, up to two)
    get a(q + δ e_k) − a(q) into ``edge_dM[b]`` and V(q + δ e_k) − V(q) into ``edge_dV[b]``, free of the
    difference's cancellation (:func:`_edge_difference`: not for every DOF).

    With mimic followers, the tree is evaluated at q̄ = S q + c into the Data's ``tree_*`` arrays and folded onto
    the model's coordinates (:func:`_fold`); without them, straight into the results.
    """
    V = data.potential_energy
    leader, multiplier, offset = model.follower_leader, model.follower_multiplier, model.follower_offset
    n, F = q.shape[1], leader.shape[0]
    if F > 0 and gradient:                          # ū = S u: the followers' rates, without the offsets
        for k in range(n + F):
            for s in range(2):
                data.tree_rates[s, k] = _factor(n, multiplier, k) * data.rates[s, _column(n, leader, k)]
    for batch in range(first, q.shape[0]):
        # a configuration with no row asked for costs no more than a(q) and V(q)
        wanted, derive = False, False
        for k in range(n):
            wanted = wanted or (gradient and data.gradient_rows[batch, k])
            derive = derive or (derivatives and data.derivative_rows[batch, k] and (only < 0 or k == only))
        matrix = data.mass_wanted[batch]
        edges = data.edge_dof[batch, 0] >= 0 or data.edge_dof[batch, 1] >= 0
        if F == 0:
            V[batch] = _tree_terms(model, data, q[batch], derive, only, data.M[batch], data.dM, data.g,
                                   data.derivative_rows, batch, wanted, data.rates, data.lagrangian_gradient,
                                   data.gradient_rows, matrix, edges)
            _edges(model, data, batch, derive or wanted)
            continue
        tq, rows = data.tree_q, data.tree_rows
        for k in range(n):
            tq[k] = q[batch, k]
        for f in range(F):
            tq[n + f] = multiplier[f] * q[batch, leader[f]] + offset[f]
        tree_only = -1
        if derive:
            for k in range(n + F):
                column = _column(n, leader, k)
                rows[0, k] = data.derivative_rows[batch, column] and (only < 0 or column == only)
            tree_only = -2 if only >= 0 else -1     # every row of the column's DOFs, the mass matrix left out
        if wanted:
            for k in range(n + F):
                data.tree_gradient_rows[0, k] = data.gradient_rows[batch, _column(n, leader, k)]
        V[batch] = _tree_terms(model, data, tq, derive, tree_only, data.tree_M[0], data.tree_dM, data.tree_g,
                               rows, 0, wanted, data.tree_rates, data.tree_gradient, data.tree_gradient_rows,
                               matrix, edges)
        _fold(model, data, batch, derive, only, matrix)
        _edges(model, data, batch, derive or wanted)
        if wanted:                                  # ∂f/∂q = Sᵀ ∂f̄/∂q̄
            _fold_vector(n, leader, multiplier, data.tree_gradient[0], data.gradient_rows[batch], -1,
                         data.lagrangian_gradient[batch])


@njit
def _bound_rigid_body_terms(binding, q, derivatives):
    """:func:`rigid_body_terms` of a :class:`Binding`."""
    rigid_body_terms(binding.model, binding.data, q, derivatives)


class Evaluator:
    """:func:`rigid_body_terms` from Python for configurations q (..., n): a Data and its Binding kept per batch
    size (the last ``kept`` ones) and per thread (the kernels release the GIL), the results copied out."""

    def __init__(self, model: Model, kept: int = 8):
        self.model = model
        self.kept = kept
        self._local = threading.local()

    def __getstate__(self):
        return {"model": self.model, "kept": self.kept}      # the thread's Data and Bindings are not pickled

    def __setstate__(self, state):
        self.__init__(state["model"], state["kept"])

    def _binding(self, batch: int, derivatives: bool) -> tuple[Data, Binding]:
        kept = getattr(self._local, "kept", None)
        if kept is None:
            kept = self._local.kept = {}
        entry = kept.get((batch, derivatives))
        if entry is None:
            if len(kept) >= self.kept:
                kept.pop(next(iter(kept)))
            data = create_data(self.model, batch, derivatives)
            entry = kept[batch, derivatives] = (data, bind(self.model, data))
        return entry

    def __call__(self, q: np.ndarray, derivatives: bool) -> Terms:
        """The :class:`~.lagrangian.Terms` at q (..., n): M (..., n, n), potential_energy (...) and, with
        ``derivatives``, dM (..., n, n, n) and g (..., n)."""
        q = np.asarray(q, dtype=float)
        batch, n = q.shape[:-1], q.shape[-1]
        flat = np.ascontiguousarray(q.reshape(-1, n))
        data, binding = self._binding(flat.shape[0], bool(derivatives))
        _bound_rigid_body_terms(binding, flat, derivatives)
        M, V = data.M.reshape(batch + (n, n)).copy(), data.potential_energy.reshape(batch).copy()
        if not derivatives:
            return Terms(M, V)
        return Terms(M, V, data.dM.reshape(batch + (n, n, n)).copy(), data.g.reshape(batch + (n,)).copy())
