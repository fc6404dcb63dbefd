r"""The min-time planner's reachability passes, compiled (numba): the math of :mod:`.min_time`'s docstring.

Each step k of a straight segment has torques F_r(x, y) = α_r y² + γ_r x y + β_r x² + g_r in the path speeds
x = v_k, y = v_{k+1}; the kernels take the rows α, γ, β (m, n) and the limits of the inertial part,
L = −effort − g < 0 < U = effort − g (m, n), N m. Speeds are path speeds ṡ, rad/s along the unit direction.

- :func:`max_entry_speed`: the largest x from which some y ∈ [0, exit_cap] is feasible (backward pass);
- :func:`max_exit_speed`: the largest feasible y ∈ [0, exit_cap] from x (forward pass), NaN if none;
- :func:`backward_pass`, :func:`forward_pass`: the two passes over all steps of a grid, one call each;
- :func:`squared_backward_pass`, :func:`squared_forward_pass`: the same passes for rows without the x y term
  (γ = 0, the retimer's), linear in the squared speeds: O(n) per step instead of O(n³).

Written as scalar loops because each call handles a handful of joints: numpy's per-call overhead would be
most of the cost (as in :mod:`discrete_robot.jit`).
"""

import numpy as np

from discrete_robot.jit import njit

#: a quadratic coefficient this small (relative to the largest) is zero: the equation is linear
_LINEAR = 1e-14
#: a discriminant this slightly negative (relative) is a double root lost to round-off (tangency)
_TANGENT = 1e-12
#: round-off of the three inertial terms (each O(1/Δs)), relative, on top of the limit tolerance
_INERTIAL_ROUNDOFF = 1e-13


@njit
def append_roots(a, b, c, out, count):
    """Append the real roots of a t² + b t + c = 0 to ``out[count:]`` (the root of b t + c where a is
    negligible; nothing where all vanish); returns the new count. Uses the stable form q = −(b + sign(b)√Δ)/2,
    roots q/a and c/q."""
    scale = max(abs(a), abs(b), abs(c))
    if scale == 0.0:
        return count
    a, b, c = a / scale, b / scale, c / scale
    if abs(a) < _LINEAR:
        if b != 0.0:
            out[count] = -c / b
            count += 1
        return count
    disc = b * b - 4.0 * a * c
    if disc < -_TANGENT * (b * b + abs(4.0 * a * c)):
        return count
    q = -0.5 * (b + (1.0 if b >= 0.0 else -1.0) * np.sqrt(max(disc, 0.0)))
    out[count] = q / a
    out[count + 1] = c / q if q != 0.0 else q / a
    return count + 2


@njit
def ray_capacity(alpha, gamma, beta, lower, upper, rho):
    """X(ρ) = max x² with (x, ρx) feasible: min_r of U_r/Q_r (Q_r > 0) or L_r/Q_r (Q_r < 0), Q_r(ρ) =
    α_r ρ² + γ_r ρ + β_r; ∞ where no limit binds."""
    capacity = np.inf
    for r in range(alpha.size):
        Q = (alpha[r] * rho + gamma[r]) * rho + beta[r]
        if Q > 0.0:
            capacity = min(capacity, upper[r] / Q)
        elif Q < 0.0:
            capacity = min(capacity, lower[r] / Q)
    return capacity


@njit
def max_entry_speed(alpha, gamma, beta, lower, upper, exit_cap):
    """max{x : ∃ y ∈ [0, exit_cap], L ≤ F(x, y) − g ≤ U}, the exact maximum over the candidate rays y = ρx:
    ρ = 0; a limit active at y = exit_cap; two limits active at once; the extremum of one Q_r."""
    n = alpha.size
    bounds = np.concatenate((upper, lower))
    A, C, B = np.concatenate((alpha, alpha)), np.concatenate((gamma, gamma)), np.concatenate((beta, beta))
    m = 2 * n
    rho = np.empty(1 + 2 * m + m * (m - 1) + n)
    rho[0] = 0.0
    count = 1
    if exit_cap > 0.0:
        Y2 = exit_cap * exit_cap
        for i in range(m):
            count = append_roots(Y2 * A[i] - bounds[i], Y2 * C[i], Y2 * B[i], rho, count)
    for i in range(m):
        for j in range(i + 1, m):
            count = append_roots(bounds[i] * A[j] - bounds[j] * A[i], bounds[i] * C[j] - bounds[j] * C[i],
                                 bounds[i] * B[j] - bounds[j] * B[i], rho, count)
    for r in range(n):
        rho[count] = -gamma[r] / (2.0 * alpha[r]) if alpha[r] != 0.0 else 0.0
        count += 1
    best = 0.0
    for k in range(count):
        ratio = rho[k]
        if not (np.isfinite(ratio) and ratio >= 0.0):
            continue
        x = np.sqrt(ray_capacity(alpha, gamma, beta, lower, upper, ratio))
        if exit_cap < np.inf:
            if ratio > 0.0:
                x = min(x, exit_cap / ratio)
        elif not np.isfinite(x):
            x = 0.0
        best = max(best, x)
    return best


