"""A robot simulated at a fixed time step, advanced by arbitrary durations (a live simulator's clock ticks).

``advance(duration, torques)`` runs the whole steps of length h that fit, carrying the
remainder to the next call, so the integration step stays exactly h however the ticks
fall. The torque function is evaluated at the start of each step and held over it.
A step whose implicit solve does not converge is retried as 2, 4, ... up to
2^SUBSTEP_HALVINGS sub-steps (the discrete model conserves energy on each: an undamped arm
that has fallen and whips its light wrist at ~80 rad/s needs them at h = 0.05 s); if that
fails too, ConvergenceError is raised and the state is left as it was before the step.

After each step, joints past their position limits are stopped by a plastic impact
(:mod:`.joint_stops`: the kinetic energy of the stopped motion is removed, ``stop_energy`` sums it), or with
``elastic_stops`` reversed by an elastic one (T + V unchanged);
joint damping and friction (:mod:`.dissipation`) act inside the integrator (in each sub-step of
``discrete4`` and ``discrete6``, whose stops still act between whole steps only).
"""

import logging
from collections.abc import Callable

import numpy as np

from discrete_robot.discrete.dissipation import Dissipation
from discrete_robot.discrete.integrators import IntegratorKind, make_stepper
from discrete_robot.discrete.joint_stops import beyond_limits, stop_at_limits
from discrete_robot.errors import ConvergenceError, InputError
from discrete_robot.model.lagrangian import LagrangianSystem, total_energy
from discrete_robot.validation import positive_step

LOGGER = logging.getLogger(__name__)
SUBSTEP_HALVINGS = 5

TorqueFunction = Callable[[float, np.ndarray, np.ndarray], np.ndarray]


