"""The principle of minimum power for n particles in 3-D (Peshkin & Sanderson, CMU-RI-TR-86-16).

"A quasistatic system chooses that motion, from among all motions satisfying
the constraints, which minimizes the total instantaneous power." With the
3n-vector of velocities V, the power (the paper's P_v, eq. 1/16, counted as
power spent against the forces other than those of constraint) is

    P(V) = - F . V + sum_i mu_i N_i |V_i| + sum_i eta_i |V_i|^(k+1)

with F the velocity-independent forces (gravity, springs, ...), mu_i N_i the
Coulomb friction magnitude of particle i, and an optional eta |v|^k
dissipative force (k >= 1) that the principle does NOT handle correctly: it
is here only to reproduce the paper's section 5, where minimum power is off
from Newton's law by the factor (k + 1).

Constraints are constrained directions s_l (3n-vectors) with s_l . V = b_l
(eqs. 13, 14, 23-26): a fixed distance to a point (s = r_i - p on particle i),
a fixed distance between particles (s = r_p - r_q on p, r_q - r_p on q), an
imposed velocity e on a particle (s = e, b = |e|^2: only its component along
e is imposed, as the paper's fence), all three components of a velocity, or
motion in a plane. P is minimised over V with S V = b (eq. 18: the gradient
of P may have any component along the s_l): a convex cone program, solved by
:mod:`~discrete_robot.pushing.power_program`. Its duals are Newton's forces:
the friction forces (including static friction of particles at rest) and the
constraint forces sum_l alpha_l s_l, so the solution can be checked against
Newton's law F_total = 0.
"""

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from discrete_robot.errors import InputError
from discrete_robot.pushing.power_program import PowerProgram, solve_power_program
from discrete_robot.validation import finite_vector


@dataclass(frozen=True)
class FixedPointDistance:
    """Particle ``particle`` stays at its present distance from ``point`` (eq. 13: s = r_i - p)."""

    particle: int
    point: Sequence[float]

    def directions(self, positions: np.ndarray) -> list[tuple[dict[int, np.ndarray], float]]:
        return [({self.particle: positions[self.particle] - finite_vector(self.point, 3, "point")}, 0.0)]


@dataclass(frozen=True)
class FixedParticleDistance:
    """Particles ``first`` and ``second`` keep their distance (eq. 26)."""

    first: int
    second: int

    def directions(self, positions):
        offset = positions[self.first] - positions[self.second]
        return [({self.first: offset, self.second: -offset}, 0.0)]


@dataclass(frozen=True)
class ImposedVelocityComponent:
    """The component of the particle's velocity along ``velocity`` = e is imposed, the rest free (eq. 14:
    (v - e) . e = 0), e.g. a frictionless fence moving with e."""

    particle: int
    velocity: Sequence[float]

    def directions(self, positions):
        e = finite_vector(self.velocity, 3, "velocity")
        return [({self.particle: e}, float(e @ e))]


@dataclass(frozen=True)
class ImposedVelocity:
    """All three components of the particle's velocity are imposed (a hand holding it)."""

    particle: int
    velocity: Sequence[float]

    def directions(self, positions):
        v = finite_vector(self.velocity, 3, "velocity")
        return [({self.particle: axis}, float(value)) for axis, value in zip(np.eye(3), v, strict=True)]


@dataclass(frozen=True)
class PlanarMotion:
    """The particle moves in the plane with the given ``normal`` (a table, the ground)."""

    particle: int
    normal: Sequence[float] = (0.0, 0.0, 1.0)

    def directions(self, positions):
        return [({self.particle: finite_vector(self.normal, 3, "normal")}, 0.0)]


Constraint = FixedPointDistance | FixedParticleDistance | ImposedVelocityComponent | ImposedVelocity | PlanarMotion


