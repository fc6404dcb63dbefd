"""Midpoint variational integrator for any natural mechanical system L = ½ q̇ᵀM(q)q̇ − V(q).

Discrete Lagrangian (Lee, Leok & McClamroch, "Discrete Control Systems", eq. (8) generalised)::

    L_d(q0, q1, h) = h L(q̄, v),   q̄ = (q0 + q1)/2,   v = (q1 − q0)/h.

With a(q̄, v) = ∂L/∂q(q̄, v), i.e. a_k = ½ vᵀ ∂M/∂q_k v − ∂V/∂q_k::

    D1 L_d = h/2 a − M(q̄) v,     D2 L_d = h/2 a + M(q̄) v.

The discrete Euler–Lagrange equations D2 L_d(q_{k−1}, q_k) + D1 L_d(q_k, q_{k+1}) = 0 (article eq. (3)),
with forces by the discrete Lagrange–d'Alembert principle, are integrated in position–momentum
form through the forced discrete Legendre transforms::

    p_k = −D1 L_d(q_k, q_{k+1}) − f⁻,    p_{k+1} = D2 L_d(q_k, q_{k+1}) + f⁺,

where the generalised force held over the step enters at the midpoint: f⁻ = f⁺ = h/2 · force.
The first equation is implicit in q_{k+1} and solved by Newton's method; the second is explicit.
p is the discrete counterpart of the continuous momentum M(q) q̇ (same units: kg m²/s or kg m/s).

The step is symmetric: L_d(q1, q0, −h) = −L_d(q0, q1, h), so a step by −h from (q_{k+1}, p_{k+1}) (force held)
returns to (q_k, p_k), and ``order`` 4 or 6 composes it (:mod:`discrete_robot.composition`), each sub-step a
symplectic map, so the composition is one too.
"""

import logging
from dataclasses import dataclass

import numpy as np

from discrete_robot.composition import FRACTIONS
from discrete_robot.errors import ConvergenceError, InputError
from discrete_robot.model.lagrangian import LagrangianSystem
from discrete_robot.validation import finite_vector, positive_step

LOGGER = logging.getLogger(__name__)
EPS = np.finfo(float).eps


@dataclass(frozen=True)
class VariationalTrajectory:
    """Samples q_k, p_k at t_k = k h; velocities q̇_k = M(q_k)⁻¹ p_k and energies T + V at the samples."""

    t: np.ndarray
    q: np.ndarray
    p: np.ndarray
    qd: np.ndarray
    energy: np.ndarray
    newton_iterations: np.ndarray



