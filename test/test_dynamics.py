"""The dynamics front door (discrete_robot.dynamics) on each model kind, against a second formulation.

- a fixed-base arm (config/arm_6dof.yaml) and the Panda of example-robot-data (a mimic finger): its forward and
  inverse dynamics and mass matrix (the compiled composite-rigid-body terms) against the recursive Newton–Euler
  algorithm, which uses neither twists nor composite inertias; its step conserving T + V (discrete model);
- the dual-arm space robot (a floating base, spherical joints): the recursive Boltzmann–Hamel kernels behind the
  front door against the Newton–Euler formulation in generalised coordinates (space/newton_euler.py, only the poses
  shared), with the free-flyer configuration vector decoded here by hand (quaternions x, y, z, w); its RKMK4 step
  conserving momentum and, to O(h⁴), the kinetic energy.
"""

import numpy as np
import pytest

from discrete_robot import dynamics
from discrete_robot.discrete import IntegratorKind
from discrete_robot.errors import InputError
from discrete_robot.model.description import load_model, package_config_path
from discrete_robot.model.example_robots import example_robot_path
from discrete_robot.space import newton_euler
from discrete_robot.space.loads import ExternalLoad, LoadFrame
from discrete_robot.space.recursive import momentum_report
from discrete_robot.space.state import SpaceRobotState


@pytest.fixture(scope="module")
def arm():
    return dynamics.build_model(load_model(package_config_path("arm_6dof.yaml")))


@pytest.fixture(scope="module")
def panda():
    return dynamics.build_model(load_model(example_robot_path("panda")))


@pytest.fixture(scope="module")
def space():
    return dynamics.build_model(load_model(package_config_path("space_robot_dual_arm.yaml")))


def _random_motion(model, seed):
    rng = np.random.default_rng(seed)
    return rng.uniform(-1.5, 1.5, model.nq), rng.normal(size=model.nv), rng.normal(size=model.nv)


@pytest.mark.parametrize("name", ["arm", "panda"])
def test_fixed_base_equals_newton_euler(request, name):
    model = request.getfixturevalue(name)
    data = model.create_data()
    newton_euler = model.system.inverse_dynamics          # RNEA, on the expanded model for the mimic finger
    n = model.nv
    assert model.nq == n == model.robot_model.dof
    for seed in range(3):
        q, v, a = _random_motion(model, seed)
        tau = dynamics.inverse_dynamics(model, data, q, v, a)
        assert tau is data.tau
        expected = newton_euler(q, v, a)
        np.testing.assert_allclose(tau, expected, atol=1e-10 * np.abs(expected).max())
        M = dynamics.mass_matrix(model, data, q)
        assert M is data.M
        bias = newton_euler(q, np.zeros(n), np.zeros(n))
        columns = np.array([newton_euler(q, np.zeros(n), e) for e in np.eye(n)]).T - bias[:, None]
        np.testing.assert_allclose(M, columns, atol=1e-12 * np.abs(M).max())
        ddq = dynamics.forward_dynamics(model, data, q, v, expected)
        assert ddq is data.ddq
        np.testing.assert_allclose(ddq, a, atol=1e-8 * np.abs(a).max())


@pytest.mark.parametrize("name, steps", [("arm", 200), ("panda", 20)])
def test_fixed_base_step_balances_energy(request, name, steps):
    """T + V changes by exactly the work of the joints' damping and friction (the Panda's URDF has them; the arm
    has none, so its T + V is conserved): F_d(Δq/Δt)·Δq summed over the steps."""
    model = request.getfixturevalue(name)
    data = model.create_data()
    q, v, _ = _random_motion(model, 7)
    v *= 0.5
    assert (model.dissipation is None) == (name == "arm")

    def energy(q, v):
        return 0.5 * v @ dynamics.mass_matrix(model, data, q) @ v + model.system.potential(q)

    start, dissipated, dt = energy(q, v), 0.0, 1e-3
    zero = np.zeros(model.nv)
    for _ in range(steps):
        before = q.copy()
        q, v = dynamics.step(model, data, q, v, zero, dt)
        if model.dissipation is not None:
            dissipated += model.dissipation.forces((q - before) / dt) @ (q - before)
    assert q is data.q and v is data.v
    assert abs(energy(q, v) - start - dissipated) <= 1e-10 * (abs(start) + abs(model.system.potential(q)))


