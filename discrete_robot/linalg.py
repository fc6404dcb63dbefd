"""Small dense linear algebra inside compiled kernels, where LAPACK's per-call dispatch would cost more than the
arithmetic.

From Python, solve with scipy (:func:`discrete_robot.model.lagrangian.solve_mass_matrix`: one LAPACK Cholesky);
inside a kernel, with :func:`cholesky_solve`. Both factor A = L Lᵀ, but LAPACK's blocked factorisation sums in
another order, so their results agree to round-off only, not to the bit.
"""

import math

from discrete_robot.jit import njit


@njit
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
    for i in range(n):          # L Z = B
        for k in range(i):
            factor = A[i, k]
            for c in range(m):
                B[i, c] -= factor * B[k, c]
        inverse = 1.0 / A[i, i]
        for c in range(m):
            B[i, c] *= inverse
    for i in range(n - 1, -1, -1):      # Lᵀ X = Z
        inverse = 1.0 / A[i, i]
        for c in range(m):
            B[i, c] *= inverse
        for k in range(i):
            factor = A[i, k]
            for c in range(m):
                B[k, c] -= factor * B[i, c]
    return True
