"""The mimic fold as dense matrix products (an independent formulation of the compiled kernel's index scatter,
:func:`discrete_robot.model.compiled._fold`), for the tests."""

import numpy as np

from discrete_robot.model.lagrangian import Terms


def project_terms(S: np.ndarray, terms: Terms) -> Terms:
    """The model's :class:`Terms` (a, V[, ∂a/∂q, ∂V/∂q]) from the expanded model's at q̄ = S q + c
    (:mod:`discrete_robot.model.mimic`)."""
    a = S.T @ terms.M @ S
    if terms.dM is None:
        return Terms(a, terms.potential_energy)
    da = np.einsum("ka,...kbc->...abc", S, S.T @ terms.dM @ S)
    return Terms(a, terms.potential_energy, da, terms.g @ S)
