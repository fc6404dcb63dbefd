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

from discrete_robot.model.description import RobotModel


@dataclass(frozen=True)
class LinkFrames:
    """Link frames and DOF axes for a batch of configurations (leading shape ``...``).

    rotations (..., L, 3, 3) and positions (..., L, 3): each link frame (at its joint) in the
    reference frame; com_positions (..., L, 3); dof_axes and dof_points (..., n, 3): each DOF's
    unit axis and a point on it (the joint origin) in the reference frame.
    """

    rotations: np.ndarray
    positions: np.ndarray
    com_positions: np.ndarray
    dof_axes: np.ndarray
    dof_points: np.ndarray

    def transforms(self) -> np.ndarray:
        """Homogeneous 4x4 link poses, shape (..., L, 4, 4)."""
        shape = self.rotations.shape[:-2]
        T = np.zeros(shape + (4, 4))
        T[..., :3, :3] = self.rotations
        T[..., :3, 3] = self.positions
        T[..., 3, 3] = 1.0
        return T


def _rotations(axis: np.ndarray, angles: np.ndarray) -> np.ndarray:
    """Rodrigues' formula R = I + sin θ K + (1 − cos θ) K², K = [axis]×, for angles of any shape."""
    x, y, z = axis
    K = np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])
    s = np.sin(angles)[..., None, None]
    c = np.cos(angles)[..., None, None]
    return np.eye(3) + s * K + (1.0 - c) * (K @ K)


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

    def frames(self, q, base_rotation=None, base_position=None, relative_to_roots: bool = False) -> LinkFrames:
        """Link frames for configurations q (..., n).

        Reference frame: the world, with the base at ``base_rotation`` (3x3) and ``base_position``
        (m; identity and origin by default, as for a fixed base). With ``relative_to_roots`` each arm is
        expressed instead in the frame of its first link (the link attached to the base): nothing then
        depends on the first DOF of that link's joint, so quantities that are physically independent of
        that coordinate (the mass matrix) are also bit-for-bit independent of it.
        """
        q = np.asarray(q, dtype=float)
        batch = q.shape[:-1]
        R_base = np.eye(3) if base_rotation is None else np.asarray(base_rotation, dtype=float)
        p_base = np.zeros(3) if base_position is None else np.asarray(base_position, dtype=float)
        rotations = np.empty(batch + (self.n_links, 3, 3))
        positions = np.empty(batch + (self.n_links, 3))
        axes = np.empty(batch + (self.n, 3))
        points = np.empty(batch + (self.n, 3))
        for i, (link, sl) in enumerate(zip(self.model.links, self.model.dof_slices, strict=True)):
            joint = link.joint
            angles = q[..., sl]
            if relative_to_roots and self.parent[i] < 0:
                self._root_frame(joint, angles, sl, rotations[..., i, :, :], positions[..., i, :], axes, points)
                continue
            if self.parent[i] < 0:
                R_parent, p_parent = R_base, p_base
            else:
                R_parent, p_parent = rotations[..., self.parent[i], :, :], positions[..., self.parent[i], :]
            R = R_parent @ joint.rotation
            origin = p_parent + R_parent @ joint.origin
            start = sl.start
            if not joint.type.rotational:
                axis = R @ joint.axes[0]
                axes[..., start, :] = axis
                points[..., start, :] = origin
                rotations[..., i, :, :] = R
                positions[..., i, :] = origin + axis * angles
                continue
            for k, a in enumerate(joint.axes):
                axes[..., start + k, :] = R @ a
                points[..., start + k, :] = origin
                R = R @ _rotations(a, angles[..., k])
            rotations[..., i, :, :] = R
            positions[..., i, :] = origin
        coms = positions + np.einsum("...lij,lj->...li", rotations, self.coms)
        return LinkFrames(rotations, positions, coms, axes, points)

    @staticmethod
    def _root_frame(joint, angles, sl, rotation_out, position_out, axes, points) -> None:
        """A root link in its own frame: identity pose; its DOF axes rotated back by the later DOFs."""
        rotation_out[...] = np.eye(3)
        position_out[...] = 0.0
        later = np.eye(3)
        for k in range(joint.ndof - 1, -1, -1):
            axes[..., sl.start + k, :] = np.swapaxes(later, -1, -2) @ joint.axes[k]
            points[..., sl.start + k, :] = 0.0
            if joint.type.rotational:
                later = _rotations(joint.axes[k], angles[..., k]) @ later

    def com_jacobians(self, frames: LinkFrames) -> tuple[np.ndarray, np.ndarray]:
        """(J_v, J_ω), each (..., L, 3, n): CoM linear and link angular velocity = J q̇, in the frames' reference."""
        z = frames.dof_axes[..., None, :, :]                      # (..., 1, n, 3)
        lever = frames.com_positions[..., :, None, :] - frames.dof_points[..., None, :, :]  # (..., L, n, 3)
        revolute = ~self.prismatic[:, None]
        linear = np.where(revolute, np.cross(z, lever), z) * self.moves[..., None]
        angular = np.where(revolute, z, 0.0) * self.moves[..., None]
        return np.swapaxes(linear, -1, -2), np.swapaxes(angular, -1, -2)

    def spatial_twists(self, frames: LinkFrames) -> np.ndarray:
        """Spatial twist ξ_k = (v, ω) of each DOF, shape (..., n, 6): v = o_k × z_k (= −z_k × o_k), ω = z_k."""
        z, o = frames.dof_axes, frames.dof_points
        revolute = ~self.prismatic[:, None]
        return np.concatenate([np.where(revolute, np.cross(o, z), z), np.where(revolute, z, 0.0)], axis=-1)


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
