"""The partial-difference operator Δ_r of Potts (seed 000, section 2).

For f(q) between q(k) and q(k+1) a partial difference Δ_r f must satisfy

    (2.5)  Σ_r Δ_r f = Δf = f[q(k+1)] − f[q(k)]
    (2.6)  Δ_r f = 0 when f does not depend on q_r.

Any path from q(k) to q(k+1) along the edges of the box they span (one coordinate
moved at a time) gives such an operator: Δ_r f is the change of f along the edge on
which q_r moves. A path is named here by the *ordering* in which the coordinates
are moved from their k values to their k+1 values.

* ``NEUMAN_TOURASSIS`` (eq. 2.7): Δ_r f = f[q_1..q_{r-1}(k), q_r..q_n(k+1)] − f[q_1..q_r(k), q_{r+1}..q_n(k+1)],
  i.e. the ordering q_n, q_{n-1}, ..., q_1.
* ``SYMMETRIC``: the average of that path and the reverse ordering q_1, ..., q_n (eq. 2.8; Gotusso's
  operator). The average over all n! orderings would be the fully symmetric choice but costs n!
  evaluations; these two cost 2n distinct configurations. Each path satisfies (2.5) and (2.6), so
  their average does too. Swapping k and k+1 maps one ordering's vertices onto the other's, so the
  average is time-symmetric: the discrete model built on it is second-order accurate, where the
  single Neuman–Tourassis path gives first order.

Δ_r f / Δq_r → ∂f/∂q_r as Δq_r → 0, but the divided difference loses digits (its
round-off grows like ε|f|/|Δq_r|). :func:`partial_difference_quotients` therefore
writes it, for |Δq_r| ≤ ``threshold``, as the exact edge integral

    Δ_r f / Δq_r = ∫₀¹ ∂f/∂q_r (x + s Δq_r e_r) ds

evaluated by 3-point Gauss–Legendre quadrature (error O(Δq_r⁶), below round-off on any
edge shorter than 1e-2), which is well conditioned and exact in the limit. Two points would
be 1.2 times faster per step, but their error has one sign at a pendulum's every turning
point: T + V over 10⁵ steps drifted 2.5 times further.

The default threshold, 1e-5 rad or m, is where the divided difference's round-off, ε|f|/|Δq_r|,
reaches 2e-11 of |f| per unit of q: far below the O(Δt²) error of the discrete equations
themselves, and T + V does not see it at all (divided differences telescope exactly, (2.5)).
The quadrature costs three evaluations per path and short edge, and at 1 kHz most of an arm's
edges are shorter than 1e-3: with that threshold it was about a sixth of the 6-joint arm's step.

The compositions of order 4 and 6 reach state errors below that round-off: over 1 s of the 6-joint
arm, `discrete4`'s error stopped falling at 5e-8 (h = 0.3 ms) and rose to 7.9e-8 at 0.1 ms. So for
them (``turned_differences``) the compiled kernel takes the difference of a and V along an edge
without dividing two evaluations, for every coordinate that turns or slides a rigid subtree: it
turns the subtree back from the edge's end (:func:`discrete_robot.model.compiled._edge_difference`,
every term of its own size; 1.6e-10 at 0.1 ms), and needs neither the threshold nor the quadrature
there. The threshold and the quadrature
remain for the numpy evaluation and for the coordinates that mimic followers or a shared root link
leave out (:mod:`.compiled`).
"""

import enum
from collections.abc import Callable

import numpy as np

#: |Δq_r| (rad or m) at or below which the quotient is taken from the derivative (see module doc)
SMALL_STEP = 1e-5
_NODES, _WEIGHTS = np.polynomial.legendre.leggauss(3)
GAUSS_NODES = 0.5 * (_NODES + 1.0)     # on [0, 1]
GAUSS_WEIGHTS = 0.5 * _WEIGHTS


class PathOperator(enum.Enum):
    NEUMAN_TOURASSIS = "neuman_tourassis"
    SYMMETRIC = "symmetric"


