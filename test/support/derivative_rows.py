"""The check that the compiled rigid-body kernel writes the derivative rows asked for and no other, shared by the
tree test (test_model_compiled) and the mimic test (test_model_compiled_mimic)."""

import numpy as np

from discrete_robot.model import compiled as arm_compiled


def check_rows_asked_for(model, q, rng):
    """Data.derivative_rows cleared at random: the rows written equal the full evaluation's bit for bit, the others
    are left as they were (NaN here), and M is written whole. Returns the full evaluation's Data."""
    batch, n = q.shape
    full = arm_compiled.create_data(model, batch, derivatives=True)
    arm_compiled.rigid_body_terms(model, full, q, True)
    some = arm_compiled.create_data(model, batch, derivatives=True)
    some.dM[...] = np.nan
    some.g[...] = np.nan
    wanted = rng.random((batch, n)) < 0.5
    some.derivative_rows[...] = wanted
    arm_compiled.rigid_body_terms(model, some, q, True)
    np.testing.assert_array_equal(some.dM[wanted], full.dM[wanted])
    np.testing.assert_array_equal(some.g[wanted], full.g[wanted])
    assert np.isnan(some.dM[~wanted]).all() and np.isnan(some.g[~wanted]).all()
    np.testing.assert_array_equal(some.M, full.M)
    return full


def check_lagrangian_gradient(model, q, rng):
    """Data.lagrangian_gradient, ∂/∂q [V − ½ uᵀ a(q) w] for random rates u and w (the momentum recursion), equals
    ∂V/∂q − ½ uᵀ (∂a/∂q) w from the kernel's own ∂a/∂q (Park's bracket formula, which the callers check against
    central differences), and Data.gradient_rows cleared at random leaves those rows as they were (NaN here) and
    the others bit for bit the full evaluation's."""
    batch, n = q.shape
    full = arm_compiled.create_data(model, batch, derivatives=True)
    full.rates[...] = rng.normal(size=(2, n))
    arm_compiled.rigid_body_terms(model, full, q, True, -1, True)
    expected = full.g - 0.5 * np.einsum("bkij,i,j->bk", full.dM, full.rates[0], full.rates[1])
    np.testing.assert_allclose(full.lagrangian_gradient, expected, rtol=0.0,
                               atol=1e-13 * max(1.0, np.abs(expected).max()))
    some = arm_compiled.create_data(model, batch, derivatives=False)
    some.rates[...] = full.rates
    some.lagrangian_gradient[...] = np.nan
    wanted = rng.random((batch, n)) < 0.5
    wanted[0] = False                   # a configuration with no row asked for
    some.gradient_rows[...] = wanted
    arm_compiled.rigid_body_terms(model, some, q, False, -1, True)
    np.testing.assert_array_equal(some.lagrangian_gradient[wanted], full.lagrangian_gradient[wanted])
    assert np.isnan(some.lagrangian_gradient[~wanted]).all()
    np.testing.assert_array_equal(some.M, full.M)
