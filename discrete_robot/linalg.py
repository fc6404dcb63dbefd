"""Small dense linear algebra inside compiled kernels, where LAPACK's per-call dispatch would cost more than the
arithmetic.

From Python, solve with scipy (:func:`discrete_robot.model.lagrangian.solve_mass_matrix`: one LAPACK Cholesky);
inside a kernel, with :func:`cholesky_solve`. Both factor A = L Lᵀ, but LAPACK's blocked factorisation sums in
another order, so their results agree to round-off only, not to the bit. :func:`inverse_into` inverts a general
matrix into preallocated arrays, where numba's ``np.linalg.inv`` allocates its result and LAPACK's work arrays
at every call (and needs numba's runtime: :func:`discrete_robot.jit.njit`'s ``allocates=False``).
"""

import math

from discrete_robot.jit import njit

_NAN = math.nan


@njit(allocates=False)
def triangular_solve(T, B, lower, unit_diagonal):
    """Solve T X = B in place (B (n, m) overwritten by X) for the triangular matrix in the ``lower`` (else upper)
    triangle of T (n, n), with ones on its diagonal if ``unit_diagonal`` (T's diagonal then not read). Row by row
    over all right-hand sides at once, an inner loop the compiler vectorises."""
    n, m = T.shape[0], B.shape[1]
    for step in range(n):
        i = step if lower else n - 1 - step
        for k in range(0 if lower else i + 1, i if lower else n):
            factor = T[i, k]
            for c in range(m):
                B[i, c] -= factor * B[k, c]
        if not unit_diagonal:
            inverse = 1.0 / T[i, i]
            for c in range(m):
                B[i, c] *= inverse


@njit(allocates=False)
def cholesky_solve(A, B):
    """Solve A X = B in place (B (n, m) overwritten by X) for a symmetric positive-definite A (n, n): its lower
    triangle is read, then overwritten by the Cholesky factor L (A = L Lᵀ). Returns False, with A and B partly
    overwritten, if A is not positive definite. The substitutions run row by row over all right-hand sides at
    once, an inner loop the compiler vectorises."""
    n, m = A.shape[0], B.shape[1]
    for j in range(n):
        d = A[j, j]
        for k in range(j):
            d -= A[j, k] * A[j, k]
        if not d > 0.0:
            return False
        A[j, j] = math.sqrt(d)
        inverse = 1.0 / A[j, j]
        for i in range(j + 1, n):
            s = A[i, j]
            for k in range(j):
                s -= A[i, k] * A[j, k]
            A[i, j] = s * inverse
    triangular_solve(A, B, True, False)     # L Z = B
    for i in range(n - 1, -1, -1):      # Lᵀ X = Z
        inverse = 1.0 / A[i, i]
        for c in range(m):
            B[i, c] *= inverse
        for k in range(i):
            factor = A[i, k]
            for c in range(m):
                B[k, c] -= factor * B[i, c]
    return True


@njit(allocates=False)
def inverse_into(A, lu, pivots, out):
    """out = A⁻¹ for a square A (n, n), by LU factorisation with partial pivoting (P A = L U, into ``lu`` (n, n),
    the row swaps into ``pivots`` (n,) int64; A is left as it is), then L U X = P for the columns of X. Returns
    False, with ``out`` all NaN, if a pivot is zero (A singular); a non-finite A gives non-finite entries. The
    elimination as LAPACK's getrf + getri (np.linalg.inv) does it unblocked, so the two agree to round-off."""
    n = A.shape[0]
    for i in range(n):
        for j in range(n):
            lu[i, j] = A[i, j]
    for k in range(n):
        p = k
        for i in range(k + 1, n):
            if abs(lu[i, k]) > abs(lu[p, k]):
                p = i
        pivots[k] = p
        if lu[p, k] == 0.0:
            for i in range(n):
                for j in range(n):
                    out[i, j] = _NAN
            return False
        for j in range(n):
            lu[k, j], lu[p, j] = lu[p, j], lu[k, j]
        inverse = 1.0 / lu[k, k]
        for i in range(k + 1, n):
            lu[i, k] *= inverse
            factor = lu[i, k]
            for j in range(k + 1, n):
                lu[i, j] -= factor * lu[k, j]
    for i in range(n):          # X = P, then solved in place: L Y = P, U X = Y
        for j in range(n):
            out[i, j] = 1.0 if i == j else 0.0
    for k in range(n):
        for j in range(n):
            out[k, j], out[pivots[k], j] = out[pivots[k], j], out[k, j]
    triangular_solve(lu, out, True, True)
    triangular_solve(lu, out, False, False)
    return True
