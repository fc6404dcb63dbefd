"""Joint dissipation (URDF ``<dynamics>``): viscous damping and Coulomb friction as generalised forces.

In the discrete model the dissipative force of joint r is evaluated at the step's mean velocity
v̄_r = Δq_r/Δt = (q̇_r(k) + q̇_r(k+1))/2 (the smoothing formula) and held over the step::

    F_r(v̄) = −c_r v̄_r − f_r tanh(v̄_r / v_s)

c_r: damping (N m s/rad or N s/m), f_r: Coulomb friction (N m or N), v_s: :data:`FRICTION_VELOCITY`.
Potts' discrete energy identity ΔT + ΔV = Σ_r F_r Δq_r (seed 000, eqs. 3.6–3.7) holds for any force held
over the step, so T + V decreases over the step by exactly the dissipated work

    W = Δt Σ_r (c_r v̄_r² + f_r v̄_r tanh(v̄_r / v_s)) ≥ 0.

Why tanh rather than the set-valued sign: a sticking joint would need a complementarity solve coupled
through a(q) in every Newton iteration; the smooth law keeps the step a smooth root-finding problem.
The price is creep: a joint loaded below its friction slides at |v̄| ≈ v_s·artanh(|load|/f_r).
"""

from dataclasses import dataclass

import numpy as np

from discrete_robot.errors import InputError

#: the regularisation speed of Coulomb friction, rad/s or m/s: tanh(v/v_s) reaches 0.995 of the full force
#: at 3 v_s, so a joint moving faster than a few cm/s (or deg/s) feels the whole friction
FRICTION_VELOCITY = 0.01


@dataclass(frozen=True)
class Dissipation:
    """Per-joint damping c (N m s/rad or N s/m) and Coulomb friction f (N m or N), both >= 0."""

    damping: np.ndarray
    friction: np.ndarray

    def __post_init__(self):
        for name in ("damping", "friction"):
            value = getattr(self, name)
            if not (np.all(np.isfinite(value)) and np.all(value >= 0.0)):
                raise InputError(f"{name}: expected finite values >= 0, got {np.asarray(value).tolist()}")

    @classmethod
    def from_model(cls, model) -> "Dissipation | None":
        """The model file's dissipation, or None when every joint is free of it."""
        damping, friction = np.asarray(model.damping, float), np.asarray(model.friction, float)
        if not (np.any(damping > 0.0) or np.any(friction > 0.0)):
            return None
        return cls(damping, friction)

    def of(self, joints: np.ndarray) -> "Dissipation":
        """The dissipation of the joints at indices ``joints`` (a branch of the tree)."""
        return Dissipation(self.damping[joints], self.friction[joints])

    def forces(self, velocity: np.ndarray) -> np.ndarray:
        """F(v) = −c v − f tanh(v/v_s), N m or N, at joint velocities v (rad/s or m/s)."""
        return -self.damping * velocity - self.friction * np.tanh(velocity / FRICTION_VELOCITY)

    def power(self, velocity: np.ndarray) -> float:
        """The dissipated power −F(v)·v ≥ 0, W."""
        return float(-self.forces(velocity) @ velocity)
