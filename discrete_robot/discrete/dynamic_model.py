"""The discrete dynamic robot model: energy- and momentum-conserving discrete Lagrange equations.

Potts (seed 000, eq. 3.5 with 3.11 and 3.12), for a system with mass matrix a(q),
potential V(q) and generalised forces F held over the step k -> k+1 of length Δt::

    Δ[Σ_j a_rj q̇_j]/Δt − ½ Σ_ij (Δ_r a_ij / Δq_r) Q(q̇_i, q̇_j) + Δ_r V / Δq_r = F_r,   r = 1..n

    Δq_i / Δt = (q̇_i(k+1) + q̇_i(k)) / 2                         (smoothing formula, 3.11)
    Q(q̇_i, q̇_j) = [q̇_i(k) q̇_j(k+1) + q̇_i(k+1) q̇_j(k)] / 2       (3.12)

Δ_r is the partial-difference operator (:mod:`.partial_difference`). Multiplying by
Δq_r and summing over r with (2.5) gives exactly ΔT + ΔV = Σ_r F_r Δq_r (3.6-3.7), so
with F = 0 the energy T + V is conserved to round-off for any Δt; and with (2.6) a
cyclic coordinate's momentum Σ_j a_rj q̇_j changes exactly by F_r Δt.

Solving a step. Given q(k), q̇(k), F, the unknown is q̇(k+1) (q(k+1) follows from the
smoothing formula); the equations are solved by Newton's method on the residual in
q̇(k+1) with its analytic Jacobian (D_r = Δ_r/Δq_r, x = q̇(k+1), q(k+1) moving by Δt/2 per unit x)::

    J_rk = a_rk(q(k+1))/Δt + ½ Σ_j ∂_k a_rj(q(k+1)) x_j − ½ Σ_i D_r a_ik q̇_i(k) + (Δt/2) ∂(D_r f)/∂q_k(k+1),

    f = V − ½ q̇(k)ᵀ a x,   ∂(D_r f)/∂q_k(k+1) = [∂_k f(x_{s+1}) [k moved at s+1] − ∂_k f(x_s) [k moved at s]
                                                  − δ_rk D_r f] / Δq_r,

where x_s -> x_{s+1} is the path edge along which q_r moves (averaged over the paths). It
needs ∂a/∂q and ∂V/∂q at the path vertices, one more batched evaluation. Where |Δq_r| is
below 1e-8 that row's last term (relative size O(Δt²)) is left out rather than divided by
almost zero. The Jacobian is refreshed while the update exceeds 1e-4 of the velocity
scale and reused below that (chord steps, which then contract as fast). Iterations stop
when the error left after the last update, estimated from the contraction rate as
|δ|·θ/(1−θ) (θ = |δ_k|/|δ_(k−1)|), is below ``tol`` relative to the velocity scale, or
when the iteration has stopped contracting (θ ≥ ½) at the round-off floor (the residual's
round-off, ε |a| |q̇|/Δt, mapped through |J⁻¹|: with an ill-conditioned a(q) that floor
lies above ``tol``). After the first update, whose contraction is not yet known, the error
it leaves is bounded by κ|δ|² instead (:func:`.newton.quadratic_bound`), and trusted only
below 1e-18 of the velocity scale, far below round-off: a start predicted that closely (a
continuing compiled run's, :func:`.newton.held_steps`) costs one evaluation of the equations.
A step that does not converge within ``max_iter`` from any starting guess raises
:class:`ConvergenceError`.

Joint damping and Coulomb friction (:mod:`.dissipation`) enter as a force F_d(Δq/Δt) held over the step,
added to F; its Jacobian adds −½ dF_d/dv̄ on the diagonal. The energy identity then makes T + V fall by
exactly the dissipated work.

Every configuration-dependent quantity of a step is evaluated at the 2n path vertices
in one call when the system is ``vectorized``; for a :class:`RigidBodySystem` (which carries its model as
flat arrays) one compiled kernel (:mod:`.compiled`) evaluates the whole left-hand side and its Jacobian.
"""