@pytest.mark.parametrize("integrator", [kind.value for kind in IntegratorKind])
def test_step_serves_every_integrator(integrator):
    """Each integrator of the fixed base from the same state agrees with RK45 at tight tolerances within its own
    truncation error over 50 steps of 1 ms (to 1e-4, relative, of the state)."""
    robot_model = load_model(package_config_path("arm_6dof.yaml"))
    model = dynamics.build_model(robot_model, integrator=integrator)
    reference = dynamics.build_model(robot_model, integrator="rk45")
    assert model.integrator == integrator
    results = []
    for each in (model, reference):
        data = each.create_data()
        q, v, tau = _random_motion(each, 3)
        for _ in range(50):
            q, v = dynamics.step(each, data, q, v, tau, 1e-3)
        results.append(np.concatenate([q, v]))
    np.testing.assert_allclose(results[0], results[1], rtol=1e-4, atol=1e-4)


def test_fixed_base_refusals(arm):
    data = arm.create_data()
    with pytest.raises(InputError, match="integrator"):
        dynamics.build_model(arm.robot_model, integrator="euler")
    with pytest.raises(InputError, match="v: expected 6"):
        dynamics.forward_dynamics(arm, data, np.zeros(6), np.zeros(5), np.zeros(6))
    with pytest.raises(InputError, match="loads"):
        dynamics.forward_dynamics(arm, data, np.zeros(6), np.zeros(6), np.zeros(6), loads=[ExternalLoad("link1")])


# ---------------------------------------------------------------------------------------------- floating base

def _decoded(model, q, v) -> SpaceRobotState:
    """The space robot's state of the free-flyer vectors, decoded body by body (not by the front door's slots)."""
    robot = model.robot
    angles, quaternions, at = [], [], 7
    for link in robot.links:
        if link.ndof == 3:
            x, y, z, w = q[at:at + 4]
            quaternions.append(np.array([w, x, y, z]) / np.linalg.norm(q[at:at + 4]))
            at += 4
        else:
            angles.extend(q[at:at + link.ndof])
            at += link.ndof
    assert at == model.nq
    x, y, z, w = q[3:7]
    return SpaceRobotState(base_position=q[:3], base_orientation=np.array([w, x, y, z]) / np.linalg.norm(q[3:7]),
                           base_velocity=v[:3], base_angular_velocity=v[3:6], joint_angles=np.array(angles),
                           joint_orientations=np.array(quaternions).reshape(-1, 4), joint_rates=v[6:])


def _floating_motion(model, seed):
    rng = np.random.default_rng(seed)
    q = rng.normal(size=model.nq)       # quaternions of any norm: the front door normalises them
    return q, 0.3 * rng.normal(size=model.nv), rng.normal(size=model.nv)


def _world_loads(model):
    arm_tip = model.robot.links[1]
    return [ExternalLoad(arm_tip.name, force=np.array([1.0, -2.0, 0.5]), point=arm_tip.tip, frame=LoadFrame.WORLD),
            ExternalLoad(model.robot.links[3].name, moment=np.array([0.2, 0.1, -0.3]))]


def test_floating_base_equals_newton_euler(space):
    data = space.create_data()
    robot = space.robot
    assert (space.nq, space.nv) == (7 + 4 * 4, 6 + 12)
    for seed in range(3):
        q, v, tau = _floating_motion(space, seed)
        state = _decoded(space, q, v)
        loads = _world_loads(space)
        base_wrench = ExternalLoad(robot.base_name, force=tau[:3], moment=tau[3:6])
        expected = newton_euler.forward_dynamics(robot, state, [*loads, base_wrench], tau[6:])
        ddq = dynamics.forward_dynamics(space, data, q, v, tau, loads)
        np.testing.assert_allclose(ddq, expected, atol=1e-9 * np.abs(expected).max())
        M = dynamics.mass_matrix(space, data, q)
        truth = newton_euler.equation_terms(robot, state).mass_matrix
        np.testing.assert_allclose(M, truth, atol=1e-10 * np.abs(truth).max())
        back = dynamics.inverse_dynamics(space, data, q, v, ddq, loads)
        np.testing.assert_allclose(back, tau, atol=1e-8 * np.abs(tau).max())