@njit
def max_exit_speed(alpha, gamma, beta, lower, upper, x, exit_cap, tolerance):
    """max{y ∈ [0, exit_cap] : L ≤ F(x, y) − g ≤ U, x + y > 0}, NaN if the set is empty.

    The set is closed, so its maximum is exit_cap or a root of one of the 2n quadratics F_r(x, y) − g_r = L_r
    or U_r in y. Feasibility is judged with the absolute ``tolerance`` (n,) plus the inertial terms' round-off.
    """
    n = alpha.size
    candidates = np.empty(4 * n + 2)
    count = 0
    for r in range(n):
        count = append_roots(alpha[r], gamma[r] * x, beta[r] * x * x - upper[r], candidates, count)
        count = append_roots(alpha[r], gamma[r] * x, beta[r] * x * x - lower[r], candidates, count)
    candidates[count] = 0.0
    count += 1
    if np.isfinite(exit_cap):
        candidates[count] = exit_cap
        count += 1
    best = np.nan
    for k in range(count):
        y = candidates[k]
        if not (np.isfinite(y) and 0.0 <= y <= exit_cap) or (x <= 0.0 and y <= 0.0):
            continue
        if best == best and y <= best:   # best == best: a feasible speed was found
            continue
        feasible = True
        for r in range(n):
            a, c, b = alpha[r] * y * y, gamma[r] * x * y, beta[r] * x * x
            slack = tolerance[r] + _INERTIAL_ROUNDOFF * (abs(a) + abs(c) + abs(b))
            inertial = a + c + b
            if inertial > upper[r] + slack or inertial < lower[r] - slack:
                feasible = False
                break
        if feasible:
            best = y
    return best


@njit
def backward_pass(alpha, gamma, beta, lower, upper, cap, margin):
    """Controllable speeds K (m + 1,) of the m steps (rows): K_m = 0, K_k = min(max entry speed of step k
    towards K_{k+1}, shrunk by ``margin`` (relative), cap[k]); K_0 = 0 (the motion starts at rest). ``cap``
    (m + 1,): the velocity limits' cap on the path speed at each node."""
    m = alpha.shape[0]
    K = np.zeros(m + 1)
    for k in range(m - 1, -1, -1):
        K[k] = min(max_entry_speed(alpha[k], gamma[k], beta[k], lower[k], upper[k], K[k + 1]) * (1.0 - margin),
                   cap[k])
    K[0] = 0.0
    return K


@njit
def forward_pass(alpha, gamma, beta, lower, upper, K, tolerance, v):
    """The greedy profile into v (m + 1,): v_0 = 0, v_{k+1} = the max feasible exit speed ≤ K_{k+1}, v_m = 0.
    Returns −1, or the first step with no admissible exit speed."""
    m = alpha.shape[0]
    v[:] = 0.0
    for k in range(m):
        y = max_exit_speed(alpha[k], gamma[k], beta[k], lower[k], upper[k], v[k], K[k + 1], tolerance)
        if np.isnan(y):
            return k
        v[k + 1] = y
    v[m] = 0.0
    return -1



@njit
def _speed_window(alpha, beta, lower, upper, u, w_cap, tolerance, roundoff):
    """The window [lo, hi] of squared exit speeds w ∈ [0, w_cap] with L_r − tol_r ≤ α_r w + β_r u ≤ U_r + tol_r
    (rows with α_r = 0 bound u alone: an empty window when they fail), tol_r = ``tolerance`` (n,, absolute) plus
    ``roundoff`` times |β_r u|. Returns (lo, hi, the row setting hi, the row setting lo), −1 for a box bound."""
    lo, hi, i_hi, i_lo = 0.0, w_cap, -1, -1
    for r in range(alpha.size):
        slack = tolerance[r] + roundoff * abs(beta[r] * u)
        low, high = lower[r] - slack - beta[r] * u, upper[r] + slack - beta[r] * u
        if alpha[r] == 0.0:
            if low > 0.0 or high < 0.0:
                return 1.0, 0.0, -1, -1
            continue
        if alpha[r] < 0.0:
            low, high = high, low
        low, high = low / alpha[r], high / alpha[r]
        if high < hi:
            hi, i_hi = high, r
        if low > lo:
            lo, i_lo = low, r
    return lo, hi, i_hi, i_lo