@dataclass(frozen=True)
class ParticleSystem:
    """n particles: positions (n, 3) m, velocity-independent forces (n, 3) N, Coulomb friction magnitudes
    mu N (n,) N, and (only for the section-5 comparison) eta |v|^exponent dissipation coefficients (n,)."""

    positions: np.ndarray
    applied_forces: np.ndarray
    coulomb_friction: np.ndarray
    power_law_coefficient: np.ndarray = field(default_factory=lambda: np.zeros(0))
    power_law_exponent: float = 1.0

    def __post_init__(self):
        n = len(self.positions)
        if np.shape(self.positions) != (n, 3) or np.shape(self.applied_forces) != (n, 3):
            raise InputError("positions and applied_forces must both be (n, 3)")
        if np.shape(self.coulomb_friction) != (n,) or np.any(np.asarray(self.coulomb_friction) < 0.0):
            raise InputError("coulomb_friction: one value >= 0 per particle")
        if len(self.power_law_coefficient) not in (0, n) or np.any(np.asarray(self.power_law_coefficient) < 0.0):
            raise InputError("power_law_coefficient: empty or one value >= 0 per particle")
        if self.power_law_exponent < 1.0:
            raise InputError("power_law_exponent must be >= 1 (exponent 0 is Coulomb friction: coulomb_friction)")
        arrays = (self.positions, self.applied_forces, self.coulomb_friction, self.power_law_coefficient)
        if not all(np.all(np.isfinite(a)) for a in arrays):
            raise InputError("particle system values must be finite")


@dataclass(frozen=True)
class MinimumPowerMotion:
    """Velocities of least power and the Newtonian forces read from the solution's duals (all (n, 3))."""

    velocities: np.ndarray
    power: float
    friction_forces: np.ndarray
    dissipative_forces: np.ndarray
    constraint_forces: np.ndarray
    newton_residual: np.ndarray


def constrained_directions(positions: np.ndarray, constraints: Sequence[Constraint]) -> tuple[np.ndarray, np.ndarray]:
    """The 3n-vectors s_l (rows of S) and the values b_l of the constraints S V = b."""
    n = len(positions)
    rows, values = [], []
    for constraint in constraints:
        for name in ("particle", "first", "second"):
            particle = getattr(constraint, name, 0)
            if not 0 <= particle < n:
                raise InputError(f"{type(constraint).__name__}: no particle {particle} (n = {n})")
        for parts, value in constraint.directions(positions):
            row = np.zeros(3 * n)
            for particle, direction in parts.items():
                row[3 * particle:3 * particle + 3] += direction
            rows.append(row)
            values.append(value)
    return np.array(rows).reshape(len(rows), 3 * n), np.array(values)


def _power_law(coefficients: np.ndarray, exponent: float):
    """s(V) = sum eta_i |V_i|^(k+1), its gradient (k+1) eta |v|^(k-1) v and Hessian."""
    m = exponent

    def smooth(x):
        v = x.reshape(-1, 3)
        speed = np.linalg.norm(v, axis=1)
        value = float(coefficients @ speed ** (m + 1))
        gradient = ((m + 1) * coefficients * speed ** (m - 1))[:, None] * v
        unit = np.where(speed[:, None] > 0, v / np.where(speed > 0, speed, 1.0)[:, None], 0.0)
        blocks = ((m + 1) * coefficients * speed ** (m - 1))[:, None, None] * (
            np.eye(3)[None] + (m - 1) * unit[:, :, None] * unit[:, None, :])
        n = len(v)
        hessian = np.zeros((3 * n, 3 * n))
        for i in range(n):
            hessian[3 * i:3 * i + 3, 3 * i:3 * i + 3] = blocks[i]
        return value, gradient.ravel(), hessian

    return smooth


