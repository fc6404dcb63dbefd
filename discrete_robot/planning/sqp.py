"""The SQP solve shared by DMOC and the Runge–Kutta comparison: one solver, one report.

Both optimal-control transcriptions hand scipy's SLSQP a quadratic effort objective, equality
constraints from their discrete equations of motion and optional inequality constraints, so that any
difference in the outcome comes from the discretisation and not from the solver. Constraint Jacobians
of the collocation forms come from per-step blocks by coloured finite differences
(:func:`coloured_jacobian`): each step's residual depends on a few neighbouring variables only.
"""

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize

LOGGER = logging.getLogger(__name__)

FD_STEP = 1e-7


@dataclass(frozen=True)
class SqpOutcome:
    x: np.ndarray
    success: bool
    message: str
    iterations: int
    solve_time: float
    constraint_violation: float  # max |equality residual| at the returned point, own discretisation


def solve_sqp(objective: Callable, objective_gradient: Callable, equalities: Callable, x0: np.ndarray,
              equality_jacobian: Callable | None = None, inequalities: Callable | None = None,
              inequality_jacobian: Callable | None = None, bounds=None, maxiter: int = 300, ftol: float = 1e-12,
              objective_scale: float = 1.0) -> SqpOutcome:
    """SLSQP on min objective(x) s.t. equalities(x) = 0, inequalities(x) ≥ 0, bounds.

    Jacobians not given are finite differences (SLSQP's own, as in the article). ``objective_scale``
    multiplies the objective inside the solver (SLSQP's stopping test is on absolute objective changes).
    """
    constraints = [{"type": "eq", "fun": equalities}]
    if equality_jacobian is not None:
        constraints[0]["jac"] = equality_jacobian
    if inequalities is not None:
        constraints.append({"type": "ineq", "fun": inequalities})
        if inequality_jacobian is not None:
            constraints[1]["jac"] = inequality_jacobian
    started = time.perf_counter()
    result = minimize(lambda x: objective_scale * objective(x), x0,
                      jac=lambda x: objective_scale * objective_gradient(x), method="SLSQP",
                      constraints=constraints, bounds=bounds, options={"maxiter": maxiter, "ftol": ftol})
    elapsed = time.perf_counter() - started
    x = np.asarray(result.x, dtype=float)
    violation = float(np.max(np.abs(equalities(x)))) if np.all(np.isfinite(x)) else float("inf")
    LOGGER.info("SLSQP: %s (%d iterations, %.2f s, equality residual %.2e)", result.message, result.nit, elapsed,
                violation)
    return SqpOutcome(x, bool(result.success), str(result.message), int(result.nit), elapsed, violation)


def coloured_jacobian(step_blocks: Callable[[np.ndarray], np.ndarray], x: np.ndarray,
                      step_variables: list[np.ndarray], step_rows: list[np.ndarray], n_rows: int) -> np.ndarray:
    """Dense Jacobian of constraints assembled from per-step residual blocks, by coloured forward differences.

    ``step_blocks(x)`` returns every step's block at once, shape (N, r); block k depends only on the variables
    ``step_variables[k]`` and adds into the constraint rows ``step_rows[k]`` (blocks may share rows, as the
    two halves of a discrete Euler–Lagrange equation do). Variables that no step shares are perturbed
    together (greedy colouring), so a Jacobian costs one batched evaluation per colour — a few times the
    number of variables per step — instead of one per variable (Curtis, Powell & Reid).
    """
    steps_of = [[] for _ in range(x.size)]
    for k, columns in enumerate(step_variables):
        for column in columns:
            steps_of[column].append(k)
    colours: list[list[int]] = []
    busy: list[set[int]] = []
    for column in np.argsort([-len(steps) for steps in steps_of], kind="stable"):
        steps = set(steps_of[column])
        if not steps:
            continue
        for colour, taken in zip(colours, busy, strict=True):
            if not steps & taken:
                colour.append(int(column))
                taken |= steps
                break
        else:
            colours.append([int(column)])
            busy.append(set(steps))
    base = step_blocks(x)
    jacobian = np.zeros((n_rows, x.size))
    for colour in colours:
        shifted = x.copy()
        delta = FD_STEP * np.maximum(1.0, np.abs(x[colour]))
        shifted[colour] += delta
        change = step_blocks(shifted) - base
        for column, d in zip(colour, delta, strict=True):
            for k in steps_of[column]:
                jacobian[step_rows[k], column] += change[k] / d
    return jacobian


@dataclass(frozen=True)
class OptimalControlSolution:
    """A fixed-time minimum-effort solution and how well it does what it should.

    ``controls`` are the node values u_k (spherical pendulum, (N+1, 3), N m) or the per-step generalised
    forces (arms, (N, n), N m). ``effort`` = the discrete objective ≈ ∫ ½|u|² dt (N² m² s).
    ``terminal_error``: max |state(N) − target| on the method's own discrete model;
    ``continuous_terminal_error``: the same after replaying the controls through the continuous equations
    of motion (DOP853, tolerances 1e-12) — what the plan would do to the real system.
    ``unit_length_error``: max ||q| − 1| along the discrete trajectory (spherical pendulum only).
    """

    method: str
    t: np.ndarray
    q: np.ndarray
    velocity: np.ndarray
    controls: np.ndarray
    effort: float
    terminal_error: float
    continuous_terminal_error: float
    unit_length_error: float | None
    outcome: SqpOutcome

    @property
    def h(self) -> float:
        return float(self.t[1] - self.t[0])

    def summary(self) -> dict:
        """The comparison figures: what docs/planning.md and the CLI report."""
        return {"method": self.method, "success": self.outcome.success, "message": self.outcome.message,
                "iterations": self.outcome.iterations, "solve_time_s": self.outcome.solve_time,
                "effort": self.effort, "equality_residual": self.outcome.constraint_violation,
                "terminal_error": self.terminal_error, "continuous_terminal_error": self.continuous_terminal_error,
                "unit_length_error": self.unit_length_error, "steps": int(self.t.size - 1), "h": self.h}
