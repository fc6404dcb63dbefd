"""The examples of Peshkin & Sanderson's minimum-power paper, on the general particle solver.

- Section 5: a particle pushed along +x by a frictionless fence moving at v_x,
  pulled along -y by a constant force m g, with a dissipative force eta v^k
  against its velocity (k = 0: Coulomb friction). Newton (eq. 29):
  m g / eta = v_y (v_x^2 + v_y^2)^((k-1)/2); minimum power (eq. 32) gives the
  same with an extra factor (k + 1), so the two agree only for k = 0. (The
  paper writes v_y for the speed along the applied force; here v_y < 0.)
- Section 1.1/1.3: a rope lying snaked on the ground straightens as one end is
  pulled steadily: particles joined by fixed-distance links, each held in the
  ground plane and rubbing on it with Coulomb friction, the end particle's
  velocity imposed. Time-stepped quasistatically.
"""

from dataclasses import dataclass

import numpy as np

from discrete_robot.errors import InputError
from discrete_robot.pushing.minimum_power import (
    FixedParticleDistance,
    ImposedVelocity,
    ImposedVelocityComponent,
    MinimumPowerMotion,
    ParticleSystem,
    PlanarMotion,
    solve_minimum_power,
)
from discrete_robot.validation import finite_scalar, positive_step, whole_number


def fence_push(fence_speed: float, weight: float, eta: float, exponent: float) -> MinimumPowerMotion:
    """Section 5: the particle's minimum-power motion (exponent 0: Coulomb friction of magnitude eta)."""
    if exponent == 0.0 and eta <= weight:
        raise InputError(f"with Coulomb friction eta ({eta}) must exceed m g ({weight}), or the particle accelerates")
    coulomb = eta if exponent == 0.0 else 0.0
    system = ParticleSystem(positions=np.zeros((1, 3)), applied_forces=np.array([[0.0, -weight, 0.0]]),
                            coulomb_friction=np.array([coulomb]),
                            power_law_coefficient=np.array([0.0 if exponent == 0.0 else eta]),
                            power_law_exponent=max(exponent, 1.0))
    return solve_minimum_power(system, [ImposedVelocityComponent(0, (fence_speed, 0.0, 0.0)), PlanarMotion(0)])


def snaked_rope(links: int, length: float, amplitude: float, waves: float) -> np.ndarray:
    """Positions (links + 1, 3) of a rope of total ``length`` lying on the ground (z = 0) along a sine wave
    y = amplitude sin(2 pi waves s / span) of ``waves`` periods, with equal link lengths along x."""
    links = whole_number(links, "links", low=2)
    length = positive_step(length, "length")
    fine = np.linspace(0.0, 1.0, 20001)
    span = 1.0
    curve = np.column_stack([fine * span, amplitude * np.sin(2 * np.pi * waves * fine)])
    arc = np.concatenate([[0.0], np.cumsum(np.linalg.norm(np.diff(curve, axis=0), axis=1))])
    stations = np.linspace(0.0, arc[-1], links + 1)
    points = np.column_stack([np.interp(stations, arc, curve[:, 0]), np.interp(stations, arc, curve[:, 1])])
    points *= length / np.sum(np.linalg.norm(np.diff(points, axis=0), axis=1))
    return np.column_stack([points, np.zeros(links + 1)])


@dataclass(frozen=True)
class RopePull:
    """The rope's particle positions at each time (steps + 1, n, 3), its end-to-end distance, its length and the
    largest link-length change a step made before the lengths were restored (relative to the link length)."""

    times: np.ndarray
    positions: np.ndarray
    end_to_end: np.ndarray
    length: float
    largest_link_drift: float


def pull_rope(positions: np.ndarray, pull_velocity, friction: float, duration: float,
              largest_move: float = 0.05) -> RopePull:
    """Pull the last particle of the rope with ``pull_velocity`` (m/s) for ``duration`` s.

    Each step solves the minimum-power velocities V and moves the particles
    by V dt, with dt chosen so that no particle moves more than
    ``largest_move`` link lengths: near a straight stretch the velocities
    that satisfy the links to first order can be large (a link pair can fold),
    and long steps would turn that into large link errors. The constraints
    hold the link lengths only to first order in dt, so after each step every
    link is restored to its length along its direction (from the pulled end
    outward); the largest relative change removed is reported.
    """
    duration = finite_scalar(duration, "duration", low=0.0)
    largest_move = positive_step(largest_move, "largest_move")
    positions = np.array(positions, dtype=float)
    n = len(positions)
    lengths = np.linalg.norm(np.diff(positions, axis=0), axis=1)
    constraints = ([FixedParticleDistance(i, i + 1) for i in range(n - 1)] + [PlanarMotion(i) for i in range(n)]
                   + [ImposedVelocity(n - 1, pull_velocity)])
    times, history = [0.0], [positions.copy()]
    drift = 0.0
    while times[-1] < duration * (1.0 - 1e-12):
        system = ParticleSystem(positions=positions, applied_forces=np.zeros((n, 3)),
                                coulomb_friction=np.full(n, friction))
        velocities = solve_minimum_power(system, constraints).velocities
        fastest = float(np.max(np.linalg.norm(velocities, axis=1)))
        step = min(duration - times[-1], largest_move * lengths.min() / fastest)
        positions = positions + step * velocities
        links = np.linalg.norm(np.diff(positions, axis=0), axis=1)
        drift = max(drift, float(np.max(np.abs(links - lengths) / lengths)))
        for i in range(n - 2, -1, -1):
            direction = positions[i] - positions[i + 1]
            positions[i] = positions[i + 1] + lengths[i] * direction / np.linalg.norm(direction)
        times.append(times[-1] + step)
        history.append(positions.copy())
    history = np.array(history)
    return RopePull(times=np.array(times), positions=history,
                    end_to_end=np.linalg.norm(history[:, -1] - history[:, 0], axis=1), length=float(lengths.sum()),
                    largest_link_drift=drift)
