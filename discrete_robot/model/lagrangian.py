"""The interface every integrator and planner works on: a mechanical system L = T - V.

T(q, q̇) = ½ q̇ᵀ M(q) q̇ with a symmetric positive-definite mass matrix M(q), and
V(q) the potential energy. Rigid-body robots (:mod:`discrete_robot.model.dynamics`)
and the hand-written systems of tests and examples implement it alike, so the
discrete model, the variational integrators and the planners never depend on
how M and V are computed.
"""

from typing import NamedTuple, Protocol, runtime_checkable

import numpy as np


class Terms(NamedTuple):
    """What a vectorized system's ``evaluate(q, derivatives)`` gives from one pass, in Pinocchio's names; shapes
    for configurations q (..., n)."""

    M: np.ndarray                   # (..., n, n): the mass matrix M(q), kg m² (kg for prismatic DOFs)
    potential_energy: np.ndarray    # (...): V(q), J
    dM: np.ndarray | None = None  # noqa: N815  (..., n, n, n): [k, i, j] = ∂M_ij/∂q_k (None without derivatives)
    g: np.ndarray | None = None     # (..., n): ∂V/∂q, N m or N (None without derivatives)


@runtime_checkable
class LagrangianSystem(Protocol):
    """A natural mechanical system in generalised coordinates q (rad or m)."""

    #: True when every method also takes a batch of configurations q of shape (..., n) and returns the
    #: values with that leading shape (callers then evaluate a batch in one call); a vectorized system may
    #: also offer ``evaluate(q, derivatives)`` returning its :class:`Terms` from one pass.
    #: A system may also name its ``periodic`` coordinates, an (n,) bool array of the angles on which M and V
    #: depend 2π-periodically (the discrete stepper then carries their whole turns apart)
    vectorized: bool

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


def velocity_product_forces(dM: np.ndarray, qd: np.ndarray) -> np.ndarray:
    """C(q, q̇) q̇ = (Σ_k ∂M/∂q_k q̇_k) q̇ − ½ [q̇ᵀ ∂M/∂q_k q̇]_k (Christoffel form), N m or N.

    ``dM`` (..., n, n, n) with [k, i, j] = ∂M_ij/∂q_k, ``qd`` (..., n) (rad/s or m/s); batched over ``...``.
    """
    return (np.einsum("...kij,...k,...j->...i", dM, qd, qd)
            - 0.5 * np.einsum("...kij,...i,...j->...k", dM, qd, qd))


def solve_mass_matrix(mass_matrix: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """M⁻¹ rhs by one Cholesky factorisation of the symmetric positive-definite M (rhs (n,) or (n, k)); raises
    ``np.linalg.LinAlgError`` when M is not positive definite."""
    # imported here: scipy.linalg costs a node ~0.3 s at start-up (issue 10: first message within 2 s of start)
    from scipy.linalg import cho_factor, cho_solve

    return cho_solve(cho_factor(mass_matrix), rhs)


def _dynamics_terms(system: LagrangianSystem, q: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """M(q), ∂M/∂q and ∂V/∂q, from one ``evaluate`` when the system is vectorized and has one."""
    evaluate = getattr(system, "evaluate", None)
    if evaluate is not None and system.vectorized:
        terms = evaluate(q, derivatives=True)
        return terms.M, terms.dM, terms.g
    return system.mass_matrix(q), system.mass_matrix_derivatives(q), system.potential_gradient(q)


def accelerations(system: LagrangianSystem, q, qd, tau) -> np.ndarray:
    """q̈ = M⁻¹ (τ − C(q, q̇) q̇ − ∂V/∂q) from the protocol, rad/s² or m/s².

    q, q̇, τ of shape (..., n) when the system is ``vectorized`` (one evaluation for the whole batch, from its
    ``evaluate`` when it has one), else (n,).
    """
    q, qd, tau = (np.asarray(v, dtype=float) for v in (q, qd, tau))
    M, dM, dV = _dynamics_terms(system, q)
    rhs = tau - velocity_product_forces(dM, qd) - dV
    return np.linalg.solve(M, rhs[..., None])[..., 0]


def generalized_forces(system: LagrangianSystem, q, qd, qdd) -> np.ndarray:
    """τ = M(q) q̈ + C(q, q̇) q̇ + ∂V/∂q from the protocol (the inverse of :func:`accelerations`), N m or N.

    Shapes as for :func:`accelerations`. For a rigid-body system this is one compiled evaluation; its
    ``inverse_dynamics`` (Newton–Euler, numpy) is the independent formulation tests compare it with.
    """
    q, qd, qdd = (np.asarray(v, dtype=float) for v in (q, qd, qdd))
    M, dM, dV = _dynamics_terms(system, q)
    return np.einsum("...ij,...j->...i", M, qdd) + velocity_product_forces(dM, qd) + dV


def kinetic_energy(system: LagrangianSystem, q: np.ndarray, qd: np.ndarray) -> float:
    """T = ½ q̇ᵀ M(q) q̇, J."""
    return 0.5 * float(qd @ system.mass_matrix(q) @ qd)


def total_energy(system: LagrangianSystem, q: np.ndarray, qd: np.ndarray) -> float:
    """E = T + V, J."""
    return kinetic_energy(system, q, qd) + system.potential(q)
