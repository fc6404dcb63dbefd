"""Joint damping and Coulomb friction in the discrete model: the exact energy balance, against RK45 with the
continuous force law, and a Coulomb stop against its analytic deceleration."""

import copy

import numpy as np
import pytest

from discrete_robot.discrete.dissipation import FRICTION_VELOCITY, Dissipation
from discrete_robot.discrete.dynamic_model import DiscreteDynamicModel
from discrete_robot.discrete.integrators import RK45Stepper
from discrete_robot.errors import InputError, ModelError
from discrete_robot.model.description import load_model, model_from_dict, package_config_path
from discrete_robot.model.dynamics import RigidBodySystem
from discrete_robot.model.urdf import to_urdf

DAMPING = np.array([0.3, 0.15])
FRICTION = np.array([0.2, 0.05])


@pytest.fixture(scope="module")
def planar():
    return RigidBodySystem(load_model(package_config_path("planar_2link.yaml")))


def _rotor(damping=0.0, friction=0.0) -> dict:
    """One rod turning about the vertical z axis under gravity along -z: no potential acts on the joint."""
    return {"name": "rotor", "gravity": [0.0, 0.0, -9.81], "base": {"name": "base", "type": "fixed"},
            "links": [{"name": "rod", "parent": "base",
                       "joint": {"name": "spin", "type": "revolute", "axis": [0.0, 0.0, 1.0],
                                 "dynamics": {"damping": damping, "friction": friction}},
                       "mass": 1.0, "com": [0.5, 0.0, 0.0], "inertia": [0.0, 1.0 / 12.0, 1.0 / 12.0]}]}


def test_energy_falls_by_exactly_the_dissipated_work(planar):
    """Potts' identity ΔT + ΔV = Σ F Δq with F = −c v̄ − f tanh(v̄/v_s): T + V plus the work dissipated so far
    (recomputed here from the states) stays constant to round-off, over 2000 steps of a swinging double
    pendulum."""
    model = DiscreteDynamicModel(planar, dissipation=Dissipation(DAMPING, FRICTION))
    dt = 1e-3
    run = model.simulate([0.9, -0.4], [1.0, 2.5], dt, 2000)
    v = np.diff(run.q, axis=0) / dt
    work = dt * np.sum(DAMPING * v ** 2 + FRICTION * v * np.tanh(v / FRICTION_VELOCITY), axis=1)
    balance = run.energy[1:] + np.cumsum(work) - run.energy[0]
    scale = np.max(np.abs(run.energy))
    assert np.max(np.abs(balance)) <= 1e-12 * scale
    assert run.energy[-1] < run.energy[0] - 0.1  # and it does dissipate


def test_damped_motion_agrees_with_rk45_on_the_continuous_force_law(planar):
    """Second formulation: RK45 with the same force law evaluated continuously; the discrete model is second
    order, so at dt = 1 ms the two agree to about 1e-6 rad after 1 s."""
    dissipation = Dissipation(DAMPING, FRICTION)
    model = DiscreteDynamicModel(planar, dissipation=dissipation)
    reference = RK45Stepper(planar, dissipation=dissipation)
    dt, steps = 1e-3, 1000
    q, qd = np.array([0.9, -0.4]), np.array([1.0, 2.5])
    run = model.simulate(q, qd, dt, steps)
    for _ in range(steps // 10):
        q, qd = reference.step(q, qd, np.zeros(2), 10 * dt)
    assert np.max(np.abs(run.q[-1] - q)) < 1e-5
    assert np.max(np.abs(run.qd[-1] - qd)) < 1e-4


def test_coulomb_friction_decelerates_at_f_over_inertia():
    """A rod spinning about a vertical axis (no gravity torque) at ω0 with Coulomb friction f decelerates at
    f / I (I = m l²/3 about the joint) until it nearly stops: ω(t) = ω0 − f t / I while ω ≫ v_s."""
    inertia, friction, omega0 = 1.0 / 3.0, 0.1, 2.0
    model_description = model_from_dict(_rotor(friction=friction))
    model = DiscreteDynamicModel(RigidBodySystem(model_description),
                                 dissipation=Dissipation.from_model(model_description))
    dt, t_half = 1e-3, 0.5 * inertia * omega0 / friction
    run = model.simulate([0.0], [omega0], dt, int(round(t_half / dt)))
    assert run.qd[-1, 0] == pytest.approx(omega0 - friction * run.t[-1] / inertia, rel=1e-9)
    stopped = model.simulate(run.q[-1], run.qd[-1], dt, int(round(1.2 * t_half / dt)))
    assert abs(stopped.qd[-1, 0]) < 3.0 * FRICTION_VELOCITY


def test_model_files_carry_dynamics_into_the_urdf():
    model = model_from_dict(_rotor(damping=0.5, friction=0.25))
    assert model.damping.tolist() == [0.5] and model.friction.tolist() == [0.25]
    assert '<dynamics damping="0.5" friction="0.25"' in to_urdf(model)
    assert Dissipation.from_model(model_from_dict(_rotor())) is None
    assert "<dynamics" not in to_urdf(model_from_dict(_rotor()))


@pytest.mark.parametrize(("dynamics", "message"), [({"damping": -1.0}, "dynamics.damping must be >= 0"),
                                                   ({"friction": float("nan")}, "dynamics.friction"),
                                                   ({"stiffness": 1.0}, "stiffness")])
def test_bad_dynamics_are_refused_naming_the_field(dynamics, message):
    raw = copy.deepcopy(_rotor())
    raw["links"][0]["joint"]["dynamics"] = dynamics
    with pytest.raises(ModelError, match=message):
        model_from_dict(raw)


def test_dissipation_needs_one_value_per_joint(planar):
    with pytest.raises(InputError, match="dissipation"):
        DiscreteDynamicModel(planar, dissipation=Dissipation(np.zeros(3), np.zeros(3)))
