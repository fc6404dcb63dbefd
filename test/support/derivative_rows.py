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
