"""The principle of minimum power against Newton's law and the paper's closed forms (Peshkin & Sanderson)."""

import numpy as np
import pytest
from scipy.optimize import brentq, minimize

from discrete_robot.errors import InfeasibleError, InputError
from discrete_robot.pushing.minimum_power import (
    FixedParticleDistance,
    FixedPointDistance,
    ImposedVelocity,
    ImposedVelocityComponent,
    ParticleSystem,
    PlanarMotion,
    solve_minimum_power,
)
from paper_examples import fence_push, pull_rope, snaked_rope

FENCE_SPEED, WEIGHT, ETA = 0.2, 1.0, 1.5


def newton_fence_speed(exponent):
    """Eq. 29: m g / eta = v_y (v_x^2 + v_y^2)^((n-1)/2), v_y the speed along the applied force."""
    return brentq(lambda s: s * (FENCE_SPEED ** 2 + s ** 2) ** ((exponent - 1) / 2) - WEIGHT / ETA, 1e-12, 1e3,
                  xtol=1e-15)


def minimum_power_fence_speed(exponent):
    """Eq. 32: the same with the factor (n + 1)."""
    return brentq(lambda s: (exponent + 1) * s * (FENCE_SPEED ** 2 + s ** 2) ** ((exponent - 1) / 2) - WEIGHT / ETA,
                  1e-12, 1e3, xtol=1e-15)


def test_push_fence_coulomb_friction_minimum_power_agrees_with_newton():
    motion = fence_push(FENCE_SPEED, WEIGHT, ETA, exponent=0)
    v = motion.velocities[0]
    assert v[0] == pytest.approx(FENCE_SPEED, rel=1e-12)
    assert -v[1] == pytest.approx(newton_fence_speed(0), rel=1e-9)
    # closed form for n = 0: v_y / |v| = m g / eta
    assert -v[1] / np.hypot(v[0], v[1]) == pytest.approx(WEIGHT / ETA, rel=1e-9)
    np.testing.assert_allclose(motion.newton_residual, 0.0, atol=1e-9)
    # the fence pushes along x only, with the x component of the friction
    assert motion.constraint_forces[0, 0] == pytest.approx(ETA * v[0] / np.hypot(v[0], v[1]), rel=1e-9)


@pytest.mark.parametrize("exponent", [1, 2, 3])
def test_push_fence_power_law_minimum_power_is_off_by_the_factor_n_plus_1(exponent):
    motion = fence_push(FENCE_SPEED, WEIGHT, ETA, exponent=exponent)
    speed = -motion.velocities[0, 1]
    assert speed == pytest.approx(minimum_power_fence_speed(exponent), rel=1e-9)
    assert speed != pytest.approx(newton_fence_speed(exponent), rel=1e-3)
    # Newton's y balance fails by exactly the factor: eta |v|^(n-1) v_y = m g / (n + 1)
    assert motion.newton_residual[0, 1] == pytest.approx(-exponent / (exponent + 1) * WEIGHT, rel=1e-9)
    if exponent == 1:  # viscous: Newton gives v_y = m g / eta, minimum power half of it
        assert newton_fence_speed(1) / speed == pytest.approx(2.0, rel=1e-9)


def test_push_fence_needs_friction_stronger_than_the_load():
    with pytest.raises(InputError, match="must exceed"):
        fence_push(FENCE_SPEED, WEIGHT, 0.5 * WEIGHT, exponent=0)


def test_push_rope_pulled_by_one_end_straightens():
    rope = snaked_rope(links=10, length=1.0, amplitude=0.15, waves=1.5)
    links = np.linalg.norm(np.diff(rope, axis=0), axis=1)
    pull = pull_rope(rope, pull_velocity=(0.1, 0.0, 0.0), friction=1.0, duration=8.0)
    assert pull.length == pytest.approx(1.0, rel=1e-12)
    assert pull.end_to_end[0] < 0.8 * pull.length
    assert pull.end_to_end[-1] >= 0.999 * pull.length
    halfway = np.searchsorted(pull.times, 4.0)
    assert pull.end_to_end[halfway:].min() >= 0.99 * pull.length
    # the links keep their lengths; a step changes them only at second order before they are restored
    for positions in pull.positions[::10]:
        np.testing.assert_allclose(np.linalg.norm(np.diff(positions, axis=0), axis=1), links, rtol=1e-12)
    assert pull.largest_link_drift < 0.01
    np.testing.assert_allclose(pull.positions[:, :, 2], 0.0, atol=1e-12)
    np.testing.assert_allclose(pull.positions[-1, -1], rope[-1] + [0.8, 0.0, 0.0], atol=1e-12)


