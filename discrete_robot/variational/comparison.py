"""What the article's examples measure, and the RK45 baseline run for the same CPU time.

The article compares each variational integrator with a variable-step 4(5) Runge–Kutta method
"for the same CPU time": it picks the variational step h so that both take equally long. Here h
is the article's, so the matching goes the other way: the variational run is timed first, then
:func:`run_rk45_for_cpu_time` adjusts RK45's tolerance (rtol = atol) until scipy's RK45 takes about
as long. RK45's work grows like tol^(−1/5), so the tolerance is updated by the secant rule
log tol ← log tol + 5 log(τ/τ_target) (clipped to ±3 decades) until the time is within 15 %.

Tolerances stay between 1e-13 and 1e-3, the default of scipy's solve_ivp and of MATLAB's ode45 (the
article's RK45): looser, RK45's error control stops meaning anything (on the mass-spring it then gains
energy without bound). When even rtol = 1e-3 is slower than the variational run — a few-flop scalar
recurrence in a Python loop is cheaper than solve_ivp's per-step overhead — that run is reported with
its larger CPU time, so the comparison is then tilted in RK45's favour, never against it.
"""

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class CpuMatchedRun:
    """The RK45 result whose CPU time was closest to the target, with its tolerance and the trials made."""

    result: object
    rtol: float
    cpu_seconds: float
    target_seconds: float
    trials: list[tuple[float, float]]


def cpu_timed(function: Callable, *args, repeats: int = 1, **kwargs):
    """(result, CPU seconds) of ``function(*args, **kwargs)``; the fastest of ``repeats`` runs (less noise)."""
    best = np.inf
    for _ in range(max(1, repeats)):
        start = time.process_time()
        result = function(*args, **kwargs)
        best = min(best, time.process_time() - start)
    return result, best


LOOSEST_RTOL = 1e-3
TIGHTEST_RTOL = 1e-13


def run_rk45_for_cpu_time(run: Callable[[float], object], target_seconds: float, first_rtol: float = 1e-6,
                          max_trials: int = 6, within: float = 1.15) -> CpuMatchedRun:
    """Call ``run(rtol)`` with tolerances chosen so that its CPU time approaches ``target_seconds``.

    Tolerances are kept in [TIGHTEST_RTOL, LOOSEST_RTOL]; returns the trial whose time was closest (in
    ratio) to the target.
    """
    log_tol = np.log10(first_rtol)
    trials, best = [], None
    for _ in range(max_trials):
        rtol = 10.0 ** log_tol
        result, seconds = cpu_timed(run, rtol)
        seconds = max(seconds, 1e-6)
        trials.append((rtol, seconds))
        miss = abs(np.log(seconds / target_seconds))
        if best is None or miss < best[0]:
            best = (miss, result, rtol, seconds)
        if seconds <= within * target_seconds and seconds >= target_seconds / within:
            break
        log_tol = float(np.clip(log_tol + np.clip(5.0 * np.log10(seconds / target_seconds), -3.0, 3.0),
                                np.log10(TIGHTEST_RTOL), np.log10(LOOSEST_RTOL)))
        if trials[-1][0] == 10.0 ** log_tol:
            break  # at a tolerance bound: RK45 cannot get closer to the target
    _, result, rtol, seconds = best
    return CpuMatchedRun(result, rtol, seconds, target_seconds, trials)


def mean_variation(values) -> float:
    """Mean over the samples of |x_k − x_0| (the article's "mean variation" of the energy)."""
    values = np.asarray(values, dtype=float)
    return float(np.mean(np.abs(values - values[0])))


def orthogonality_errors(rotations: np.ndarray) -> np.ndarray:
    """‖I − RᵀR‖ (Frobenius) of each matrix in a stack of shape (N, d, d)."""
    eye = np.eye(rotations.shape[-1])
    return np.linalg.norm(eye - np.einsum("nji,njk->nik", rotations, rotations), axis=(1, 2))
