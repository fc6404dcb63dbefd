"""composition.compose on the harmonic oscillator q'' = -q, whose exact flow is a rotation: Störmer–Verlet (symmetric,
order 2) composed with FRACTIONS[4] must converge at order 4 against cos/sin, independently of the robot models."""

import numpy as np

from discrete_robot.composition import FRACTIONS, compose


def _verlet(state, h):
    q, p = state
    p = p - 0.5 * h * q
    q = q + h * p
    return q, p - 0.5 * h * q


def test_order_4_fractions_sum_to_one_and_converge_at_order_4_on_the_oscillator():
    gamma = FRACTIONS[4]
    assert abs(gamma.sum() - 1.0) < 1e-15
    assert abs((gamma ** 3).sum()) < 1e-14
    step = compose(_verlet, 4)
    errors = []
    for steps in (20, 40):
        state, h = (1.0, 0.0), 2.0 / steps
        for _ in range(steps):
            state = step(state, h)
        errors.append(np.hypot(state[0] - np.cos(2.0), state[1] + np.sin(2.0)))
    assert 2.0 ** 3.8 < errors[0] / errors[1] < 2.0 ** 4.2