import functools
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from discrete_robot.discrete import compiled, newton
from discrete_robot.discrete.dissipation import Dissipation
from discrete_robot.discrete.partial_difference import SMALL_STEP, DifferencePaths, PathOperator, quotients
from discrete_robot.errors import ConvergenceError, InputError
from discrete_robot.jit import bind
from discrete_robot.model import compiled as arm_compiled
from discrete_robot.model.lagrangian import LagrangianSystem, Terms, accelerations
from discrete_robot.validation import positive_step

LOGGER = logging.getLogger(__name__)

_EPS = np.finfo(float).eps


@dataclass(frozen=True)
class StepResult:
    """State at k+1 (rad or m, rad/s or m/s), Newton iterations used, and |residual|∞ (N m or N) at the
    iterate before the last Newton update (the returned state's residual is smaller still)."""

    q: np.ndarray
    qd: np.ndarray
    iterations: int
    residual_norm: float


@dataclass(frozen=True)
class Trajectory:
    """Samples at t_k = k Δt: q, q̇ (steps+1, n), energy T + V (steps+1,), forces held over each step (steps, n)."""

    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    energy: np.ndarray
    forces: np.ndarray
    iterations: np.ndarray


@dataclass(frozen=True)
class _Terms:
    """What one evaluation of the discrete equations yields (everything but the force)."""

    lhs: np.ndarray          # Δ[a q̇]/Δt − ½ qd0ᵀ D_r a qd1 + D_r V, (n,)
    a1: np.ndarray           # a(q(k+1))
    Da: np.ndarray           # D_r a_ij, (n, n, n)
    DV: np.ndarray           # D_r V, (n,)
    dq: np.ndarray           # q(k+1) − q(k)
    noise: np.ndarray        # round-off of lhs (see compiled.step_terms), (n,)
    da: np.ndarray | None    # ∂a/∂q at the vertices (P, n+1, n, n, n), when asked for
    dv: np.ndarray | None    # ∂V/∂q at the vertices (P, n+1, n)


class _EntryPoints(NamedTuple):
    """A thread's Newton data and the step's three entry points (:meth:`DiscreteDynamicModel._entry_points`)."""

    data: newton.Data
    step: Callable                      # (q0, v0, tau, dt, guess) -> (status, iterations, residual, update)
    held_steps: Callable | None         # :func:`.newton.held_steps` less its model and data (None: not compiled)
    left_hand_sides: Callable           # (q0, v0, q1, v1, dt, out): the equations' left-hand sides of m steps


class _Evaluations:
    """a, V and their derivatives at a batch of configurations.

    A ``vectorized`` system (the LagrangianSystem protocol) takes q of shape (..., n) in every method, and may offer
    ``evaluate(q, derivatives)`` returning its :class:`~discrete_robot.model.lagrangian.Terms` from one pass (as
    :class:`RigidBodySystem` does); any other system is called once per configuration.
    """

    def __init__(self, system: LagrangianSystem):
        self.system = system
        self.vectorized = bool(system.vectorized)

    def _batch(self, method: Callable, points: np.ndarray):
        if self.vectorized:
            return method(points)
        values = np.array([method(x) for x in points.reshape(-1, points.shape[-1])])
        return values.reshape(points.shape[:-1] + values.shape[1:])

    def evaluate(self, points, derivatives: bool) -> Terms:
        """The :class:`~discrete_robot.model.lagrangian.Terms` at ``points`` (..., n), with ∂a/∂q and ∂V/∂q when
        ``derivatives``."""
        combined = getattr(self.system, "evaluate", None)
        if combined is not None and self.vectorized:
            return combined(points, derivatives)
        a, V = self._batch(self.system.mass_matrix, points), self._batch(self.system.potential, points)
        if not derivatives:
            return Terms(a, V)
        return Terms(a, V, self._batch(self.system.mass_matrix_derivatives, points),
                     self._batch(self.system.potential_gradient, points))

    def mass_derivatives(self, points):
        return self._batch(self.system.mass_matrix_derivatives, points)

    def potential_gradient(self, points):
        return self._batch(self.system.potential_gradient, points)