class FixedStepSimulation:
    """State (q, q̇) at simulated time ``time`` (s), stepped by ``time_step`` with the chosen integrator.

    ``lower``/``upper``: position limits enforced as stops (None = unbounded; plastic, or elastic with
    ``elastic_stops``); ``dissipation``: joint damping and friction; ``joint_names`` name joints in error messages.
    ``newton_iterations`` counts the discrete model's iterations over all steps; ``dissipated_energy`` the energy
    (J) the joints' damping and friction took, as the discrete model applies them (over each sub-step), or None
    for an integrator that does not account it.
    """

    def __init__(self, system: LagrangianSystem, kind: IntegratorKind | str, time_step: float, q0, qd0,
                 lower=None, upper=None, dissipation: Dissipation | None = None, joint_names=None,
                 elastic_stops: bool = False):
        positive_step(time_step, "time_step")
        n = system.dof
        self.q, self.qd = (np.asarray(v, dtype=float) for v in (q0, qd0))
        for name, value in (("initial positions", self.q), ("initial velocities", self.qd)):
            if value.shape != (n,) or not np.all(np.isfinite(value)):
                raise InputError(f"{name}: expected {n} finite values, got {value.tolist()}")
        self.system = system
        self.kind = IntegratorKind(kind)
        self.stepper = make_stepper(self.kind, system, dissipation)
        self.lower = np.full(n, -np.inf) if lower is None else np.asarray(lower, dtype=float)
        self.upper = np.full(n, np.inf) if upper is None else np.asarray(upper, dtype=float)
        if self.lower.shape != (n,) or self.upper.shape != (n,) or np.any(self.lower > self.upper):
            raise InputError(f"position limits: expected {n} lower <= upper values")
        self._limited = bool(np.isfinite(self.lower).any() or np.isfinite(self.upper).any())
        self.elastic_stops = bool(elastic_stops)
        self.joint_names = [f"joint {i}" for i in range(n)] if joint_names is None else list(joint_names)
        self.time_step = float(time_step)
        self.time = 0.0
        self.tau = np.zeros(n)
        self.stop_energy = 0.0
        #: (n,) bool: the joints that have reached their lower (upper) limit at the end of some step
        self.reached_lower, self.reached_upper = np.zeros(n, dtype=bool), np.zeros(n, dtype=bool)
        self.newton_iterations = 0
        self.dissipated_energy = 0.0 if hasattr(self.stepper, "dissipated") else None
        self._carried = 0.0

    def energy(self) -> float:
        """T + V of the current state, J."""
        return total_energy(self.system, self.q, self.qd)

    def advance(self, duration: float, torques: TorqueFunction) -> int:
        """Advance by the whole steps that fit into ``duration`` plus the carried remainder; returns their number."""
        self._carried += duration
        steps = int(np.floor(self._carried / self.time_step + 1e-9))
        self._carried -= steps * self.time_step
        self.step(steps, torques)
        return steps

    def step(self, count: int, torques: TorqueFunction | np.ndarray) -> None:
        """Advance by ``count`` steps; ConvergenceError leaves the state of the last step that worked.

        ``torques``: a function of (t, q, q̇) evaluated at each step's start, or forces held over all the steps.
        Held forces let the discrete model take the steps in compiled runs (``held_steps``: the same steps,
        without Python between them); a step that ends past a limit, or that needs another start guess or
        sub-steps, is taken one by one as with a function."""
        if callable(torques):
            for _ in range(count):
                self._take(np.asarray(torques(self.time, self.q, self.qd), dtype=float))
            return
        tau, left = np.asarray(torques, dtype=float), count
        held_steps = getattr(self.stepper, "held_steps", None)
        while left > 0:
            taken = 0
            if held_steps is not None:
                q, qd, taken = held_steps(self.q, self.qd, tau, self.time_step, left, self.lower, self.upper)
            if taken:
                self.newton_iterations += self.stepper.iterations
                self.dissipated_energy += self.stepper.dissipated
                self._accept(q, qd, tau, taken)
                left -= taken
            if left > 0:        # a run that ended early: past a limit, or a step it could not take
                self._take(tau)
                left -= 1

    def _take(self, tau: np.ndarray) -> None:
        """One step under ``tau`` (sub-steps when it fails whole), then the joint stops."""
        q, qd = self._step(self.q, self.qd, tau)
        self._accept(q, qd, tau, 1)

    def _accept(self, q: np.ndarray, qd: np.ndarray, tau: np.ndarray, steps: int) -> None:
        """The state after ``steps`` steps under ``tau``, stopped at the joint limits it ends past."""
        if self._limited and beyond_limits(q, self.lower, self.upper):
            at = q if self.elastic_stops else np.clip(q, self.lower, self.upper)
            stop = stop_at_limits(self.system.mass_matrix(at), q, qd, self.lower, self.upper, self.elastic_stops)
            q, qd = stop.q, stop.qd
            self.stop_energy += stop.removed_energy
        if self._limited:   # a held run ends at the step past a limit: only a run's last state can be at one
            self.reached_lower |= q <= self.lower
            self.reached_upper |= q >= self.upper
        self.q, self.qd = q, qd
        self.tau = tau
        for _ in range(steps):      # as many additions as steps, so the time is the one steps one by one give
            self.time += self.time_step

    def reset(self, q0, qd0) -> None:
        """Restore the state (q0, q̇0); the time goes on. InputError for positions outside the limits."""
        q0 = np.array(q0, dtype=float)
        outside = np.flatnonzero((q0 < self.lower) | (q0 > self.upper))
        if outside.size:
            i = int(outside[0])
            raise InputError(f"position of {self.joint_names[i]} ({q0[i]:g}) is outside its limits "
                             f"[{self.lower[i]:g}, {self.upper[i]:g}]")
        self.q, self.qd = q0, np.array(qd0, dtype=float)
        self.tau = np.zeros_like(self.q)

    def _step(self, q, qd, tau):
        error = None
        for halvings in range(SUBSTEP_HALVINGS + 1):
            count = 2 ** halvings
            try:
                q1, qd1, dissipated = q, qd, 0.0
                for _ in range(count):
                    q1, qd1 = self.stepper.step(q1, qd1, tau, self.time_step / count)
                    self.newton_iterations += getattr(self.stepper, "iterations", 0)
                    dissipated += getattr(self.stepper, "dissipated", 0.0)
                if halvings:
                    LOGGER.info("step at t = %.3f s needed %d sub-steps", self.time, count)
                if self.dissipated_energy is not None:
                    self.dissipated_energy += dissipated
                return q1, qd1
            except ConvergenceError as failure:
                error = failure
        raise ConvergenceError(f"step at t = {self.time:.3f} s failed even as {2 ** SUBSTEP_HALVINGS} sub-steps: "
                               f"{error}")
