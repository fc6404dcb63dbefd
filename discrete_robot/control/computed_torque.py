"""Computed torque on a trajectory reference, the hold, effort commands, and saturation at the effort limits.

The control law is computed torque: the desired acceleration corrected by PD,

    τ = ID(q, q̇, q̈_d + k_d (q̇_d − q̇) + k_p (q_d − q)),

i.e. feedforward inverse dynamics of the reference plus a PD term that acts through the
same inverse dynamics, so k_p (1/s²) and k_d (1/s) give every joint the error dynamics
ë + k_d ė + k_p e = 0 whatever its inertia. When the trajectory carries efforts (a plan on the
same model), they replace the inverse dynamics of the reference as feedforward:

    τ = τ_d + M(q) (k_d (q̇_d − q̇) + k_p (q_d − q)).

τ is then saturated at the effort limits. A reference at rest at q_h is the hold: PD with gravity
compensation, τ = g(q_h) at q = q_h, q̇ = 0, which holds the pose exactly (ID(q, 0, 0) = g(q)).
"""

from collections.abc import Callable

import numpy as np

from discrete_robot.control.trajectory import Reference
from discrete_robot.model.lagrangian import generalized_forces


def tracking_torques(system, q: np.ndarray, qd: np.ndarray, reference: Reference, kp: float, kd: float,
                     effort_limits: np.ndarray) -> np.ndarray:
    """τ = ID(q, q̇, q̈_d + k_d (q̇_d − q̇) + k_p (q_d − q)), or with the reference's efforts τ_d as feedforward
    τ = τ_d + M(q) (k_d (q̇_d − q̇) + k_p (q_d − q)); saturated at ±effort_limits (N m or N)."""
    correction = kd * (reference.qd - qd) + kp * (reference.q - q)
    if reference.effort is not None:
        return saturate(reference.effort + system.mass_matrix(q) @ correction, effort_limits)
    return saturate(generalized_forces(system, q, qd, reference.qdd + correction), effort_limits)


def saturate(tau: np.ndarray, effort_limits: np.ndarray) -> np.ndarray:
    """τ clipped to ±effort_limits (inf = unlimited)."""
    return np.clip(tau, -effort_limits, effort_limits)


def at_limit(tau: np.ndarray, effort_limits: np.ndarray) -> np.ndarray:
    """The indices of the joints whose |τ| has reached a finite effort limit (saturated)."""
    return np.flatnonzero(np.isfinite(effort_limits) & (np.abs(tau) >= effort_limits))


def embed_reference(reference: Reference, indices: np.ndarray, held: np.ndarray,
                    inverse_dynamics: Callable[[np.ndarray], np.ndarray]) -> Reference:
    """The controller's ``reference`` (its joints, at model indices ``indices``) as a reference for all n
    degrees of freedom: the others held at rest at ``held`` (n,; q̈_d = 0 there), as the controller holds its own
    joints without a goal. With efforts, the others' feedforward is τ_i = ID(q̈_d)_i (``inverse_dynamics`` maps
    the full q̈_d to τ, N m or N), which makes the law on them the computed torque without efforts."""
    q, qd, qdd = held.copy(), np.zeros_like(held), np.zeros_like(held)
    q[indices], qd[indices], qdd[indices] = reference.q, reference.qd, reference.qdd
    effort = None
    if reference.effort is not None:
        effort = inverse_dynamics(qdd)
        effort[indices] = reference.effort
    return Reference(q, qd, qdd, effort, reference.index)


class TrajectoryTracking:
    """Computed torque over every joint of ``system``: the trajectory controller's joints (model indices
    ``controlled``) track its reference, the others are held at rest where they were when it took over
    (:func:`embed_reference`); saturated at ``effort_limits``.

    ``reference(t)`` gives the controller's desired state at simulated time t (its joints' order) and ``gains()``
    the per-joint k_p (1/s²) and k_d (1/s) of every joint, read at each update (they may change between)."""

    def __init__(self, system, controlled: np.ndarray, effort_limits: np.ndarray,
                 reference: Callable[[float], Reference], gains: Callable[[], tuple[np.ndarray, np.ndarray]]):
        self.system, self.controlled, self.effort_limits = system, controlled, effort_limits
        self.reference, self.gains = reference, gains
        self.joints = np.arange(len(effort_limits))
        self.held: np.ndarray | None = None

    def take_over(self, q: np.ndarray) -> None:
        """The controller drives from the state q: the other joints are held at their positions in q, unless they
        already are held (a new goal keeps the hold the first one set)."""
        if self.held is None:
            self.held = q.copy()

    def release(self) -> None:
        """The controller stops driving: the next take-over holds the other joints where they are then."""
        self.held = None

    def update(self, t: float, q: np.ndarray, v: np.ndarray) -> np.ndarray:
        reference = self.reference(t)
        if self.controlled.size < self.joints.size:
            reference = embed_reference(reference, self.controlled, self.held,
                                        lambda qdd: generalized_forces(self.system, q, v, qdd))
        kp, kd = self.gains()
        return tracking_torques(self.system, q, v, reference, kp, kd, self.effort_limits)


class EffortCommand:
    """Efforts commanded directly (ros2_control's effort group controller): the last command, one per joint of
    ``joints`` (model indices), held until the next, saturated at ``effort_limits`` (N m or N); zero at first."""

    def __init__(self, joints: np.ndarray, effort_limits: np.ndarray):
        self.joints, self.effort_limits = joints, effort_limits
        self.command = np.zeros(len(joints))

    def update(self, t: float, q: np.ndarray, v: np.ndarray) -> np.ndarray:
        return saturate(self.command, self.effort_limits)
