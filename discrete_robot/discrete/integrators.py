"""One interface over the integrators a simulation can choose: ``make_stepper(kind, system).step(q, q̇, τ, h)``.

* ``DISCRETE``: the discrete dynamic robot model (:mod:`.dynamic_model`), energy- and
  momentum-conserving for any h. Its step is symmetric (a step by −h from its result returns to its start: the
  symmetric partial-difference operator averages two paths that swap when k and k+1 do), so it is second order.
* ``DISCRETE4``, ``DISCRETE6``: the same step composed to order 4 (the triple jump) and 6 (Kahan & Li's nine
  stages), :mod:`discrete_robot.composition`; each sub-step conserves T + V exactly, so each step does.
* ``VARIATIONAL``: the midpoint variational integrator (:mod:`discrete_robot.variational.midpoint`),
  symplectic, in position–momentum form; velocities are converted through p = M(q) q̇.
* ``RK45``: scipy's adaptive Dormand–Prince 4(5) over each step with tight tolerances
  (rtol 1e-10, atol 1e-12), the conventional reference for comparison.

The generalised force τ (N m or N) is held constant over each step in all of them. Joint damping and
friction (:mod:`.dissipation`), when the model has them, are evaluated at the (sub-)step's mean velocity by the
discrete model (so its energy balance stays exact; ``dissipated`` is the energy they took over the last call),
at the step's start velocity by the variational integrator (explicit: the midpoint rule's implicit solve has no
slot for a velocity-dependent force), and continuously by RK45.
"""

import copy
from typing import Protocol

import numpy as np

from discrete_robot.composition import FRACTIONS
from discrete_robot.discrete import IntegratorKind, newton
from discrete_robot.discrete.dissipation import Dissipation
from discrete_robot.discrete.dynamic_model import DiscreteDynamicModel
from discrete_robot.discrete.partial_difference import PathOperator
from discrete_robot.errors import ConvergenceError, InputError
from discrete_robot.model.branches import branches
from discrete_robot.model.dynamics import RigidBodySystem
from discrete_robot.model.lagrangian import LagrangianSystem, accelerations, solve_mass_matrix
from discrete_robot.validation import positive_step
from discrete_robot.variational.midpoint import MidpointVariationalIntegrator

RK45_RTOL = 1e-10
RK45_ATOL = 1e-12
_DISCRETE_ORDERS = {IntegratorKind.DISCRETE: 2, IntegratorKind.DISCRETE4: 4, IntegratorKind.DISCRETE6: 6}
#: Newton's tolerance in the compositions' sub-steps, below ε: each stops at its round-off floor (Newton's stall
#: test). Newton's stop is relative to the fastest joint, and at the second-order step's 1e-14 the error it left,
#: about 1e-17 of that velocity, had one sign: over 10⁵ steps of 1 ms the 6-joint arm's T + V fell steadily, by
#: 2.4e-12 of |E(0)| (at 1e-16 by 2.3e-12, at 1e-17 by 6.3e-13), against 1.9e-13 here, for 2.19 Newton iterations
#: per sub-step instead of 2.00 at h = 1 ms (2.00 at h ≤ 0.3 ms). The second-order step keeps newton.DEFAULT_TOL: its
#: own error, O(Δt²), dwarfs that drift.
COMPOSITION_TOL = 1e-18


class Stepper(Protocol):
    """Advances (q, q̇) by h seconds under the generalised force τ held over the step."""

    def step(self, q: np.ndarray, qd: np.ndarray, tau: np.ndarray, h: float) -> tuple[np.ndarray, np.ndarray]:
        ...