class MidpointVariationalIntegrator:
    """Forced discrete Euler–Lagrange equations of the midpoint discrete Lagrangian.

    ``tol`` is the convergence threshold on the residual of the implicit equation, relative to the momenta;
    ``max_iter`` bounds the iterations before :class:`ConvergenceError` is raised; ``order``: 2 (the midpoint
    step), 4 or 6 (its compositions, module docstring).
    """

    def __init__(self, system: LagrangianSystem, tol: float = 1e-14, max_iter: int = 50, order: int = 2):
        if not isinstance(system, LagrangianSystem):
            raise InputError(f"{type(system).__name__} does not implement the LagrangianSystem protocol")
        if not (0.0 < tol < 1.0):
            raise InputError(f"tol must be in (0, 1), got {tol}")
        if max_iter < 1:
            raise InputError(f"max_iter must be at least 1, got {max_iter}")
        if order not in FRACTIONS:
            raise InputError(f"order must be one of {sorted(FRACTIONS)}, got {order!r}")
        self.fractions = FRACTIONS[order]
        self.system = system
        self.tol = float(tol)
        self.max_iter = int(max_iter)

    @property
    def dof(self) -> int:
        return self.system.dof

    def _midpoint_terms(self, q0: np.ndarray, q1: np.ndarray, h: float):
        """M(q̄), ∂M/∂q(q̄)·v (shape (n, n), [k, i] = Σ_j ∂M_ij/∂q_k v_j), a = ∂L/∂q(q̄, v) and v."""
        qm = 0.5 * (q0 + q1)
        v = (q1 - q0) / h
        M = self.system.mass_matrix(qm)
        dMv = self.system.mass_matrix_derivatives(qm) @ v
        a = 0.5 * (dMv @ v) - self.system.potential_gradient(qm)
        return M, dMv, a, v

    def discrete_lagrangian(self, q0, q1, h: float) -> float:
        """L_d(q0, q1, h) = h [½ vᵀM(q̄)v − V(q̄)], J s."""
        n, h = self.dof, positive_step(h, "time step h")
        q0, q1 = finite_vector(q0, n, "q0"), finite_vector(q1, n, "q1")
        qm, v = 0.5 * (q0 + q1), (q1 - q0) / h
        return h * (0.5 * float(v @ self.system.mass_matrix(qm) @ v) - self.system.potential(qm))

    def d1_lagrangian(self, q0, q1, h: float) -> np.ndarray:
        """D1 L_d(q0, q1, h) = h/2 ∂L/∂q(q̄, v) − M(q̄) v, shape (n,) (momentum units)."""
        n, h = self.dof, positive_step(h, "time step h")
        M, _, a, v = self._midpoint_terms(finite_vector(q0, n, "q0"), finite_vector(q1, n, "q1"), h)
        return 0.5 * h * a - M @ v

    def d2_lagrangian(self, q0, q1, h: float) -> np.ndarray:
        """D2 L_d(q0, q1, h) = h/2 ∂L/∂q(q̄, v) + M(q̄) v, shape (n,) (momentum units)."""
        n, h = self.dof, positive_step(h, "time step h")
        M, _, a, v = self._midpoint_terms(finite_vector(q0, n, "q0"), finite_vector(q1, n, "q1"), h)
        return 0.5 * h * a + M @ v

    def _solve_position(self, q: np.ndarray, p_left: np.ndarray, h: float, guess: np.ndarray):
        """q1 with −D1 L_d(q, q1) = p_left by a quasi-Newton iteration; returns (q1, iterations, terms at q1).

        Own iteration rather than scipy.optimize.root: most of the Jacobian ∂(D1 L_d)/∂q1 = ½(A − Aᵀ) − M(q̄)/h
        + B, A = ∂M/∂q·v, comes in closed form from M and ∂M/∂q, which the protocol provides and the residual
        needs anyway. Only B = h/4 ∂a/∂q̄ needs ∂²M/∂q² and ∂²V/∂q², which the protocol does not provide; it
        is O(h²) small next to M/h and is learnt by Broyden's secant update (B starts at zero). So each
        iteration costs one evaluation of M, ∂M/∂q, ∇V and one n×n solve — a finite-difference Jacobian
        would cost n more — and converges superlinearly. The residual itself is exact, so the solution is.

        Converged when the residual (a momentum) is below ``tol`` (|p| + |M v|), or when the correction is
        below the resolution of q1.
        """
        q1, correction, previous = guess, np.zeros((self.dof, self.dof)), None
        for iteration in range(self.max_iter + 1):
            M, dMv, a, v = terms = self._midpoint_terms(q, q1, h)
            Mv = M @ v
            residual = p_left + 0.5 * h * a - Mv
            if np.max(np.abs(residual)) <= self.tol * (np.max(np.abs(p_left)) + np.max(np.abs(Mv))):
                return q1, iteration, terms
            if iteration == self.max_iter or not np.all(np.isfinite(residual)):
                break
            analytic = 0.5 * (dMv - dMv.T) - M / h
            if previous is not None:
                step, residual_change = previous[0], residual - previous[1]
                correction += np.outer(residual_change - (analytic + correction) @ step, step) / (step @ step)
            delta = np.linalg.solve(analytic + correction, -residual)
            # Below the resolution of q1 the residual cannot improve any more (it is then about eps |M| |q1|/h).
            if np.max(np.abs(delta)) <= 4.0 * EPS * max(1.0, np.max(np.abs(q1))):
                return q1, iteration, terms
            q1 = q1 + delta
            previous = (delta, residual)
        raise ConvergenceError(
            f"midpoint variational step did not converge in {self.max_iter} iterations at h = {h} s from q = {q} "
            f"(residual {np.max(np.abs(residual)):.3e}); reduce the time step")

    def step(self, q, p, h: float, force=None) -> tuple[np.ndarray, np.ndarray]:
        """One step (q_k, p_k) ↦ (q_{k+1}, p_{k+1}) under a generalised force held over the step (N m or N)."""
        n, h = self.dof, positive_step(h, "time step h")
        q, p = finite_vector(q, n, "q"), finite_vector(p, n, "p")
        q1, p1, _ = self._advance(q, p, h, np.zeros(n) if force is None else finite_vector(force, n, "force"))
        return q1, p1

    def _advance(self, q: np.ndarray, p: np.ndarray, h: float, force: np.ndarray):
        """One step of the integrator's order: its sub-steps of fractions h (some negative); (q1, p1, iterations)."""
        iterations = 0
        for fraction in self.fractions:
            q, p, used = self._step(q, p, fraction * h, force)
            iterations += used
        return q, p, iterations

    def _step(self, q: np.ndarray, p: np.ndarray, h: float, force: np.ndarray):
        impulse = 0.5 * h * force
        p_left = p + impulse
        M = self.system.mass_matrix(q)
        # Second-order Taylor guess without the velocity-squared terms: Newton starts O(h³) away.
        guess = q + h * np.linalg.solve(M, p + 0.5 * h * (force - self.system.potential_gradient(q)))
        q1, iterations, (M, _, a, v) = self._solve_position(q, p_left, h, guess)
        return q1, 0.5 * h * a + M @ v + impulse, iterations

    def simulate(self, q0, qd0, h: float, n_steps: int, forces=None) -> VariationalTrajectory:
        """n_steps steps from (q0, q̇0), p0 = M(q0) q̇0; ``forces`` (n_steps, n) is held over each step."""
        n, h = self.dof, positive_step(h, "time step h")
        if n_steps < 0:
            raise InputError(f"n_steps must be non-negative, got {n_steps}")
        q0, qd0 = finite_vector(q0, n, "q0"), finite_vector(qd0, n, "qd0")
        if forces is None:
            forces = np.zeros((n_steps, n))
        else:
            forces = np.asarray(forces, dtype=float)
            if forces.shape != (n_steps, n) or not np.all(np.isfinite(forces)):
                raise InputError(f"forces: expected finite values of shape {(n_steps, n)}, got {forces.shape}")
        q = np.empty((n_steps + 1, n))
        p = np.empty((n_steps + 1, n))
        iterations = np.zeros(n_steps, dtype=int)
        q[0], p[0] = q0, self.system.mass_matrix(q0) @ qd0
        for k in range(n_steps):
            q[k + 1], p[k + 1], iterations[k] = self._advance(q[k], p[k], h, forces[k])
        qd = np.array([np.linalg.solve(self.system.mass_matrix(qk), pk) for qk, pk in zip(q, p, strict=True)])
        energy = np.array([0.5 * float(pk @ qdk) + self.system.potential(qk) for qk, pk, qdk in zip(q, p, qd,
                                                                                                     strict=True)])
        LOGGER.debug("midpoint VI: %d steps, mean %.1f Newton iterations", n_steps,
                     iterations.mean() if n_steps else 0.0)
        return VariationalTrajectory(np.arange(n_steps + 1) * h, q, p, qd, energy, iterations)
