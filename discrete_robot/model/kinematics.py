"""Forward kinematics and CoM Jacobians of a :class:`RobotModel`, vectorised over configurations.

Every function takes q of shape (..., n) and returns arrays with the same
leading shape, so a whole batch of configurations (the vertices of the
discrete model's difference paths, say) costs one pass over the links.

For link i with world rotation R_i and CoM c_i, DOF k with world axis z_k
through the point o_k contributes the Jacobian columns

    revolute:   J_v[:, k] = z_k × (c_i − o_k),   J_ω[:, k] = z_k
    prismatic:  J_v[:, k] = z_k,                 J_ω[:, k] = 0

when DOF k is on the path from the base to link i, and zero columns otherwise
(ModernRobotics' space Jacobian written at the CoM). The body Jacobians are
the same columns expressed in the link frame, R_iᵀ J.
"""

import functools
from dataclasses import dataclass

import numpy as np

from discrete_robot.geometry3d import cross, hat, rotation_about
from discrete_robot.model.description import RobotModel


@dataclass(frozen=True)
class LinkFrames:
    """Link frames and DOF axes for a batch of configurations (leading shape ``...``).

    rotations (..., L, 3, 3) and positions (..., L, 3): each link frame (at its joint) in the
    reference frame; com_positions (..., L, 3); dof_axes and dof_points (..., n, 3): each DOF's
    unit axis and a point on it (the joint origin) in the reference frame. ``references``
    (..., L, 4, 4), only for frames relative to the arms' roots: the world pose of the frame
    each link's quantities are expressed in (its arm's first link).
    """

    rotations: np.ndarray
    positions: np.ndarray
    com_positions: np.ndarray
    dof_axes: np.ndarray
    dof_points: np.ndarray
    references: np.ndarray | None = None

    def transforms(self) -> np.ndarray:
        """Homogeneous 4x4 link poses, shape (..., L, 4, 4)."""
        shape = self.rotations.shape[:-2]
        T = np.zeros(shape + (4, 4))
        T[..., :3, :3] = self.rotations
        T[..., :3, 3] = self.positions
        T[..., 3, 3] = 1.0
        return T


_EYE3 = np.eye(3)
_EYE4 = np.eye(4)