class DifferencePaths:
    """The path(s) of an operator for n coordinates: their vertices and how differences map to coordinates."""

    def __init__(self, n: int, operator: PathOperator = PathOperator.SYMMETRIC):
        self.n = n
        self.operator = PathOperator(operator)
        nt = np.arange(n)[::-1]
        orderings = [nt] if self.operator is PathOperator.NEUMAN_TOURASSIS else [nt, nt[::-1]]
        #: (P, n): the coordinates in the order each path moves them from q(k) to q(k+1)
        self.orderings = np.array(orderings)
        #: (P, n): [p, r] = the step of path p on which coordinate r moves (its start vertex index)
        self.position = np.argsort(self.orderings, axis=1)
        #: (P, n+1, n): [p, m, r] = coordinate r is at its k+1 value at vertex m of path p
        self.moved = self.position[:, None, :] < np.arange(n + 1)[None, :, None]
        self._path_index = np.arange(len(orderings))[:, None]

    @property
    def n_paths(self) -> int:
        return len(self.orderings)

    def vertices(self, q0: np.ndarray, q1: np.ndarray) -> np.ndarray:
        """(P, n+1, n): vertex m of each path; vertex 0 is q0 = q(k), vertex n is q1 = q(k+1)."""
        return np.where(self.moved, q1, q0)

    def differences(self, values: np.ndarray) -> np.ndarray:
        """Δ_r f, shape (n, *s), from f at the vertices, ``values`` of shape (P, n+1, *s)."""
        steps = values[:, 1:] - values[:, :-1]
        return steps[self._path_index, self.position].sum(axis=0) / self.n_paths

    def edge_sizes(self, values: np.ndarray) -> np.ndarray:
        """|f| at the two ends of the edge along which q_r moves, averaged over the paths, shape (n, *s), from
        f at the vertices (P, n+1, *s): the scale of Δ_r f's cancellation."""
        sizes = np.abs(values[:, 1:]) + np.abs(values[:, :-1])
        return sizes[self._path_index, self.position].sum(axis=0) / self.n_paths

    def edge_points(self, vertices: np.ndarray, dq: np.ndarray, r: int) -> np.ndarray:
        """(P, G, n): the Gauss–Legendre points on the edge of each path along which q_r moves."""
        start = vertices[np.arange(self.n_paths), self.position[:, r]]        # (P, n)
        points = np.repeat(start[:, None, :], len(GAUSS_NODES), axis=1)
        points[:, :, r] += GAUSS_NODES * dq[r]
        return points

    def edge_average(self, derivative_values: np.ndarray) -> np.ndarray:
        """∫₀¹ ∂_r f ds averaged over the paths, from ∂_r f at :meth:`edge_points` (P, G, *s)."""
        return np.tensordot(GAUSS_WEIGHTS, derivative_values.mean(axis=0), axes=(0, 0))


def _evaluate(f: Callable, points: np.ndarray, vectorized: bool) -> np.ndarray:
    if vectorized:
        return np.asarray(f(points), dtype=float)
    flat = points.reshape(-1, points.shape[-1])
    values = np.array([np.asarray(f(x), dtype=float) for x in flat])
    return values.reshape(points.shape[:-1] + values.shape[1:])


def partial_differences(f: Callable, q0, q1, operator: PathOperator = PathOperator.SYMMETRIC,
                        vectorized: bool = False) -> np.ndarray:
    """Δ_r f(k) for r = 1..n (index r−1), shape (n, *f_shape), for scalar- or matrix-valued f(q).

    ``vectorized``: f accepts a batch of configurations (..., n) at once.
    """
    q0, q1 = np.asarray(q0, dtype=float), np.asarray(q1, dtype=float)
    paths = DifferencePaths(q0.size, operator)
    return paths.differences(_evaluate(f, paths.vertices(q0, q1), vectorized))


def partial_difference_quotients(f: Callable, gradient: Callable, q0, q1,
                                 operator: PathOperator = PathOperator.SYMMETRIC, vectorized: bool = False,
                                 threshold: float = SMALL_STEP) -> np.ndarray:
    """Δ_r f / Δq_r, shape (n, *f_shape), well conditioned for small or zero Δq_r (see module doc).

    ``gradient(q)`` returns ∂f/∂q with the coordinate first, shape (n, *f_shape).
    """
    q0, q1 = np.asarray(q0, dtype=float), np.asarray(q1, dtype=float)
    paths = DifferencePaths(q0.size, operator)
    vertices = paths.vertices(q0, q1)
    differences = paths.differences(_evaluate(f, vertices, vectorized))
    return quotients(paths, vertices, q1 - q0, differences,
                     lambda points: _evaluate(gradient, points, vectorized), threshold)


def quotients(paths: DifferencePaths, vertices: np.ndarray, dq: np.ndarray, differences: np.ndarray,
              gradient: Callable[[np.ndarray], np.ndarray], threshold: float = SMALL_STEP) -> np.ndarray:
    """Δ_r f / Δq_r from the differences, using ``gradient`` (batched, (..., n) -> (..., n, *s)) on small edges."""
    small = np.abs(dq) <= threshold
    shape = (-1,) + (1,) * (differences.ndim - 1)
    out = differences / np.where(small, 1.0, dq).reshape(shape)
    small_coordinates = np.flatnonzero(small)
    if small_coordinates.size:
        points = np.stack([paths.edge_points(vertices, dq, r) for r in small_coordinates])   # (S, P, G, n)
        derivative = gradient(points)                                                         # (S, P, G, n, *s)
        for index, r in enumerate(small_coordinates):
            out[r] = paths.edge_average(derivative[index][:, :, r])
    return out