class DiscreteStepper:
    """The discrete dynamic robot model, one implicit step per call (``order`` 4 or 6: the composition of sub-steps
    :mod:`discrete_robot.composition` gives, whose middle ones go back in time); ``iterations``: the last step's
    Newton iterations; ``dissipated``: the energy (J) the joints' damping and friction took over the last call,
    summed over its sub-steps.

    The energy identity needs Δq = Δt (q̇(k) + q̇(k+1))/2 exactly, but q(k+1) = q(k) + Δq is rounded to the
    spacing of q(k), ε |q| rad, which the forces turn into an energy error every step: a joint that keeps
    turning makes that the floor of T + V's drift (at 1000 rad, 100 times the drift at 1 rad). So the stepper
    carries the angles of the system's ``periodic`` DOFs (when it names them) within [−π, π], plus whole turns,
    and steps on those; the q it returns is their sum. Subtracting fl(2π) from an angle just past π is exact
    (Sterbenz), so each turn carried moves the configuration by 2π − fl(2π) = 2.4e-16 rad: an angle that swings
    about π and is carried back and forth costs nothing measurable.
    """

    def __init__(self, system: LagrangianSystem, operator: PathOperator = PathOperator.SYMMETRIC,
                 dissipation: Dissipation | None = None, order: int = 2):
        if order not in FRACTIONS:
            raise InputError(f"order must be one of {sorted(FRACTIONS)}, got {order!r}")
        # the compositions reach round-off, so they take the turned differences and Newton to its floor; the
        # second-order step's O(Δt²) error does not (and its 1 kHz step stays cheaper)
        composed = order > 2
        self.model = DiscreteDynamicModel(system, operator, COMPOSITION_TOL if composed else newton.DEFAULT_TOL,
                                          dissipation=dissipation, turned_differences=composed)
        self.fractions = FRACTIONS[order]
        self.iterations = 0
        self.dissipated = 0.0
        periodic = getattr(system, "periodic", np.zeros(system.dof, dtype=bool))
        self._bound = np.where(periodic, np.pi, np.inf)      # |angle| beyond which whole turns are carried
        self._returned = (None, None, None)     # the (q, q̇) the last step returned and its h
        self._previous = None                   # the q̇ its last sub-step started from
        self._carried = None                    # the returned q less the whole turns ...
        self._turns = None                      # ... which are these (fl(2π) each) ...
        self._offset = None                     # ... times fl(2π), or None for none
        self._increments = None                 # the history of Newton's start predictor (newton.held_steps) ...
        self._misses = None                     # ... over the compiled steps since the last other one
        self._unbounded = (np.full(system.dof, -np.inf), np.full(system.dof, np.inf))   # held_steps' limits
        self._unsolved = (None, None)           # the q̇ of a returned state whose compiled step failed, and its τ

    def _carry_turns(self, q: np.ndarray) -> np.ndarray:
        """q (a step's own result, changed in place) less the whole turns of its periodic angles beyond ±π, which
        join ``_turns``."""
        if newton.carry_turns(q, self._bound, self._turns):
            self._offset = self._turns * newton.TWO_PI
        return q

    def _continuing(self, q, qd, h) -> bool:
        """True when (q, q̇) is the state the last step returned, and h its step."""
        return q is self._returned[0] and qd is self._returned[1] and h == self._returned[2]

    def _keep(self, carried: np.ndarray, qd: np.ndarray, h: float, previous: np.ndarray,
              increments: np.ndarray | None = None, misses: np.ndarray | None = None) -> np.ndarray:
        """Keep the state a step reached (its angles less their turns, q̇, h and the q̇ it started from, and the
        predictor's history: None for a step it did not see) to continue from; the q it returns: the angles with
        their turns."""
        if increments is None:
            increments = np.full((newton.PREDICTOR_STEPS, self.fractions.size, self.model.dof), np.nan)
            misses = np.full((2, self.fractions.size), np.nan)
        self._increments, self._misses = increments, misses
        self._carried = carried
        q1 = carried if self._offset is None else carried + self._offset
        self._returned, self._previous = (q1, qd, h), previous
        return q1

    def held_steps(self, q, qd, tau, h, count: int, lower: np.ndarray, upper: np.ndarray):
        """Up to ``count`` steps under the held ``tau`` in one compiled call, the same steps :meth:`step` takes one
        by one, when continuing from this stepper's last result (else none). Stops after a step that ends outside
        [lower, upper] and before a step its first guess does not solve: the caller takes those one by one.
        Returns (q, q̇, steps taken); ``iterations`` is then the Newton iterations over them."""
        if not self._continuing(q, qd, h):
            return q, qd, 0
        carried, velocity, previous, turns = self._carried.copy(), qd.copy(), self._previous.copy(), self._turns.copy()
        increments, misses = self._increments.copy(), self._misses.copy()
        taken, iterations, dissipated = self.model.held_steps(carried, velocity, previous, tau, h, count,
                                                              self._bound, turns, lower, upper, self.fractions,
                                                              increments, misses)
        if not taken:       # its first step failed: step() takes it by the Python path, not again compiled
            self._unsolved = (qd, np.array(tau, dtype=float))
            return q, qd, 0
        self._turns = turns
        self._offset = turns * newton.TWO_PI if turns.any() else None
        self.iterations, self.dissipated = iterations, dissipated
        return self._keep(carried, velocity, h, previous, increments, misses), velocity, taken

    def step(self, q, qd, tau, h):
        fractions, model = self.fractions, self.model
        if self._continuing(q, qd, h):
            # continuing from the state the last step returned (its own result, checked before): the compiled
            # step, as held_steps takes it, when it solves from its predicted starts
            if not (qd is self._unsolved[0] and np.array_equal(tau, self._unsolved[1])):
                q1, qd1, taken = self.held_steps(q, qd, tau, h, 1, *self._unbounded)
                if taken:
                    return q1, qd1
            # else each sub-step from the linear extrapolation of the last two velocities, then the other guesses
            start, velocity, previous, last, first = self._carried, qd, self._previous, fractions[-1], 0
            iterations, dissipated = 0, 0.0
        else:
            self._turns, self._offset = np.zeros(model.dof), None
            h = positive_step(h, "time step")
            result = model.step(q, qd, tau, fractions[0] * h)       # checks the state and τ
            iterations = result.iterations
            dissipated = newton.dissipated_work(np.asarray(q, dtype=float), result.q, fractions[0] * h,
                                                model.damping, model.friction)
            start, velocity, previous, last, first = result.q, result.qd, np.asarray(qd, dtype=float), fractions[0], 1
        for fraction in fractions[first:]:
            ratio = fraction / last
            guess = (1.0 + ratio) * velocity - ratio * previous
            result = model.continue_step(start, velocity, tau, fraction * h, guess)
            iterations += result.iterations
            dissipated += newton.dissipated_work(start, result.q, fraction * h, model.damping, model.friction)
            start, velocity, previous, last = result.q, result.qd, velocity, fraction
        self.iterations, self.dissipated = iterations, dissipated
        return self._keep(self._carry_turns(start), velocity, h, previous), velocity