def solve_minimum_power(system: ParticleSystem, constraints: Sequence[Constraint],
                        tolerance: float = 1e-13) -> MinimumPowerMotion:
    """The motion of least power among those that satisfy ``constraints``.

    Raises InfeasibleError for inconsistent constraints or an unbounded power
    (forces stronger than friction along a free direction).
    """
    positions = np.asarray(system.positions, dtype=float)
    n = len(positions)
    S, b = constrained_directions(positions, constraints)
    rubbing = np.flatnonzero(np.asarray(system.coulomb_friction) > 0.0)
    selectors = np.zeros((len(rubbing), 3, 3 * n))
    for row, particle in enumerate(rubbing):
        selectors[row, :, 3 * particle:3 * particle + 3] = np.eye(3)
    coefficients = np.asarray(system.power_law_coefficient, dtype=float)
    smooth = _power_law(coefficients, system.power_law_exponent) if np.any(coefficients > 0.0) else None
    program = PowerProgram(linear=-np.asarray(system.applied_forces, dtype=float).ravel(),
                           norm_matrices=selectors, norm_offsets=np.zeros((len(rubbing), 3)),
                           norm_weights=np.asarray(system.coulomb_friction, dtype=float)[rubbing],
                           equality_matrix=S, equality_values=b, smooth=smooth)
    solution = solve_power_program(program, tolerance=tolerance)
    velocities = solution.x.reshape(n, 3)
    imposed = float(np.max(np.abs(b), initial=0.0))
    if imposed == 0.0:
        # nothing imposes motion: P is positively homogeneous, so the minimum is at rest (or unbounded, raised above)
        velocities = np.zeros_like(velocities)
    dissipative = np.zeros((n, 3))
    if smooth is not None:
        speed = np.linalg.norm(velocities, axis=1)
        dissipative = -(coefficients * speed ** (system.power_law_exponent - 1.0))[:, None] * velocities
    friction, constraint_forces, residual = _newtonian_forces(system, S, velocities, rubbing, -solution.norm_duals,
                                                              dissipative, imposed)
    return MinimumPowerMotion(velocities=velocities, power=solution.power, friction_forces=friction,
                              dissipative_forces=dissipative, constraint_forces=constraint_forces,
                              newton_residual=residual)


def _newtonian_forces(system: ParticleSystem, S: np.ndarray, velocities: np.ndarray, rubbing: np.ndarray,
                      dual_friction: np.ndarray, dissipative: np.ndarray, imposed_speed: float):
    """Newton's law at the minimum-power velocities: F + friction + dissipative + S^T lambda = residual.

    A moving particle's Coulomb friction is -mu N v_hat. A particle at rest
    exerts static friction: statically indeterminate, so it starts from the
    cone program's dual estimate and gets the least correction that, with the
    constraint forces S^T lambda, balances the forces (least squares); what no
    constraint or static friction can balance is the residual (zero when the
    principle of minimum power agrees with Newton).
    """
    n = len(velocities)
    limits = np.asarray(system.coulomb_friction, dtype=float)
    speed = np.linalg.norm(velocities, axis=1)
    resting = np.zeros(n, dtype=bool)
    resting[rubbing] = speed[rubbing] <= 1e-9 * max(float(speed.max()), imposed_speed)
    friction = np.zeros((n, 3))
    friction[rubbing] = dual_friction
    moving = ~resting & (limits > 0.0)
    friction[moving] = -limits[moving, None] * velocities[moving] / speed[moving, None]
    imbalance = (np.asarray(system.applied_forces) + friction + dissipative).ravel()
    rest_columns = np.zeros((3 * n, 3 * int(resting.sum())))
    for column, particle in enumerate(np.flatnonzero(resting)):
        rest_columns[3 * particle:3 * particle + 3, 3 * column:3 * column + 3] = np.eye(3)
    balance = np.hstack([rest_columns, S.T]) if S.size else rest_columns
    if balance.size:
        correction, *_ = np.linalg.lstsq(balance, -imbalance, rcond=None)
    else:
        correction = np.zeros(0)
    static = correction[:rest_columns.shape[1]].reshape(-1, 3)
    friction[resting] += static
    constraint_forces = (S.T @ correction[rest_columns.shape[1]:]).reshape(n, 3) if S.size else np.zeros((n, 3))
    residual = np.asarray(system.applied_forces) + friction + dissipative + constraint_forces
    return friction, constraint_forces, residual
