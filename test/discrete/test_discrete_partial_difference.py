"""The partial-difference operator: Potts' identities (2.5), (2.6), the paths (2.7), (2.8), and the Δq → 0 limit."""

import itertools

import numpy as np
import pytest

from discrete_robot.discrete.partial_difference import (
    SMALL_STEP,
    PathOperator,
    partial_difference_quotients,
    partial_differences,
)


def scalar_f(q):
    """A function of q_0, q_1, q_3 only (not of q_2), with mixed terms."""
    return np.sin(q[0]) * q[1] ** 2 + np.exp(0.3 * q[3]) * np.cos(q[0] - q[1]) + q[3] ** 3


def scalar_gradient(q):
    g0 = np.cos(q[0]) * q[1] ** 2 - np.exp(0.3 * q[3]) * np.sin(q[0] - q[1])
    g1 = 2 * np.sin(q[0]) * q[1] + np.exp(0.3 * q[3]) * np.sin(q[0] - q[1])
    g3 = 0.3 * np.exp(0.3 * q[3]) * np.cos(q[0] - q[1]) + 3 * q[3] ** 2
    return np.array([g0, g1, 0.0, g3])


def matrix_f(q):
    return np.array([[np.cos(q[1]) + q[0] * q[3], q[3]], [q[3], 2.0 + np.sin(q[0] * q[1])]])


@pytest.mark.parametrize("operator", list(PathOperator))
def test_sum_is_the_total_difference_and_absent_coordinates_give_zero(operator):
    rng = np.random.default_rng(0)
    for _ in range(5):
        q0, q1 = rng.normal(size=4), rng.normal(size=4)
        differences = partial_differences(scalar_f, q0, q1, operator)
        assert differences.sum() == pytest.approx(scalar_f(q1) - scalar_f(q0), abs=1e-14)   # (2.5)
        assert differences[2] == 0.0                                                         # (2.6), exactly
        matrix = partial_differences(matrix_f, q0, q1, operator)
        np.testing.assert_allclose(matrix.sum(axis=0), matrix_f(q1) - matrix_f(q0), atol=1e-14)
        assert np.all(matrix[2] == 0.0)


def test_neuman_tourassis_is_equation_2_7_and_symmetric_averages_2_7_and_2_8():
    q0, q1 = np.array([0.1, -0.4, 0.9, 0.3]), np.array([0.5, 0.2, -0.3, 1.1])
    n = 4

    def mixed(first_from, first, rest_from, r):
        """f with coordinates < r from ``first_from``, r from ``first``, > r from ``rest_from``."""
        q = np.concatenate([first_from[:r], [first[r]], rest_from[r + 1:]])
        return scalar_f(q)

    eq_2_7 = np.array([mixed(q0, q1, q1, r) - mixed(q0, q0, q1, r) for r in range(n)])
    eq_2_8 = np.array([mixed(q1, q1, q0, r) - mixed(q1, q0, q0, r) for r in range(n)])
    np.testing.assert_allclose(partial_differences(scalar_f, q0, q1, PathOperator.NEUMAN_TOURASSIS), eq_2_7,
                               atol=1e-15)
    np.testing.assert_allclose(partial_differences(scalar_f, q0, q1, PathOperator.SYMMETRIC),
                               0.5 * (eq_2_7 + eq_2_8), atol=1e-15)


def test_every_single_path_satisfies_the_identities_so_the_symmetric_choice_is_one_of_many():
    """The n! orderings of Potts' figure 1 all satisfy (2.5); the two we average are among them."""
    q0, q1 = np.array([0.1, -0.4, 0.9, 0.3]), np.array([0.5, 0.2, -0.3, 1.1])
    for ordering in itertools.permutations(range(4)):
        x, total = q0.copy(), 0.0
        for r in ordering:
            before = scalar_f(x)
            x[r] = q1[r]
            total += scalar_f(x) - before
        assert total == pytest.approx(scalar_f(q1) - scalar_f(q0), abs=1e-14)


def test_symmetric_operator_is_time_reversible_and_neuman_tourassis_is_not():
    q0, q1 = np.array([0.1, -0.4, 0.9, 0.3]), np.array([0.5, 0.2, -0.3, 1.1])
    forward = partial_differences(scalar_f, q0, q1, PathOperator.SYMMETRIC)
    backward = partial_differences(scalar_f, q1, q0, PathOperator.SYMMETRIC)
    np.testing.assert_allclose(backward, -forward, atol=1e-14)
    nt_forward = partial_differences(scalar_f, q0, q1, PathOperator.NEUMAN_TOURASSIS)
    nt_backward = partial_differences(scalar_f, q1, q0, PathOperator.NEUMAN_TOURASSIS)
    assert np.max(np.abs(nt_backward + nt_forward)) > 1e-2


@pytest.mark.parametrize("operator", list(PathOperator))
def test_quotients_tend_to_the_partial_derivatives_without_losing_digits(operator):
    q0 = np.array([0.3, -0.7, 0.2, 0.5])
    for step in (1e-2, 1e-3, 1e-6, 1e-12, 0.0):
        q1 = q0 + step * np.array([1.0, -0.5, 2.0, 0.7])
        quotient = partial_difference_quotients(scalar_f, scalar_gradient, q0, q1, operator)
        # the path passes within |q1 - q0| of q0, so the quotient is within O(step) of the gradient at q0
        np.testing.assert_allclose(quotient, scalar_gradient(q0), atol=10 * step + 1e-14)
        if step > 0:
            dq = q1 - q0
            differences = partial_differences(scalar_f, q0, q1, operator)
            np.testing.assert_allclose(quotient * dq, differences, atol=1e-15, rtol=1e-12)


def test_quotient_equals_the_exact_edge_integral_on_both_sides_of_the_threshold():
    """f = sin(q_0) c moved along q_0 only: Δf/Δq = c · 2 cos(a + Δ/2) sin(Δ/2)/Δ, a cancellation-free form."""
    c = 1.0 + 0.4**2

    def f(q):
        return np.sin(q[0]) * (1.0 + q[1] ** 2)

    def gradient(q):
        return np.array([np.cos(q[0]) * (1.0 + q[1] ** 2), 2.0 * q[1] * np.sin(q[0])])

    a = 0.3
    # below the threshold: Gauss–Legendre on the derivative, accurate to round-off at any step;
    # above: the divided difference, whose round-off is about ε |f| / Δ
    for step, tolerance in ((1e-12, 1e-15), (1e-9, 1e-15), (0.999 * SMALL_STEP, 1e-15),
                            (1.001 * SMALL_STEP, 1e-15 / SMALL_STEP), (1e-3, 1e-12), (0.05, 1e-14)):
        exact = c * 2.0 * np.cos(a + step / 2) * np.sin(step / 2) / step
        quotient = partial_difference_quotients(f, gradient, [a, 0.4], [a + step, 0.4])
        assert quotient[0] == pytest.approx(exact, rel=tolerance)