class BranchStepper:
    """The discrete model of a fixed-base tree whose base carries independent branches (Baxter's head and two arms,
    :mod:`discrete_robot.model.branches`), each branch stepped by a :class:`DiscreteStepper` of its own. a(q) is
    block-diagonal by branch and V a sum over them, so the discrete equations of the whole are exactly those of
    the branches, and T + V is conserved branch by branch. A step's cost grows about as n⁴: Baxter's 1 + 8 + 8
    DOFs cost about a tenth of one 17-DOF step. Same interface and state as DiscreteStepper (``iterations`` and
    ``dissipated`` summed over the branches)."""

    def __init__(self, parts: list[tuple[np.ndarray, DiscreteStepper]]):
        self.parts = parts
        self.iterations = 0
        self.dissipated = 0.0
        self._returned = (None, None, None)   # the (q, q̇) the last call returned and its h ...
        self._pieces = []                     # ... and each branch's own (q, q̇) of it

    def __copy__(self):
        twin = BranchStepper([(dofs, copy.copy(stepper)) for dofs, stepper in self.parts])
        twin._returned, twin._pieces = self._returned, self._pieces
        return twin

    def _split(self, q, qd, h) -> list:
        """Each branch's (q, q̇): the very arrays it returned when continuing (a DiscreteStepper continues only
        from its own result), else slices of the given state."""
        if q is self._returned[0] and qd is self._returned[1] and h == self._returned[2]:
            return self._pieces
        q, qd = np.asarray(q, dtype=float), np.asarray(qd, dtype=float)
        return [(q[dofs], qd[dofs]) for dofs, _ in self.parts]

    def _join(self, pieces: list, h: float) -> tuple[np.ndarray, np.ndarray]:
        n = sum(dofs.size for dofs, _ in self.parts)
        q, qd = np.empty(n), np.empty(n)
        for (dofs, _), (part_q, part_qd) in zip(self.parts, pieces, strict=True):
            q[dofs], qd[dofs] = part_q, part_qd
        self._returned, self._pieces = (q, qd, h), pieces
        self.iterations = sum(stepper.iterations for _, stepper in self.parts)
        self.dissipated = sum(stepper.dissipated for _, stepper in self.parts)
        return q, qd

    def step(self, q, qd, tau, h):
        tau = np.asarray(tau, dtype=float)
        return self._join([stepper.step(part_q, part_qd, tau[dofs], h) for (dofs, stepper), (part_q, part_qd)
                           in zip(self.parts, self._split(q, qd, h), strict=True)], h)

    def held_steps(self, q, qd, tau, h, count: int, lower: np.ndarray, upper: np.ndarray):
        """As :meth:`DiscreteStepper.held_steps`, every branch the same number of steps: as many as the branch that
        stops first takes. Each branch runs on a copy of its stepper; one that ran another number of steps runs
        again from its start (the same arithmetic, so the same steps)."""
        tau, pieces = np.asarray(tau, dtype=float), self._split(q, qd, h)
        trials, runs, taken = [], [], count
        for (dofs, stepper), piece in zip(self.parts, pieces, strict=True):
            trials.append(copy.copy(stepper))
            runs.append(trials[-1].held_steps(*piece, tau[dofs], h, taken, lower[dofs], upper[dofs])
                        if taken else None)
            taken = min(taken, runs[-1][2]) if taken else 0
        if taken == 0:
            return q, qd, 0
        for k, ((dofs, stepper), piece) in enumerate(zip(self.parts, pieces, strict=True)):
            if runs[k][2] != taken:
                trials[k] = copy.copy(stepper)
                runs[k] = trials[k].held_steps(*piece, tau[dofs], h, taken, lower[dofs], upper[dofs])
        self.parts = [(dofs, trial) for (dofs, _), trial in zip(self.parts, trials, strict=True)]
        q1, qd1 = self._join([run[:2] for run in runs], h)
        return q1, qd1, taken


