"""The fingertip's world position and translational Jacobian as one compiled kernel, for the scene's physics step.

:class:`~discrete_robot.simulation.scene.SceneWorld` needs the fingertip centre (world x y) after every arm step
and, while an object pushes back, J(q) for the load Jᵀ f. :func:`~discrete_robot.model.inverse_kinematics.tool_pose`
and :func:`~discrete_robot.model.inverse_kinematics.tool_jacobian` compose 4×4 numpy transforms for the whole tree
(~50 and ~100 µs a call); here the model's compiled link frames
(:func:`discrete_robot.model.compiled._link_frames`, the rigid-body kernel's own) give them in a few µs, on arrays
prepared once (Model/Data layout, no allocation per call).

The link frames are those of the tool link's arm (its first link's frame, ``reference_rotation`` /
``reference_origin`` in the world): the tool point p = ref_R (p_i + R_i offset) + ref_p, and column k of J_p,
for each DOF k that moves the tool link, ref_R (z_k × (p̂ − o_k)) (revolute; p̂ the tool point in the arm's frame)
or ref_R z_k (prismatic). Mimic followers' columns are folded into their leaders' (∂q̄_f/∂q_leader =
multiplier). The same physics as tool_pose/tool_jacobian, summed in another order: the last bits may differ.
"""

from typing import NamedTuple

import numpy as np

from discrete_robot.geometry3d import cross_into, mat_vec
from discrete_robot.jit import bind, njit
from discrete_robot.model.compiled import Model, _link_frames, compile_model, model_dof


class FingerModel(NamedTuple):
    """The arm's compiled model (:class:`discrete_robot.model.compiled.Model`) and the tool point."""

    arm: Model
    moves_tool: np.ndarray      # (n̄,) bool: DOF k moves the tool link
    link: int                   # the tool link's index
    offset: np.ndarray          # (3,): the tool point in its link's frame, m


class FingerData(NamedTuple):
    """Results (``position`` (3,), m, world; ``jacobian`` (3, n), m per rad or m per m) and workspace."""

    position: np.ndarray
    jacobian: np.ndarray
    tree_q: np.ndarray
    R: np.ndarray
    p: np.ndarray
    c: np.ndarray
    ref_R: np.ndarray  # noqa: N815
    ref_p: np.ndarray
    axis: np.ndarray
    point: np.ndarray
    scratch: np.ndarray
    vectors: np.ndarray
    trig: np.ndarray            # (n̄, 2, 3): the frames' sine cache (discrete_robot.model.compiled._sine)
    local: np.ndarray           # (3, 3): the tool point, a column, its world image


@njit(allocates=False)
def fingertip(model, data, q, with_jacobian):
    """The tool point at joint positions q (n,) into data.position and, with ``with_jacobian``, J_p into
    data.jacobian (see the module docstring); ``model`` a :class:`FingerModel`, ``data`` a :class:`FingerData`."""
    arm, n, tree_q = model.arm, q.shape[0], data.tree_q
    for k in range(n):
        tree_q[k] = q[k]
    for f in range(arm.follower_leader.shape[0]):
        tree_q[n + f] = arm.follower_multiplier[f] * q[arm.follower_leader[f]] + arm.follower_offset[f]
    _link_frames(arm.links, arm.joint_rotation, arm.joint_origin, arm.com, arm.prismatic, arm.axes, tree_q, data.R,
                 data.p, data.c, data.ref_R, data.ref_p, data.axis, data.point, data.scratch, data.vectors,
                 data.trig)
    i, local = model.link, data.local
    tool, arm_vector, world = local[0], local[1], local[2]
    mat_vec(data.R[i], model.offset, tool)
    for x in range(3):
        tool[x] += data.p[i, x]
    mat_vec(data.ref_R[i], tool, world)
    for x in range(3):
        data.position[x] = world[x] + data.ref_p[i, x]
    if not with_jacobian:
        return
    jacobian = data.jacobian
    jacobian[:, :] = 0.0
    for k in range(tree_q.shape[0]):
        if not model.moves_tool[k]:
            continue
        if arm.prismatic[k]:
            mat_vec(data.ref_R[i], data.axis[k], world)
        else:
            for x in range(3):
                data.vectors[0, x] = tool[x] - data.point[k, x]
            cross_into(data.axis[k], data.vectors[0], arm_vector)
            mat_vec(data.ref_R[i], arm_vector, world)
        column, weight = k, 1.0
        if k >= n:
            column, weight = arm.follower_leader[k - n], arm.follower_multiplier[k - n]
        for x in range(3):
            jacobian[x, column] += weight * world[x]


@njit
def _bound_fingertip(binding, q, with_jacobian):
    fingertip(binding.model, binding.data, q, with_jacobian)


class Fingertip:
    """:func:`fingertip` of a RobotModel's tool point (a ToolPoint), from Python: ``position(q)`` (3,) and
    ``jacobian(q)`` (3, n), world, arrays of this object's (overwritten by the next call)."""

    def __init__(self, model, tool):
        compiled = compile_model(model)
        links = compiled.links
        chain, link = np.zeros(links.shape[0], dtype=bool), int(tool.link)
        while link >= 0:
            chain[link] = True
            link = int(links[link, 0])
        self.model = FingerModel(arm=compiled, moves_tool=chain[compiled.dof_link], link=int(tool.link),
                                 offset=np.asarray(tool.offset, dtype=float).copy())
        L, tree_n = links.shape[0], compiled.dof_link.shape[0]
        self.data = FingerData(
            position=np.empty(3), jacobian=np.empty((3, model_dof(compiled))), tree_q=np.empty(tree_n),
            R=np.empty((L, 3, 3)), p=np.empty((L, 3)), c=np.empty((L, 3)), ref_R=np.empty((L, 3, 3)),
            ref_p=np.empty((L, 3)), axis=np.empty((tree_n, 3)), point=np.empty((tree_n, 3)),
            scratch=np.empty((4, 3, 3)), vectors=np.empty((2, 3)), trig=np.full((tree_n, 2, 3), np.nan),
            local=np.empty((3, 3)))
        self._binding = bind(self.model, self.data)

    def position(self, q: np.ndarray) -> np.ndarray:
        """The tool point (m, world) at joint positions q (float array (n,))."""
        _bound_fingertip(self._binding, q, False)
        return self.data.position

    def jacobian(self, q: np.ndarray) -> np.ndarray:
        """J_p (3, n): the tool point's velocity per joint velocity at q (float array (n,))."""
        _bound_fingertip(self._binding, q, True)
        return self.data.jacobian