class DiscreteDynamicModel:
    """Discrete Lagrange equations of ``system`` with partial-difference ``operator``.

    ``tol``: Newton stops when the update of q̇(k+1) is below tol × the velocity scale
    (max |q̇| at k and k+1, or the velocity change the forces can cause); ``max_iter`` bounds the
    iterations; ``small_step`` (rad or m) is where D_r switches to the derivative form (the compiled kernel's
    turned coordinates need no switch: :mod:`.partial_difference`); ``dissipation``:
    joint damping and friction (None = a conservative system); ``turned_differences``: the compiled kernel takes
    D_r a and D_r V by turning each coordinate's subtree, without the divided difference's cancellation ε|f|/|Δq_r|
    (:mod:`.partial_difference`). The compositions of order 4 and 6 take it: their error reaches that round-off.
    The second-order step keeps the divided difference, 5 – 15 % cheaper at 1 kHz, whose round-off lies far below
    its own O(Δt²) error.
    """

    def __init__(self, system: LagrangianSystem, operator: PathOperator = PathOperator.SYMMETRIC,
                 tol: float = newton.DEFAULT_TOL, max_iter: int = 50, small_step: float = SMALL_STEP,
                 dissipation: Dissipation | None = None, turned_differences: bool = False):
        if not isinstance(system, LagrangianSystem):
            raise InputError(f"{type(system).__name__} does not implement the LagrangianSystem protocol")
        if not 0.0 < tol < 1e-3:
            raise InputError(f"tol must be in (0, 1e-3), got {tol}")
        if max_iter < 1:
            raise InputError(f"max_iter must be at least 1, got {max_iter}")
        if not small_step > 0.0:
            raise InputError(f"small_step must be > 0, got {small_step}")
        self.system = system
        self.operator = PathOperator(operator)
        self.tol = float(tol)
        self.max_iter = int(max_iter)
        self.small_step = float(small_step)
        self.turned_differences = bool(turned_differences)
        if dissipation is not None and (dissipation.damping.shape != (system.dof,)
                                        or dissipation.friction.shape != (system.dof,)):
            raise InputError(f"dissipation: expected {system.dof} damping and friction values")
        self.dissipation = dissipation
        self.paths = DifferencePaths(system.dof, self.operator)
        self._shape = (system.dof,)
        self._eval = _Evaluations(system)
        zero = np.zeros(system.dof)
        #: the joints' damping and friction (zeros without dissipation), read by Newton's loop as the model's
        self.damping = zero if dissipation is None else np.asarray(dissipation.damping, dtype=float)
        self.friction = zero if dissipation is None else np.asarray(dissipation.friction, dtype=float)
        arm = getattr(system, "compiled", None)
        #: the discrete model's compiled :class:`.compiled.Model` (None: the Python loop on python_terms)
        self.compiled = None
        if isinstance(arm, arm_compiled.Model):
            self.compiled = compiled.compile_model(arm, self.paths, self.small_step, self.damping, self.friction,
                                                   self.tol, self.max_iter, self.turned_differences)
        self._local = threading.local()          # one Data per thread: the kernels release the GIL

    def _entry_points(self) -> _EntryPoints:
        """This thread's :class:`_EntryPoints`: the whole step compiled (the kernel's equations, Newton's loop
        compiled around them, called through a Binding), or the same loop's source run as Python on the numpy
        evaluation (python_terms), with ``self`` as the model."""
        entries = getattr(self._local, "entries", None)
        if entries is None:
            if self.compiled is not None:
                data = compiled.create_data(self.compiled)
                binding = bind(self.compiled, data)
                entries = _EntryPoints(data, functools.partial(compiled._bound_step, binding),
                                       functools.partial(compiled._bound_held_steps, binding),
                                       functools.partial(compiled._bound_left_hand_sides, binding))
            else:
                data = newton.create_data(self.dof)
                entries = _EntryPoints(data, functools.partial(newton.step.py_func, self, data), None,
                                       functools.partial(newton.left_hand_sides.py_func, self, data))
            self._local.entries = entries
        return entries

    def __getstate__(self):
        state = self.__dict__.copy()
        del state["_local"]                     # each thread's Data and Binding are made where they are used
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._local = threading.local()

    @property
    def dof(self) -> int:
        return self.system.dof

    # ------------------------------------------------------------------------------------------- checks

    def _vector(self, name: str, value) -> np.ndarray:
        # once per argument of every step: written with the array's own methods, as numpy's module functions
        # cost microseconds of dispatch each (most of a small arm's step)
        array = np.ascontiguousarray(value, dtype=float)
        if array.shape != self._shape:
            raise InputError(f"{name}: expected {self._shape[0]} values, got shape {array.shape}")
        if not np.isfinite(array).all():
            raise InputError(f"{name}: values must be finite, got {array.tolist()}")
        return array

    @staticmethod
    def _time_step(dt) -> float:
        return positive_step(dt, "time step")

    # ------------------------------------------------------------------------------------------- physics

    def energy(self, q, qd) -> float:
        """T + V = ½ q̇ᵀ a(q) q̇ + V(q), J."""
        q, qd = self._vector("q", q), self._vector("qd", qd)
        return 0.5 * float(qd @ self.system.mass_matrix(q) @ qd) + float(self.system.potential(q))

    def _terms(self, q0, qd0, q1, qd1, dt, derivatives: bool = False) -> _Terms:
        """Left-hand side of the discrete Lagrange equations (3.5) at the candidate state k+1."""
        paths, n = self.paths, self.dof
        vertices = paths.vertices(q0, q1)                       # (P, n+1, n); vertex 0 = q0, vertex n = q1
        evaluated = self._eval.evaluate(vertices, derivatives)
        a, V = evaluated.M, evaluated.potential_energy
        dq = q1 - q0
        Da = quotients(paths, vertices, dq, paths.differences(a), self._eval.mass_derivatives, self.small_step)
        DV = quotients(paths, vertices, dq, paths.differences(V), self._eval.potential_gradient, self.small_step)
        a1 = a[0, n]
        # Δ[a q̇] as a1 Δq̇ + (Σ_r Δq_r D_r a) q̇0, for its smaller round-off (see compiled.step_terms)
        change = np.einsum("rij,r->ij", Da, dq)
        lhs = (a1 @ (qd1 - qd0) + change @ qd0) / dt - 0.5 * np.einsum("rij,i,j->r", Da, qd0, qd1) + DV
        da, dv = evaluated.dM, evaluated.g
        # where D_r is the divided difference, it cancels ε (|V| + ½ |q̇0|ᵀ |a| |q̇1|) at the edge's ends over Δq_r
        divided = np.abs(dq) > self.small_step
        sizes = paths.edge_sizes(V) + 0.5 * np.einsum("rij,i,j->r", paths.edge_sizes(a), np.abs(qd0), np.abs(qd1))
        cancellation = np.where(divided, sizes / np.where(dq == 0.0, 1.0, np.abs(dq)), 0.0)
        change_size = np.einsum("rij,r->ij", np.abs(Da), np.abs(dq)) + 2.0 * np.count_nonzero(divided) * np.abs(a1)
        momentum_size = np.abs(a1) @ np.abs(qd1 - qd0) + change_size @ np.abs(qd0)
        noise = _EPS * (momentum_size / abs(dt) + np.abs(DV) + cancellation)
        return _Terms(lhs, a1, Da, DV, dq, noise, da, dv)

    def python_terms(self, q0, qd0, q1, qd1, dt, jacobian, data: newton.Data) -> None:
        """:func:`.newton.equations` for any LagrangianSystem: the numpy evaluation into ``data``."""
        terms = self._terms(q0, qd0, q1, qd1, dt, derivatives=jacobian)
        data.lhs[:], data.a1[:], data.Da[:], data.DV[:], data.noise[:] = (terms.lhs, terms.a1, terms.Da, terms.DV,
                                                                          terms.noise)
        if jacobian:
            data.J[:] = self._jacobian(terms, qd0, qd1, dt)

    def _jacobian(self, terms: _Terms, qd0, qd1, dt) -> np.ndarray:
        """∂lhs/∂q̇(k+1), analytic (see the module doc; the joints' dissipation is added by Newton's loop);
        ``terms`` computed with derivatives."""
        paths, n = self.paths, self.dof
        da = terms.da                                           # (P, n+1, n, n, n)
        gradient = terms.dv - 0.5 * ((da @ qd1) @ qd0)         # ∂_k f at the vertices, f = V − ½ qd0ᵀ a qd1
        Df = terms.DV - 0.5 * np.einsum("rij,i,j->r", terms.Da, qd0, qd1)
        tiny = np.abs(terms.dq) < compiled.TINY_STEP
        E = (paths.differences(gradient * paths.moved) - np.diag(Df)) / np.where(tiny, 1.0, terms.dq)[:, None]
        E[tiny] = 0.0
        return (terms.a1 / dt + 0.5 * (da[0, n] @ qd1).T - 0.5 * np.einsum("rik,i->rk", terms.Da, qd0)
                + 0.5 * dt * E)

    def generalized_forces(self, q0, qd0, q1, qd1, dt) -> np.ndarray:
        """The applied forces F (N m or N) held over the step that take (q0, q̇0) to (q1, q̇1): explicit inverse
        dynamics (what the joints' own dissipation contributes is not part of F).

        The states must satisfy the smoothing formula q1 = q0 + Δt (q̇0 + q̇1)/2 (InputError otherwise).
        """
        dt = self._time_step(dt)
        states = [self._vector(name, v)[None] for name, v in (("q0", q0), ("qd0", qd0), ("q1", q1), ("qd1", qd1))]
        return self._forces(*states, np.array([dt]))[0]

    def generalized_forces_batch(self, q0, qd0, q1, qd1, dt) -> np.ndarray:
        """:meth:`generalized_forces` of m steps at once, (m, n): rows of q0, q̇0, q1, q̇1 (m, n), dt (m,) s."""
        dt = np.asarray(dt, dtype=float)
        if dt.ndim != 1 or not np.all(np.isfinite(dt) & (dt > 0.0)):
            raise InputError(f"time steps must be a vector of positive finite seconds, got {dt.tolist()}")
        states = []
        for name, value in (("q0", q0), ("qd0", qd0), ("q1", q1), ("qd1", qd1)):
            array = np.asarray(value, dtype=float)
            if array.shape != (dt.size, self.dof) or not np.all(np.isfinite(array)):
                raise InputError(f"{name}: expected {dt.size} rows of {self.dof} finite values, got shape "
                                 f"{array.shape}")
            states.append(array)
        return self._forces(*states, dt)

    def _forces(self, q0, qd0, q1, qd1, dt) -> np.ndarray:
        """:meth:`generalized_forces_batch` on checked arrays: the equations' left-hand sides less dissipation."""
        mismatch = q1 - (q0 + 0.5 * dt[:, None] * (qd0 + qd1))
        # round-off of the sum: the positions' (generous), plus the velocity term's, which is not small when q̇0 and
        # q̇1 nearly cancel over a long step (a planner's velocities from the smoothing formula itself)
        allowed = 1e-9 * (1.0 + np.abs(q0) + np.abs(q1)) + 8.0 * _EPS * dt[:, None] * (np.abs(qd0) + np.abs(qd1))
        if np.any(np.abs(mismatch) > allowed):
            raise InputError("q1 must equal q0 + dt (qd0 + qd1)/2 (smoothing formula); mismatch "
                             f"{mismatch[np.any(np.abs(mismatch) > allowed, axis=1)][0].tolist()}")
        lhs = np.empty_like(q0)
        self._entry_points().left_hand_sides(*(np.ascontiguousarray(v) for v in (q0, qd0, q1, qd1, dt)), lhs)
        return lhs - self._dissipative(q1 - q0, dt[:, None])

    def _dissipative(self, dq: np.ndarray, dt: float) -> np.ndarray:
        """The joints' damping and friction force at the step's mean velocity Δq/Δt (zero without dissipation)."""
        return np.zeros_like(dq) if self.dissipation is None else self.dissipation.forces(dq / dt)

    def _predict(self, q0, qd0, F, dt) -> np.ndarray:
        """q̇(k+1) ≈ q̇(k) + Δt q̈(k) from the continuous equations a q̈ = F − (∂a/∂q q̇) q̇ + ½ q̇ᵀ ∂a/∂q q̇ − ∂V/∂q."""
        return qd0 + dt * accelerations(self.system, q0, qd0, F + self._dissipative(qd0 * dt, dt))

    def step(self, q0, qd0, F, dt, guess=None) -> StepResult:
        """One implicit step (q(k), q̇(k)) -> (q(k+1), q̇(k+1)) under forces F held over the step.

        ``guess``: a starting value for q̇(k+1) (default: an explicit Euler prediction).
        """
        dt = self._time_step(dt)
        q0, qd0, F = self._vector("q0", q0), self._vector("qd0", qd0), self._vector("F", F)
        return self.continue_step(q0, qd0, F, dt, None if guess is None else self._vector("guess", guess))

    def continue_step(self, q0, qd0, F, dt, guess=None) -> StepResult:
        """:meth:`step` from a state this model returned: (q0, q̇0) and Δt are not checked again (a step's result is
        finite, or ConvergenceError), only the forces; ``guess`` must be finite (an extrapolation of results)."""
        F = self._vector("F", F)
        guesses = [lambda: self._predict(q0, qd0, F, dt), lambda: qd0]
        if guess is not None:
            try:
                return self._newton(q0, qd0, F, dt, guess)
            except ConvergenceError as error:     # outside Newton's basin: the other guesses follow
                return self._solve(q0, qd0, F, dt, guesses, [str(error)])
        return self._solve(q0, qd0, F, dt, guesses)

    def held_steps(self, q, qd, previous, F, dt: float, count: int, bound, turns, lower, upper, fractions,
                   increments, misses) -> tuple[int, int, float]:
        """Up to ``count`` steps under the held forces F in one compiled call (:func:`.newton.held_steps`: the
        state arrays and Newton's start predictor's history, ``increments`` and ``misses``, are updated in place,
        see there; each step made of sub-steps of ``fractions`` dt), continuing from a state this model returned;
        only F is checked. Returns (steps taken, Newton iterations over them, the energy the joints' dissipation
        took over them, J); (0, 0, 0.0) for a system without a compiled model."""
        held_steps = self._entry_points().held_steps
        if held_steps is None:
            return 0, 0, 0.0
        _, taken, iterations, dissipated = held_steps(q, qd, previous, self._vector("F", F), float(dt), int(count),
                                                      bound, turns, lower, upper, fractions, increments, misses)
        return taken, iterations, dissipated

    def _solve(self, q0, qd0, F, dt, guesses, failures=()) -> StepResult:
        """Newton from each guess in turn until one converges (a guess can lie outside Newton's basin
        when Δt is large for the motion); ConvergenceError if none does, with ``failures`` (of guesses tried
        before) and each guess's."""
        failures = list(failures)
        for guess in guesses:
            try:
                return self._newton(q0, qd0, F, dt, guess())
            except ConvergenceError as error:
                failures.append(str(error))
        raise ConvergenceError(f"discrete step with dt = {dt} s from q = {q0.tolist()}, qd = {qd0.tolist()} "
                               f"did not converge from any starting guess ({'; '.join(failures)}); "
                               "reduce the time step")

    def _newton(self, q0, qd0, F, dt, qd1) -> StepResult:
        """Newton's loop (:mod:`.newton`) from the guess q̇(k+1) = ``qd1``; ConvergenceError when it fails."""
        entries = self._entry_points()
        data = entries.data
        status, iterations, residual, update = entries.step(q0, qd0, F, float(dt), qd1)
        if status != newton.OK:
            raise ConvergenceError(newton.describe(status, iterations, update))
        return StepResult(data.q.copy(), data.v.copy(), int(iterations), float(residual))

    def simulate(self, q0, qd0, dt, steps: int, forces=None) -> Trajectory:
        """``steps`` steps from (q0, q̇0).

        ``forces``: None (zero), one force vector held throughout (n,), one per step (steps, n),
        or a callable ``forces(t, q, qd) -> (n,)`` evaluated at the start of each step.
        """
        dt = self._time_step(dt)
        if int(steps) != steps or steps < 0:
            raise InputError(f"steps must be a non-negative integer, got {steps}")
        steps, n = int(steps), self.dof
        q0, qd0 = self._vector("q0", q0), self._vector("qd0", qd0)
        force_at = self._force_schedule(forces, steps)
        q = np.empty((steps + 1, n))
        qd = np.empty((steps + 1, n))
        applied = np.empty((steps, n))
        iterations = np.empty(steps, dtype=int)
        q[0], qd[0] = q0, qd0
        for k in range(steps):
            applied[k] = self._vector(f"forces at step {k}", force_at(k, k * dt, q[k], qd[k]))
            qk, qdk, Fk = q[k], qd[k], applied[k]
            guesses = [lambda: self._predict(qk, qdk, Fk, dt), lambda: qdk]  # noqa: B023 - used in this iteration
            if k >= 2:
                guesses.insert(0, lambda: self._extrapolate(qd, k))  # noqa: B023
            result = self._solve(qk, qdk, Fk, dt, guesses)
            q[k + 1], qd[k + 1], iterations[k] = result.q, result.qd, result.iterations
        evaluated = self._eval.evaluate(q, derivatives=False)
        a, V = evaluated.M, evaluated.potential_energy
        energy = 0.5 * np.einsum("ki,kij,kj->k", qd, a, qd) + V
        LOGGER.debug("discrete model: %d steps, mean %.2f Newton iterations", steps,
                     iterations.mean() if steps else 0.0)
        return Trajectory(np.arange(steps + 1) * dt, q, qd, energy, applied, iterations)

    @staticmethod
    def _extrapolate(qd: np.ndarray, k: int) -> np.ndarray:
        """q̇(k+1) from the quadratic through q̇(k-2), q̇(k-1), q̇(k): an O(Δt³) start for Newton."""
        return 3.0 * qd[k] - 3.0 * qd[k - 1] + qd[k - 2]

    def _force_schedule(self, forces, steps: int) -> Callable:
        n = self.dof
        if forces is None:
            zero = np.zeros(n)
            return lambda k, t, q, qd: zero
        if callable(forces):
            return lambda k, t, q, qd: forces(t, q, qd)
        array = np.asarray(forces, dtype=float)
        if array.shape == (n,):
            return lambda k, t, q, qd: array
        if array.shape == (steps, n):
            return lambda k, t, q, qd: array[k]
        raise InputError(f"forces: expected shape ({n},) or ({steps}, {n}) or a callable, got shape {array.shape}")