@njit
def max_squared_entry(alpha, beta, lower, upper, w_cap, u_cap, zero):
    """max{u ∈ [0, u_cap] : ∃ w ∈ [0, w_cap], L ≤ α w + β u ≤ U} (squared path speeds; the rows are linear in
    u = x², w = y²: the γ = 0 form of TOPP-RA), −1 if the set is empty. Each row r bounds w between two lines in
    u, so g(u) = min of the upper lines − max of the lower lines is concave and the answer is its largest root
    below u_cap: Newton's iteration from the right lands on the active pair's crossing and, g being piecewise
    linear, ends after at most one step per line. ``zero``: zeros (n,), the window's tolerance."""
    u = u_cap
    for r in range(alpha.size):     # a finite start: w ∈ [0, w_cap] bounds u through every row with β_r ≠ 0
        if beta[r] > 0.0:
            u = min(u, (upper[r] - min(0.0, alpha[r] * w_cap)) / beta[r])
        elif beta[r] < 0.0:
            u = min(u, (lower[r] - max(0.0, alpha[r] * w_cap)) / beta[r])
    if not np.isfinite(u):
        return u
    for _ in range(2 * alpha.size + 3):     # g has at most 2n + 2 pieces, each visited once, then the last check
        if u < 0.0:
            return -1.0
        lo, hi, i_hi, i_lo = _speed_window(alpha, beta, lower, upper, u, w_cap, zero, _INERTIAL_ROUNDOFF)
        if lo <= hi * (1.0 + _TANGENT) + _TANGENT * abs(lo):
            return u
        if i_hi < 0 and i_lo < 0:
            return -1.0         # a row with α = 0 fails at u: u_cap was below its bound already
        # the active lines w = p + q u (q = −β/α); a line of the box [0, w_cap] has q = 0
        q_hi = -beta[i_hi] / alpha[i_hi] if i_hi >= 0 else 0.0
        q_lo = -beta[i_lo] / alpha[i_lo] if i_lo >= 0 else 0.0
        if q_hi - q_lo >= 0.0:
            return -1.0         # g increases up to u and is negative there: no feasible u below
        u = u - (hi - lo) / (q_hi - q_lo)
    return -1.0


@njit
def squared_backward_pass(alpha, beta, lower, upper, cap, margin):
    """:func:`backward_pass` for rows linear in the squared speeds (γ = 0), by :func:`max_squared_entry`:
    controllable path speeds K (m + 1,), K_m = 0 = K_0, each shrunk by ``margin`` (relative), capped by ``cap``."""
    m = alpha.shape[0]
    K = np.zeros(m + 1)
    zero = np.zeros(alpha.shape[1])
    for k in range(m - 1, -1, -1):
        u = max_squared_entry(alpha[k], beta[k], lower[k], upper[k], K[k + 1] * K[k + 1], cap[k] * cap[k], zero)
        K[k] = min(np.sqrt(max(u, 0.0)) * (1.0 - margin), cap[k])
    K[0] = 0.0
    return K


@njit
def squared_forward_pass(alpha, beta, lower, upper, K, tolerance, v):
    """:func:`forward_pass` for rows linear in the squared speeds (γ = 0): v_{k+1} = the largest feasible speed ≤
    K_{k+1} (the top of the exact window of :func:`_speed_window`, kept inside the window widened by ``tolerance``
    and round-off, which only decides feasibility), v_m = 0. Returns −1, or the first step with none."""
    m = alpha.shape[0]
    zero = np.zeros(alpha.shape[1])
    v[:] = 0.0
    for k in range(m):
        u = v[k] * v[k]
        cap = K[k + 1] * K[k + 1]
        lo, hi, _, _ = _speed_window(alpha[k], beta[k], lower[k], upper[k], u, cap, tolerance, _INERTIAL_ROUNDOFF)
        top = _speed_window(alpha[k], beta[k], lower[k], upper[k], u, cap, zero, 0.0)[1]
        w = min(hi, max(top, lo))
        if lo > hi or (u <= 0.0 and w <= 0.0):
            return k
        v[k + 1] = np.sqrt(w)
    v[m] = 0.0
    return -1