class KinematicTree:
    """The constant structure of a model (offsets, axes, who moves whom), built once per model."""

    def __init__(self, model: RobotModel):
        self.model = model
        self.n = model.dof
        self.n_links = len(model.links)
        self.parent = np.array(model.parent_index, dtype=int)
        self.dof_link = np.concatenate([[i] * link.joint.ndof for i, link in enumerate(model.links)]).astype(int)
        self.prismatic = np.array([not link.joint.type.rotational for link in model.links for _ in
                                   range(link.joint.ndof)], dtype=bool)
        self.masses = np.array([link.mass for link in model.links])
        self.coms = np.array([link.com for link in model.links])
        self.inertias = np.array([link.inertia for link in model.links])
        ancestor = np.zeros((self.n_links, self.n_links), dtype=bool)  # [i, j]: link j is i or an ancestor of i
        for i, parent in enumerate(self.parent):
            ancestor[i, i] = True
            if parent >= 0:
                ancestor[i] |= ancestor[parent]
        self.link_ancestor = ancestor
        #: [i, k]: DOF k moves link i (k belongs to link i's joint or to an ancestor's)
        self.moves = ancestor[:, self.dof_link]
        link_of = self.dof_link
        same = link_of[:, None] == link_of[None, :]
        order = np.arange(self.n)
        #: [k, a]: DOF k comes before DOF a on the path from the base (k moves a's axis), strictly
        earlier_link = ancestor[link_of[None, :], link_of[:, None]] & ~same
        self.precedes = earlier_link | (same & (order[:, None] < order[None, :]))
        # per-DOF constants of the joints
        joints = [link.joint for link in model.links]
        self.axes = np.concatenate([j.axes for j in joints]).reshape(-1, 3)
        self.joint_rotations = np.array([j.rotation for j in joints]).reshape(-1, 3, 3)
        self.joint_origins = np.array([j.origin for j in joints for _ in range(j.ndof)]).reshape(-1, 3)
        #: each DOF's axis of rotation, zero for a prismatic DOF (whose rotation is the identity)
        self.rotation_axes = np.where(self.prismatic[:, None], 0.0, self.axes)
        #: each DOF's axis in its joint frame (R0 a), exact for single-DOF joints
        self.fixed_axes = np.einsum("kij,kj->ki", self.joint_rotations[self.dof_link], self.axes)
        slices = model.dof_slices
        self.single_links = np.array([i for i, j in enumerate(joints) if j.ndof == 1], dtype=int)
        self.single_dofs = np.array([slices[i].start for i in self.single_links], dtype=int)
        self.multi_links = [(i, slices[i]) for i, j in enumerate(joints) if j.ndof > 1]
        self.root_slices = [slices[i] for i in range(self.n_links) if self.parent[i] < 0]
        self.root_dofs = np.array([k for sl in self.root_slices for k in range(sl.start, sl.stop)], dtype=int)
        self.single_root_dofs = np.array([sl.start for sl in self.root_slices if sl.stop - sl.start == 1], dtype=int)
        #: each link's arm root (the link attached to the base on its path)
        self.arm_root = np.array([int(np.flatnonzero(ancestor[i] & (self.parent < 0))[0])
                                  for i in range(self.n_links)], dtype=int)

    def frames(self, q, base_rotation=None, base_position=None, relative_to_roots: bool = False) -> LinkFrames:
        """Link frames for configurations q (..., n).

        Reference frame: the world, with the base at ``base_rotation`` (3x3) and ``base_position``
        (m; identity and origin by default, as for a fixed base). With ``relative_to_roots`` each arm is
        expressed instead in the frame of its first link (the link attached to the base): nothing then
        depends on the first DOF of that link's joint, so quantities that are physically independent of
        that coordinate (the mass matrix) are also bit-for-bit independent of it.

        The joints' local transforms are computed for all links at once; only the composition along
        the tree (one 4x4 product per link) loops over the links.
        """
        q = np.asarray(q, dtype=float)
        batch = q.shape[:-1]
        local, pre_axes = self._local_transforms(q)
        T = np.empty(batch + (self.n_links + 1, 4, 4))       # slot 0: the base; slot i+1: link i
        T[..., 0, :, :] = _EYE4
        if base_rotation is not None:
            T[..., 0, :3, :3] = base_rotation
        if base_position is not None:
            T[..., 0, :3, 3] = base_position
        references = None
        if relative_to_roots:
            roots = np.flatnonzero(self.parent < 0)
            root_poses = T[..., :1, :, :] @ local[..., roots, :, :]
            references = root_poses[..., np.searchsorted(roots, self.arm_root), :, :]
            T[..., 0, :, :] = _EYE4
        for i, parent in enumerate(self.parent):
            if relative_to_roots and parent < 0:
                T[..., i + 1, :, :] = _EYE4
            else:
                T[..., i + 1, :, :] = T[..., parent + 1, :, :] @ local[..., i, :, :]
        before = T[..., self.parent[self.dof_link] + 1, :3, :]  # (..., n, 3, 4): the frame each joint hangs from
        axes = (before[..., :3] @ pre_axes[..., None])[..., 0]
        points = (before[..., :3] @ self.joint_origins[:, :, None])[..., 0] + before[..., 3]
        if relative_to_roots:
            self._root_axes(q, axes, points)
        rotations, positions = T[..., 1:, :3, :3], T[..., 1:, :3, 3]
        coms = positions + (rotations @ self.coms[:, :, None])[..., 0]
        return LinkFrames(rotations, positions, coms, axes, points, references)

    def _local_transforms(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Each link's pose in its parent's frame (..., L, 4, 4); each DOF's axis in its parent's frame (..., n, 3)."""
        batch = q.shape[:-1]
        rotations = rotation_about(self.rotation_axes, q)          # (..., n, 3, 3); identity for prismatic DOFs
        local = np.zeros(batch + (self.n_links, 4, 4))
        local[..., 3, 3] = 1.0
        local_R, local_p = local[..., :3, :3], local[..., :3, 3]     # views
        pre_axes = np.empty(batch + (self.n, 3))
        single, dof = self.single_links, self.single_dofs
        local_R[..., single, :, :] = self.joint_rotations[single] @ rotations[..., dof, :, :]
        local_p[..., single, :] = self.joint_origins[dof]
        pre_axes[..., dof, :] = self.fixed_axes[dof]
        slides = self.prismatic[dof]
        if np.any(slides):
            links, dofs = single[slides], dof[slides]
            local_p[..., links, :] += self.fixed_axes[dofs] * q[..., dofs, None]
        for i, sl in self.multi_links:
            R = np.broadcast_to(self.joint_rotations[i], batch + (3, 3))
            for k in range(sl.start, sl.stop):
                pre_axes[..., k, :] = R @ self.axes[k]
                R = R @ rotations[..., k, :, :]
            local_R[..., i, :, :] = R
            local_p[..., i, :] = self.joint_origins[sl.start]
        return local, pre_axes

    def _root_axes(self, q: np.ndarray, axes: np.ndarray, points: np.ndarray) -> None:
        """Root links' DOF axes in their own (final) frame: rotated back by the joint's later DOFs."""
        points[..., self.root_dofs, :] = 0.0
        axes[..., self.single_root_dofs, :] = self.axes[self.single_root_dofs]
        for sl in self.root_slices:
            if sl.stop - sl.start == 1:
                continue
            later = _EYE3
            for k in range(sl.stop - 1, sl.start - 1, -1):
                axes[..., k, :] = np.swapaxes(later, -1, -2) @ self.axes[k]
                if not self.prismatic[k]:
                    later = rotation_about(self.rotation_axes[k], q[..., k]) @ later

    def com_jacobians(self, frames: LinkFrames) -> tuple[np.ndarray, np.ndarray]:
        """(J_v, J_ω), each (..., L, 3, n): CoM linear and link angular velocity = J q̇, in the frames' reference.

        From the DOF twists ξ_k = (v_k, ω_k): J_ω[:, k] = ω_k and J_v[:, k] = v_k + ω_k × c_i, which is
        z_k × (c_i − o_k) for a revolute DOF and z_k for a prismatic one, where DOF k moves link i.
        """
        xi = self.spatial_twists(frames)
        v, w = np.swapaxes(xi[..., :3], -1, -2)[..., None, :, :], np.swapaxes(xi[..., 3:], -1, -2)[..., None, :, :]
        moves = self.moves[:, None, :]
        linear = (v - hat(frames.com_positions) @ w) * moves
        return linear, w * moves

    def spatial_twists(self, frames: LinkFrames) -> np.ndarray:
        """Spatial twist ξ_k = (v, ω) of each DOF, shape (..., n, 6): revolute (o_k × z_k, z_k), prismatic (z_k, 0)."""
        z, o = frames.dof_axes, frames.dof_points
        revolute = ~self.prismatic[:, None]
        return np.concatenate([np.where(revolute, cross(o, z), z), np.where(revolute, z, 0.0)], axis=-1)


@functools.lru_cache(maxsize=32)
def kinematic_tree(model: RobotModel) -> KinematicTree:
    """The (cached) :class:`KinematicTree` of ``model``."""
    return KinematicTree(model)


def forward_kinematics(model: RobotModel, q, base_rotation=None, base_position=None) -> LinkFrames:
    """World frames of every link for q (..., n); floating bases take the base pose (3x3 rotation, m)."""
    return kinematic_tree(model).frames(q, base_rotation, base_position)


def com_jacobians(model: RobotModel, q, base_rotation=None, base_position=None) -> tuple[np.ndarray, np.ndarray]:
    """Spatial (world-frame) CoM Jacobians (J_v, J_ω), each (..., L, 3, n), with respect to the joint coordinates."""
    tree = kinematic_tree(model)
    return tree.com_jacobians(tree.frames(q, base_rotation, base_position))


def body_jacobians(model: RobotModel, q, base_rotation=None, base_position=None) -> tuple[np.ndarray, np.ndarray]:
    """Body CoM Jacobians: the velocity of each CoM and the angular velocity of each link in the link's frame."""
    tree = kinematic_tree(model)
    frames = tree.frames(q, base_rotation, base_position)
    Jv, Jw = tree.com_jacobians(frames)
    Rt = np.swapaxes(frames.rotations, -1, -2)
    return Rt @ Jv, Rt @ Jw