def test_floating_base_free_motion_needs_no_base_wrench(space):
    data = space.create_data()
    q, v, tau = _floating_motion(space, 4)
    tau[:6] = 0.0
    ddq = dynamics.forward_dynamics(space, data, q, v, tau, _world_loads(space)).copy()
    back = dynamics.inverse_dynamics(space, data, q, v, ddq, _world_loads(space))
    assert np.abs(back[:6]).max() <= 1e-9 * np.abs(tau).max()


def test_floating_base_step_conserves_momentum_and_energy(space):
    data = space.create_data()
    q, v, _ = _floating_motion(space, 5)
    robot = space.robot
    start = momentum_report(robot, _decoded(space, q, v))
    zero = np.zeros(space.nv)
    for _ in range(100):
        q, v = dynamics.step(space, data, q, v, zero, 1e-3)
    assert q is data.q and v is data.v
    end = momentum_report(robot, _decoded(space, q, v))
    scale = np.abs(start.angular).max() + np.abs(start.linear).max()
    np.testing.assert_allclose(end.linear, start.linear, atol=1e-12 * scale)
    np.testing.assert_allclose(end.angular, start.angular, atol=1e-11 * scale)
    assert abs(end.kinetic_energy - start.kinetic_energy) <= 1e-9 * start.kinetic_energy
    assert np.linalg.norm(q[3:7]) == pytest.approx(1.0, abs=1e-14)


def test_floating_base_step_from_a_new_state_starts_again(space):
    """A step from a state other than the last one reached starts there: the same result as a fresh data's."""
    data, fresh = space.create_data(), space.create_data()
    q, v, tau = _floating_motion(space, 6)
    dynamics.step(space, data, q, v, tau, 1e-3)
    other_q, other_v, _ = _floating_motion(space, 8)
    np.testing.assert_array_equal(dynamics.step(space, data, other_q, other_v, tau, 1e-3)[0],
                                  dynamics.step(space, fresh, other_q, other_v, tau, 1e-3)[0])


def test_floating_base_refusals(space):
    with pytest.raises(InputError, match="rkmk4"):
        dynamics.build_model(space.robot_model, integrator="discrete")
    data = space.create_data()
    q, v, tau = _floating_motion(space, 9)
    q[3:7] = 0.0
    with pytest.raises(InputError, match="q: a quaternion has"):
        dynamics.forward_dynamics(space, data, q, v, tau)
    with pytest.raises(InputError, match="q: expected 23"):
        dynamics.mass_matrix(space, data, q[:-1])


@pytest.mark.parametrize("name", ["arm", "panda"])
def test_a_run_of_held_steps_takes_the_steps_one_by_one_takes(request, name):
    """step(count=N), compiled held-torque runs after the first step, lands where N single steps land (the same
    Newton solves from the same extrapolated guesses; the Panda's mimic finger and joint dissipation included)."""
    model = request.getfixturevalue(name)
    q, v, _ = _random_motion(model, 3)
    tau = np.linspace(-0.5, 0.5, model.nv)
    run, single = model.create_data(), model.create_data()
    q_run, v_run = dynamics.step(model, run, q, v, tau, 1e-3, count=40)
    qs, vs = q, v
    for _ in range(40):
        qs, vs = dynamics.step(model, single, qs, vs, tau, 1e-3)
    np.testing.assert_allclose(q_run, qs, rtol=0.0, atol=1e-13)
    np.testing.assert_allclose(v_run, vs, rtol=0.0, atol=1e-12)
    with pytest.raises(InputError, match="count"):
        dynamics.step(model, run, q, v, tau, 1e-3, count=0)
