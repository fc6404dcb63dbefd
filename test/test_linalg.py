"""linalg: the compiled small dense solves, against the definition of an inverse and against LAPACK."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from discrete_robot.linalg import cholesky_solve, inverse_into


def _invert(A):
    n = A.shape[0]
    out = np.empty((n, n))
    ok = inverse_into(A, np.empty((n, n)), np.empty(n, dtype=np.int64), out)
    return ok, out


@settings(deadline=None)     # the first example loads (or compiles) the kernel
@given(st.integers(1, 12), st.integers(0, 2**32 - 1), st.floats(-6.0, 6.0))
def test_the_inverse_times_the_matrix_is_the_identity_to_round_off(n, seed, log_scale):
    """A X = I to the backward-stable bound c n ε ‖A‖ ‖X‖, for random matrices over 12 orders of magnitude (the
    rows scaled apart too, so pivoting matters), and X agrees with LAPACK's inverse to the same round-off."""
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(n, n)) * 10.0 ** log_scale * np.exp(rng.normal(size=(n, 1)))
    before = A.copy()
    ok, X = _invert(A)
    assert ok
    assert np.array_equal(A, before)
    scale = np.linalg.norm(A, np.inf) * np.linalg.norm(X, np.inf)
    bound = 20.0 * n * np.finfo(float).eps * scale
    assert np.abs(A @ X - np.eye(n)).max() <= bound
    assert np.abs(X - np.linalg.inv(A)).max() <= bound * np.linalg.norm(X, np.inf)


def test_a_singular_matrix_is_reported_and_gives_no_numbers():
    ok, X = _invert(np.array([[1.0, 2.0], [2.0, 4.0]]))
    assert not ok and np.isnan(X).all()


def test_a_matrix_that_needs_a_row_swap_is_inverted_exactly():
    ok, X = _invert(np.array([[0.0, 1.0], [1.0, 0.0]]))
    assert ok and X.tolist() == [[0.0, 1.0], [1.0, 0.0]]


@settings(deadline=None)
@given(st.integers(1, 12), st.integers(1, 4), st.integers(0, 2**32 - 1))
def test_a_cholesky_solve_satisfies_its_system_and_refuses_an_indefinite_matrix(n, m, seed):
    """A X = B to round-off for a random symmetric positive-definite A; a symmetric A with a negative eigenvalue
    is refused."""
    rng = np.random.default_rng(seed)
    root = rng.normal(size=(n, n))
    A, B = root @ root.T + n * np.eye(n), rng.normal(size=(n, m))
    X = B.copy()
    assert cholesky_solve(A.copy(), X)
    assert np.abs(A @ X - B).max() <= 20.0 * n * np.finfo(float).eps * np.linalg.norm(A, np.inf) * np.abs(X).max()
    indefinite = A - (np.linalg.eigvalsh(A)[0] + 1.0) * np.eye(n)
    assert not cholesky_solve(indefinite, B.copy())
