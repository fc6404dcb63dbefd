"""Position limits as hard stops: a perfectly plastic (default) or perfectly elastic joint-space impact.

When a step ends with joints past their limits, their positions are set back onto the limits and the
velocities receive the impulse that stops the joints S that still move outward, and nothing more
(Gauss's principle of least constraint for a plastic impact)::

    Δq̇ = −M⁻¹ E_S λ,   (E_Sᵀ M⁻¹ E_S) λ = q̇_S,   so that q̇_S(after) = 0,

E_S: the unit columns of the stopped joints, M = a(q) at the limit. The impulse Δp = M Δq̇ = −E_S λ acts
on the stopped joints only: every other joint's generalised momentum p_r is unchanged. The stop removes
exactly the kinetic energy of the stopped motion,

    ΔT = −½ λ·q̇_S = −½ q̇_Sᵀ (E_Sᵀ M⁻¹ E_S)⁻¹ q̇_S ≤ 0  (one joint i: −½ q̇_i² / (M⁻¹)_ii),

and it conserves nothing more: a real end stop dissipates this energy as heat and sound. Setting q back
onto the limit changes V by V(q_limit) − V(q) (first order in the overshoot, at most one step's travel).

S solves the impact's linear complementarity problem: a stop only pushes inward (λ_i ≥ 0 at an upper
limit, ≤ 0 at a lower one) and a joint on a limit that is not stopped leaves it inward or not at all.
E_Sᵀ M⁻¹ E_S is positive definite, so exactly one S among the joints on their limits satisfies both; it is
found by trying the subsets, smallest first (the joints on a limit at one instant are few).

An elastic stop (restitution 1) gives the same joints twice that impulse, Δq̇ = −2 M⁻¹ E_S λ, so q̇_S(after) =
−q̇_S and T is unchanged exactly: ΔT = −2 λ·q̇_S + 2 λᵀ (E_Sᵀ M⁻¹ E_S) λ = 0. Its positions are left where the
step put them (up to one step's travel past the limit, from where the reversed motion returns), so V is
unchanged too: T + V keeps the discrete model's round-off conservation through every impact. It models a stop
that stores and returns the energy of the impact, as a stiff spring does, without the spring's step-size
limit; the Panda's free fingers between their 0 and 0.04 m stops keep T + V to 6.5e-13 over 10⁵ steps of 1 ms.
"""

import itertools
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class StopResult:
    """State after the stops (rad or m, rad/s or m/s), the kinetic energy they removed (J, ≥ 0) and the
    indices of the stopped joints."""

    q: np.ndarray
    qd: np.ndarray
    removed_energy: float
    stopped: tuple[int, ...]


def beyond_limits(q: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> bool:
    """True when any joint is outside [lower, upper] (infinite limits never are)."""
    return bool((q < lower).any() or (q > upper).any())


def stop_at_limits(mass_matrix: np.ndarray, q, qd, lower: np.ndarray, upper: np.ndarray,
                   elastic: bool = False) -> StopResult:
    """The stop impulse (module docstring) with M = ``mass_matrix`` (kg m² or kg) evaluated at the state's
    positions: plastic, q clamped into [lower, upper] (M at the clamped q); or ``elastic``, q as it is."""
    q_stopped = np.asarray(q, dtype=float).copy() if elastic else np.clip(np.asarray(q, dtype=float), lower, upper)
    qd = np.asarray(qd, dtype=float)
    outward = np.where(q_stopped >= upper, 1.0, 0.0) - np.where(q_stopped <= lower, 1.0, 0.0)
    on_limit = [int(i) for i in np.flatnonzero(outward)]
    if not any(outward[i] * qd[i] > 0.0 for i in on_limit):
        return StopResult(q_stopped, qd.copy(), 0.0, ())
    inverse = np.linalg.inv(mass_matrix)
    slack = 1e-12 * float(np.max(np.abs(qd)))  # round-off allowance on the velocity conditions, rad/s or m/s
    for size in range(1, len(on_limit) + 1):
        for stopped in itertools.combinations(on_limit, size):
            stopped = list(stopped)
            impulse = np.linalg.solve(inverse[np.ix_(stopped, stopped)], qd[stopped])
            after = qd - inverse[:, stopped] @ impulse
            after[stopped] = 0.0  # exactly, not to round-off
            pushes_inward = all(outward[i] * value >= -slack * abs(inverse[i, i]) ** -1
                                for i, value in zip(stopped, impulse, strict=True))
            if pushes_inward and all(outward[i] * after[i] <= slack for i in on_limit):
                if elastic:
                    after = qd - 2.0 * inverse[:, stopped] @ impulse
                    after[stopped] = -qd[stopped]
                    return StopResult(q_stopped, after, 0.0, tuple(stopped))
                return StopResult(q_stopped, after, 0.5 * float(impulse @ qd[stopped]), tuple(stopped))
    raise ArithmeticError("joint stops: no consistent set of stopped joints (the mass matrix is not positive "
                          "definite)")
