"""The interface every integrator and planner works on: a mechanical system L = T - V.

T(q, q̇) = ½ q̇ᵀ M(q) q̇ with a symmetric positive-definite mass matrix M(q), and
V(q) the potential energy. Rigid-body robots (:mod:`discrete_robot.model.dynamics`)
and the hand-written systems of tests and examples implement it alike, so the
discrete model, the variational integrators and the planners never depend on
how M and V are computed.
"""

from typing import Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class LagrangianSystem(Protocol):
    """A natural mechanical system in generalised coordinates q (rad or m)."""

    @property
    def dof(self) -> int:
        """Number of generalised coordinates n."""
        ...

    def mass_matrix(self, q: np.ndarray) -> np.ndarray:
        """M(q), shape (n, n), kg m² / kg."""
        ...

    def mass_matrix_derivatives(self, q: np.ndarray) -> np.ndarray:
        """∂M/∂q, shape (n, n, n) with [k, i, j] = ∂M_ij/∂q_k."""
        ...

    def potential(self, q: np.ndarray) -> float:
        """V(q), J."""
        ...

    def potential_gradient(self, q: np.ndarray) -> np.ndarray:
        """∂V/∂q, shape (n,), N m or N."""
        ...


def kinetic_energy(system: LagrangianSystem, q: np.ndarray, qd: np.ndarray) -> float:
    """T = ½ q̇ᵀ M(q) q̇, J."""
    return 0.5 * float(qd @ system.mass_matrix(q) @ qd)


def total_energy(system: LagrangianSystem, q: np.ndarray, qd: np.ndarray) -> float:
    """E = T + V, J."""
    return kinetic_energy(system, q, qd) + system.potential(q)