def test_push_rope_minimum_power_step_satisfies_newtons_law():
    """Coulomb friction: the minimum-power velocities with the solution's friction and constraint forces balance;
    moving particles rub with mu N against their velocity, particles at rest with at most mu N."""
    rope = snaked_rope(links=12, length=1.0, amplitude=0.2, waves=2.0)
    n = len(rope)
    constraints = ([FixedParticleDistance(i, i + 1) for i in range(n - 1)] + [PlanarMotion(i) for i in range(n)]
                   + [ImposedVelocity(n - 1, (0.05, 0.02, 0.0))])
    system = ParticleSystem(positions=rope, applied_forces=np.zeros((n, 3)), coulomb_friction=np.full(n, 0.7))
    motion = solve_minimum_power(system, constraints)
    np.testing.assert_allclose(motion.newton_residual, 0.0, atol=1e-9)
    speed = np.linalg.norm(motion.velocities, axis=1)
    moving = speed > 1e-9
    assert 0 < moving.sum() < n, "the tail of the rope stays at rest while the near part moves"
    np.testing.assert_allclose(motion.friction_forces[moving], -0.7 * motion.velocities[moving] / speed[moving, None],
                               rtol=1e-9)
    assert np.all(np.linalg.norm(motion.friction_forces[~moving], axis=1) <= 0.7 * (1 + 1e-6))
    for i in range(n - 1):  # links keep their length to first order
        offset = rope[i] - rope[i + 1]
        assert (motion.velocities[i] - motion.velocities[i + 1]) @ offset == pytest.approx(0.0, abs=1e-12)


def test_push_minimum_power_matches_a_generic_optimiser_on_a_small_chain():
    """A second formulation: parametrise the planar velocities that keep the links and the pulled end (2 free
    parameters) and minimise the power with Nelder-Mead, which needs no gradient at the kinks."""
    positions = np.array([[0.0, 0.0, 0.0], [0.3, 0.1, 0.0], [0.5, 0.35, 0.0]])
    forces = np.array([[0.2, -0.1, 0.0], [0.0, 0.3, 0.0], [0.0, 0.0, 0.0]])
    friction = np.array([1.0, 0.8, 0.6])
    pulled = np.array([0.1, 0.05])
    constraints = [FixedParticleDistance(0, 1), FixedParticleDistance(1, 2), ImposedVelocity(2, (*pulled, 0.0)),
                   *[PlanarMotion(i) for i in range(3)]]
    motion = solve_minimum_power(ParticleSystem(positions, forces, friction), constraints)

    d01, d12 = positions[0, :2] - positions[1, :2], positions[1, :2] - positions[2, :2]

    def velocities(p):
        """Particle 1 has velocity w with (w - pulled) . d12 = 0; particle 0 has u with (u - w) . d01 = 0."""
        w = pulled + p[0] * np.array([-d12[1], d12[0]])
        u = w + p[1] * np.array([-d01[1], d01[0]])
        return np.array([u, w, pulled])

    def power(p):
        v = velocities(p)
        return float(friction @ np.linalg.norm(v, axis=1) - np.sum(forces[:, :2] * v))

    best = min((minimize(power, start, method="Nelder-Mead", options={"xatol": 1e-12, "fatol": 1e-15,
                                                                      "maxiter": 20000})
                for start in ([0.0, 0.0], [1.0, -1.0], [-1.0, 1.0])), key=lambda r: r.fun)
    assert motion.power <= best.fun + 1e-12
    assert motion.power == pytest.approx(best.fun, abs=1e-9)
    np.testing.assert_allclose(motion.velocities[:, :2], velocities(best.x), atol=1e-5)


def test_push_particle_held_by_static_friction_on_a_tether():
    """A tethered particle loaded less than its friction stays put (a kink of the power): friction takes the
    tangential load; the radial load is shared by tether and friction (statically indeterminate)."""
    position = np.array([[1.0, 0.0, 0.0]])
    force = np.array([[0.3, 0.4, 0.0]])
    system = ParticleSystem(position, force, np.array([0.5]))
    motion = solve_minimum_power(system, [FixedPointDistance(0, (0.0, 0.0, 0.0)), PlanarMotion(0)])
    np.testing.assert_allclose(motion.velocities, 0.0, atol=1e-9)
    np.testing.assert_allclose(motion.newton_residual, 0.0, atol=1e-9)
    np.testing.assert_allclose(motion.friction_forces[0, 1], -0.4, atol=1e-9)
    np.testing.assert_allclose(motion.constraint_forces[0, 1:], 0.0, atol=1e-12)
    assert np.linalg.norm(motion.friction_forces[0]) <= 0.5 * (1 + 1e-9)


def test_push_load_beyond_friction_is_not_quasistatic():
    system = ParticleSystem(np.zeros((1, 3)), np.array([[0.0, 2.0, 0.0]]), np.array([1.0]))
    with pytest.raises(InfeasibleError, match="unbounded"):
        solve_minimum_power(system, [PlanarMotion(0), ImposedVelocityComponent(0, (0.1, 0.0, 0.0))])


def test_push_inconsistent_constraints_and_bad_systems_are_rejected():
    system = ParticleSystem(np.zeros((1, 3)), np.zeros((1, 3)), np.array([1.0]))
    with pytest.raises(InfeasibleError, match="inconsistent"):
        solve_minimum_power(system, [ImposedVelocity(0, (0.1, 0.0, 0.0)), ImposedVelocity(0, (0.2, 0.0, 0.0))])
    with pytest.raises(InputError, match="no particle 3"):
        solve_minimum_power(system, [FixedParticleDistance(0, 3)])
    with pytest.raises(InputError, match="coulomb_friction"):
        ParticleSystem(np.zeros((1, 3)), np.zeros((1, 3)), np.array([-1.0]))
    with pytest.raises(InputError, match="finite"):
        ParticleSystem(np.full((1, 3), np.nan), np.zeros((1, 3)), np.array([1.0]))
