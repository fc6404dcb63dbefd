"""FixedStepSimulation: forces held over the steps take, in compiled runs, the very steps a torque function takes
one by one."""

import numpy as np
import pytest

from discrete_robot.discrete.dynamic_model import DiscreteDynamicModel
from discrete_robot.discrete.simulation import FixedStepSimulation
from discrete_robot.model.description import load_model, package_config_path
from discrete_robot.model.dynamics import RigidBodySystem


def _fallbacks(monkeypatch) -> list:
    """Counts the steps Newton's first start guess did not solve (DiscreteDynamicModel._solve tries the others)."""
    calls, solve = [], DiscreteDynamicModel._solve

    def counted(self, *args, **kwargs):
        calls.append(1)
        return solve(self, *args, **kwargs)

    monkeypatch.setattr(DiscreteDynamicModel, "_solve", counted)
    return calls


@pytest.mark.parametrize(("filename", "limit", "time_step", "speed", "integrator"), [
    ("planar_2link.yaml", None, 1e-3, 8.0, "discrete"),     # both joints turn past 2π: whole turns carried
    ("planar_2link.yaml", 1.0, 1e-3, 8.0, "discrete"),      # joint stops at ±1 rad
    ("arm_6dof.yaml", None, 1e-3, 8.0, "discrete"),         # the wrist spins up past 2π
    ("arm_6dof.yaml", None, 0.05, 1.0, "discrete"),         # steps whose first start guess Newton does not solve
    # the compositions: sub-steps (some backwards) inside the compiled run, stops between whole steps
    ("planar_2link.yaml", 1.0, 1e-3, 8.0, "discrete4"),
    ("arm_6dof.yaml", None, 1e-3, 8.0, "discrete4"),
    ("arm_6dof.yaml", None, 0.1, 1.0, "discrete4"),
    ("arm_6dof.yaml", None, 1e-3, 8.0, "discrete6"),
])
def test_held_forces_take_the_same_steps_as_a_torque_function(monkeypatch, filename, limit, time_step, speed,
                                                               integrator):
    model = load_model(package_config_path(filename))
    n = model.dof
    limits = {} if limit is None else {"lower": np.full(n, -limit), "upper": np.full(n, limit)}
    tau = np.full(n, 0.5 if time_step < 0.01 else 0.0)
    fallbacks = _fallbacks(monkeypatch)
    runs = []
    for torques in (lambda t, q, qd: tau, tau):
        simulation = FixedStepSimulation(RigidBodySystem(model), integrator, time_step, model.initial_positions + 0.3,
                                         np.linspace(speed, -speed, n), **limits)
        for _ in range(10):
            simulation.step(100 if time_step < 0.01 else 20, torques)
        runs.append(simulation)
    one_by_one, held = runs
    # each scenario exercises what it names
    if limit is None:
        assert np.abs(one_by_one.q).max() > 2.0 * np.pi or len(fallbacks) > 2
    else:
        assert one_by_one.stop_energy > 0.0
    if time_step > 0.01:
        assert len(fallbacks) > 2       # beyond the first step of each run, which starts without a guess
    np.testing.assert_array_equal(held.q, one_by_one.q)
    np.testing.assert_array_equal(held.qd, one_by_one.qd)
    assert held.time == one_by_one.time
    assert held.newton_iterations == one_by_one.newton_iterations
    assert held.stop_energy == one_by_one.stop_energy