def _with_dissipation(dissipation: Dissipation | None, tau: np.ndarray, qd: np.ndarray) -> np.ndarray:
    return tau if dissipation is None else tau + dissipation.forces(qd)


class VariationalStepper:
    """The midpoint variational integrator; p = M(q) q̇ in, q̇ = M(q)⁻¹ p out."""

    def __init__(self, system: LagrangianSystem, dissipation: Dissipation | None = None):
        self.system = system
        self.dissipation = dissipation
        self.integrator = MidpointVariationalIntegrator(system)

    def step(self, q, qd, tau, h):
        q, qd = np.asarray(q, dtype=float), np.asarray(qd, dtype=float)
        p = self.system.mass_matrix(q) @ qd
        q1, p1 = self.integrator.step(q, p, h, force=_with_dissipation(self.dissipation, tau, qd))
        return q1, solve_mass_matrix(self.system.mass_matrix(q1), p1)


class RK45Stepper:
    """scipy's RK45 (Dormand–Prince) over [0, h] on the first-order form y = (q, q̇)."""

    def __init__(self, system: LagrangianSystem, rtol: float = RK45_RTOL, atol: float = RK45_ATOL,
                 dissipation: Dissipation | None = None):
        self.system, self.rtol, self.atol, self.dissipation = system, rtol, atol, dissipation

    def step(self, q, qd, tau, h):
        # imported here: scipy.integrate costs a node ~0.7 s at start-up, and RK45 is only the reference
        from scipy.integrate import solve_ivp

        n = self.system.dof
        q, qd, tau = (np.asarray(v, dtype=float) for v in (q, qd, tau))
        for name, value in (("q", q), ("qd", qd), ("tau", tau)):
            if value.shape != (n,) or not np.all(np.isfinite(value)):
                raise InputError(f"{name}: expected {n} finite values, got {value}")
        positive_step(h, "time step")

        def rhs(t, y):
            force = _with_dissipation(self.dissipation, tau, y[n:])
            return np.concatenate([y[n:], accelerations(self.system, y[:n], y[n:], force)])

        solution = solve_ivp(rhs, (0.0, h), np.concatenate([q, qd]), method="RK45", rtol=self.rtol, atol=self.atol)
        if not solution.success:
            raise ConvergenceError(f"RK45 step failed: {solution.message}")
        return solution.y[:n, -1], solution.y[n:, -1]


def make_stepper(kind, system: LagrangianSystem, dissipation: Dissipation | None = None) -> Stepper:
    """The stepper of ``kind`` (an IntegratorKind or its value) for ``system`` with joint ``dissipation``."""
    try:
        kind = IntegratorKind(kind)
    except ValueError:
        raise InputError(f"integrator must be one of {[k.value for k in IntegratorKind]}, got {kind!r}") from None
    if kind in _DISCRETE_ORDERS:
        parts = branches(system.model) if isinstance(system, RigidBodySystem) else []
        if len(parts) > 1:
            return BranchStepper([(part.dofs, DiscreteStepper(
                RigidBodySystem(part.model), order=_DISCRETE_ORDERS[kind],
                dissipation=None if dissipation is None else dissipation.of(part.dofs))) for part in parts])
        return DiscreteStepper(system, dissipation=dissipation, order=_DISCRETE_ORDERS[kind])
    if kind is IntegratorKind.VARIATIONAL:
        return VariationalStepper(system, dissipation)
    return RK45Stepper(system, dissipation=dissipation)
