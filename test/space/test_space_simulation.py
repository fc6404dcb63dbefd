"""Simulation: conservation laws, momentum = integral of the loads, agreement with an independent integrator."""

import subprocess
import sys
import textwrap
from dataclasses import replace

import numpy as np
import pytest
from scipy.integrate import simpson, solve_ivp

from discrete_robot.errors import ConvergenceError, InputError
from discrete_robot.model.description import load_model, model_from_dict, package_config_path
from discrete_robot.space import newton_euler
from discrete_robot.space.generated import multi_arm_model_data
from discrete_robot.space.kinematics import body_poses
from discrete_robot.space.loads import ExternalLoad, LoadFrame, paper_loads, resolve_loads
from discrete_robot.space.recursive import momentum_report
from discrete_robot.space.robot import JointKind, SpaceRobot
from discrete_robot.space.simulation import Simulator, simulate, time_grid
from discrete_robot.space.state import random_state, rest_state


@pytest.fixture(scope="module")
def dual_arm() -> SpaceRobot:
    return SpaceRobot.from_model(load_model(package_config_path("space_robot_dual_arm.yaml")))


def moving_state(robot: SpaceRobot, seed: int = 0, joint_speed: float = 0.5):
    """Joints turning, base spinning, base velocity chosen so the total linear momentum is zero."""
    rng = np.random.default_rng(seed)
    state = replace(rest_state(robot), joint_rates=joint_speed * rng.normal(size=robot.dof),
                    base_angular_velocity=0.05 * rng.normal(size=3))
    drift = momentum_report(robot, state).linear / robot.total_mass
    return replace(state, base_velocity=state.base_velocity - state.base_rotation().T @ drift)


def quaternion_norm_errors(samples) -> float:
    norms = [np.linalg.norm(s.body_orientations, axis=1) for s in samples]
    norms += [np.linalg.norm(np.vstack([s.state.base_orientation, *s.state.joint_orientations]), axis=1)
              for s in samples]
    return float(np.max(np.abs(np.concatenate(norms) - 1.0)))


def test_free_motion_conserves_momentum_and_keeps_the_centre_of_mass_still(dual_arm):
    """No loads, joints moving: over 10 s momenta constant and the CoM still to ≤ 1e-9; energy to O(h⁴)."""
    state = moving_state(dual_arm)
    start = momentum_report(dual_arm, state)
    assert np.linalg.norm(start.angular) > 1.0 and start.kinetic_energy > 1.0
    samples = simulate(dual_arm, state, duration=10.0, dt=0.01, times=np.linspace(0.0, 10.0, 11))
    linear = np.array([s.momentum.linear for s in samples])
    angular = np.array([s.momentum.angular for s in samples])
    center = np.array([s.momentum.center_of_mass for s in samples])
    energy = np.array([s.momentum.kinetic_energy for s in samples])
    momentum_scale = np.sqrt(dual_arm.total_mass * 2.0 * start.kinetic_energy)  # |P| of the bodies' motion
    assert np.max(np.abs(linear)) <= 1e-9 * momentum_scale
    assert np.max(np.abs(angular - start.angular)) <= 1e-9 * np.linalg.norm(start.angular)
    assert np.max(np.abs(center - start.center_of_mass)) <= 1e-9
    assert np.max(np.abs(energy - start.kinetic_energy)) <= 1e-8 * start.kinetic_energy
    assert quaternion_norm_errors(samples) <= 1e-12
    # the robot really moved: the base turned and shifted in reaction
    assert np.linalg.norm(samples[-1].body_positions[0] - samples[0].body_positions[0]) > 1e-3


def test_constant_world_forces_give_linear_momentum_f_t_and_a_parabolic_centre_of_mass(dual_arm):
    forces = [ExternalLoad("arm1_link2", force=np.array([1.0, -2.0, 0.5]), point=np.array([0.0, 0.0, 1.0]),
                           frame=LoadFrame.WORLD),
              ExternalLoad("base", force=np.array([-0.3, 0.4, 1.0]), point=np.array([0.2, 0.5, -0.5]),
                           frame=LoadFrame.WORLD)]
    total = forces[0].force + forces[1].force
    state = moving_state(dual_arm, seed=1)
    start = momentum_report(dual_arm, state)
    times = np.array([0.0, 1.3, 2.0])
    samples = simulate(dual_arm, state, duration=2.0, dt=0.01, times=times, loads=forces)
    for t, sample in zip(times, samples, strict=True):
        np.testing.assert_allclose(sample.momentum.linear, total * t, rtol=0, atol=1e-12 * np.abs(total).max() * 2)
        expected_center = start.center_of_mass + total * t ** 2 / (2.0 * dual_arm.total_mass)
        np.testing.assert_allclose(sample.momentum.center_of_mass, expected_center, rtol=0, atol=1e-12)


def test_pure_world_moments_give_angular_momentum_m_t(dual_arm):
    moments = [ExternalLoad("arm2_link1", moment=np.array([0.5, 1.0, -2.0]), frame=LoadFrame.WORLD),
               ExternalLoad("base", moment=np.array([0.0, -3.0, 1.0]), frame=LoadFrame.WORLD)]
    state = moving_state(dual_arm, seed=2)
    start = momentum_report(dual_arm, state)
    samples = simulate(dual_arm, state, duration=2.0, dt=0.01, times=[2.0], loads=moments)
    expected = start.angular + 2.0 * (moments[0].moment + moments[1].moment)
    np.testing.assert_allclose(samples[0].momentum.angular, expected, rtol=0, atol=1e-12 * np.abs(expected).max())
    np.testing.assert_allclose(samples[0].momentum.center_of_mass, start.center_of_mass, atol=1e-12)


def test_paper_loads_change_momentum_by_the_integral_of_their_forces_and_moments(dual_arm):
    """Body-frame forces at the arm tips (the paper's scenario, from rest): P(t) = ∫ Σ F dt and
    L_c(t) = ∫ Σ (x − c) × F dt, the integrands evaluated from the reported body poses and
    integrated alongside by Simpson's rule."""
    loads = paper_loads(dual_arm)
    times = np.linspace(0.0, 10.0, 201)
    samples = simulate(dual_arm, rest_state(dual_arm), duration=10.0, dt=0.01, times=times, loads=loads)
    forces, moments = [], []
    for sample in samples:
        world = resolve_loads(dual_arm, body_poses(dual_arm, sample.state), loads)
        forces.append(world.total_force())
        moments.append(world.moment_about(sample.momentum.center_of_mass))
    linear = np.array([s.momentum.linear for s in samples])
    angular = np.array([s.momentum.angular for s in samples])
    np.testing.assert_allclose(linear[-1], simpson(np.array(forces), x=times, axis=0), rtol=0,
                               atol=1e-6 * np.abs(linear[-1]).max())
    np.testing.assert_allclose(angular[-1], simpson(np.array(moments), x=times, axis=0), rtol=0,
                               atol=1e-6 * np.abs(angular[-1]).max())
    assert np.abs(linear[-1]).max() > 1.0 and np.abs(angular[-1]).max() > 1.0
    assert quaternion_norm_errors(samples) <= 1e-12


def test_joint_torques_change_energy_by_their_work_but_not_momentum(dual_arm):
    # about the links' transverse axes only: a torque about a link's long axis (0.076 kg m²) would spin it
    # up to tens of rad/s, where a 0.01 s step no longer resolves the motion
    torques = np.tile([1.0, -0.5, 0.0], len(dual_arm.links))
    state = moving_state(dual_arm, seed=3, joint_speed=0.2)
    start = momentum_report(dual_arm, state)
    times = np.linspace(0.0, 2.0, 201)
    samples = simulate(dual_arm, state, duration=2.0, dt=0.01, times=times, joint_torques=torques)
    power = np.array([torques @ s.state.joint_rates for s in samples])
    energy = np.array([s.momentum.kinetic_energy for s in samples])
    work = simpson(power, x=times)
    assert abs(work) > 0.1
    assert energy[-1] - energy[0] == pytest.approx(work, rel=1e-6)
    np.testing.assert_allclose(samples[-1].momentum.angular, start.angular, atol=1e-9 * np.linalg.norm(start.angular))
    np.testing.assert_allclose(samples[-1].momentum.center_of_mass, start.center_of_mass, atol=1e-9)


def _cartesian_rhs(robot: SpaceRobot, template, loads):
    """The unreduced equations in (base CoM, base quaternion, joint quaternions, angles, u), Newton–Euler
    accelerations; quaternions normalised inside (the usual projection for a general-purpose integrator)."""
    n_spherical, n_angles = robot.spherical_count, robot.angle_count

    def unpack(y):
        joint_q = y[7:7 + 4 * n_spherical].reshape(-1, 4)
        angles = y[7 + 4 * n_spherical:7 + 4 * n_spherical + n_angles]
        u = y[7 + 4 * n_spherical + n_angles:]
        return replace(template, base_position=y[:3], base_orientation=y[3:7] / np.linalg.norm(y[3:7]),
                       joint_orientations=joint_q / np.linalg.norm(joint_q, axis=1, keepdims=True),
                       joint_angles=angles, base_velocity=u[:3], base_angular_velocity=u[3:6], joint_rates=u[6:])

    def rate(q, omega):
        w, x, y, z = q
        return 0.5 * np.array([-x * omega[0] - y * omega[1] - z * omega[2], w * omega[0] + y * omega[2] - z * omega[1],
                               w * omega[1] + z * omega[0] - x * omega[2], w * omega[2] + x * omega[1] - y * omega[0]])

    def rhs(_t, y):
        state = unpack(y)
        joint_q_rates = [rate(state.joint_orientations[link.quaternion_index], state.joint_rates[link.rates])
                         for link in robot.links if link.kind is JointKind.SPHERICAL]
        angle_rates = [state.joint_rates[link.rates] for link in robot.links if link.kind is not JointKind.SPHERICAL]
        return np.concatenate([state.base_rotation() @ state.base_velocity,
                               rate(state.base_orientation, state.base_angular_velocity), *joint_q_rates,
                               *angle_rates, newton_euler.forward_dynamics(robot, state, loads)])

    def pack(state):
        return np.concatenate([state.base_position, state.base_orientation, state.joint_orientations.ravel(),
                               state.joint_angles, state.quasi_velocities])

    return rhs, pack, unpack


def test_lie_group_integrator_matches_an_independent_tight_tolerance_integration():
    """RKMK4 in momentum coordinates (recursive dynamics) vs scipy DOP853 at rtol 1e-12 on the plain
    Cartesian equations (Newton–Euler dynamics), mixed 1/2/3-DOF joints, loads in both frames."""
    robot = SpaceRobot.from_model(model_from_dict(multi_arm_model_data(2, 3, mixed_joints=True, seed=3)))
    state = random_state(robot, np.random.default_rng(4), speed=0.5)
    loads = [ExternalLoad("arm1_link3", force=np.array([3.0, -1.0, 2.0]), point=np.array([0.0, 0.1, 0.6])),
             ExternalLoad("arm2_link2", force=np.array([-1.0, 2.0, 0.5]), moment=np.array([0.3, 0.0, -0.2]),
                          frame=LoadFrame.WORLD)]
    duration = 1.0
    ours = simulate(robot, state, duration=duration, dt=0.005, times=[duration], loads=loads)[-1]
    rhs, pack, unpack = _cartesian_rhs(robot, state, loads)
    reference = solve_ivp(rhs, (0.0, duration), pack(state), method="DOP853", rtol=1e-12, atol=1e-12)
    theirs = unpack(reference.y[:, -1])
    np.testing.assert_allclose(ours.body_positions, body_poses(robot, theirs).com_positions, atol=1e-8)
    np.testing.assert_allclose(ours.state.quasi_velocities, theirs.quasi_velocities, atol=1e-7)
    rotation_error = np.abs(body_poses(robot, ours.state).rotations - body_poses(robot, theirs).rotations).max()
    assert rotation_error <= 1e-8


def test_output_times_are_hit_exactly_and_bad_times_are_rejected(dual_arm):
    nodes, requested = time_grid(1.0, 0.3, [0.45, 1.0, 0.0])
    assert set(requested) <= set(nodes) and np.max(np.diff(nodes)) <= 0.3 + 1e-15
    samples = simulate(dual_arm, rest_state(dual_arm), 0.1, 0.03, [0.05, 0.1])
    assert [s.time for s in samples] == [0.05, 0.1]
    for bad in ([-1.0], [2.0], [np.nan], []):
        with pytest.raises(InputError, match="time"):
            time_grid(1.0, 0.1, bad)
    with pytest.raises(InputError, match="dt"):
        time_grid(1.0, 0.0, [0.5])
    with pytest.raises(InputError, match="time step"):
        Simulator(dual_arm, rest_state(dual_arm)).step(np.nan)


def test_a_diverging_step_is_reported_and_leaves_the_state_unchanged(dual_arm):
    simulator = Simulator(dual_arm, rest_state(dual_arm), joint_torques=np.full(dual_arm.dof, 1e200))
    with pytest.raises(ConvergenceError, match="too large for this time step"):
        simulator.step(0.01)
    assert simulator.time == 0.0
    np.testing.assert_array_equal(simulator.state.joint_rates, 0.0)


@pytest.mark.parametrize(("speed", "dt"), [(0.5, 0.01), (60.0, 0.02)])
def test_advance_is_step_repeated_to_the_bit_also_through_sub_steps(speed, dt):
    """advance(dt, k) runs whole steps in one compiled call and falls back to step()'s sub-steps where a whole step
    fails (at 60 rad/s a body turns more than MAX_STEP_ROTATION in 0.02 s): the same state and time as k calls of
    step(dt)."""
    robot = SpaceRobot.from_model(model_from_dict(multi_arm_model_data(2, 3, mixed_joints=True, seed=3)))
    state = random_state(robot, np.random.default_rng(4), speed=speed)
    stepped, advanced = Simulator(robot, state), Simulator(robot, state)
    for _ in range(10):
        stepped.step(dt)
    advanced.advance(dt, 10)
    assert advanced.time == stepped.time
    for ours, theirs in zip(_state_arrays(advanced.state), _state_arrays(stepped.state), strict=True):
        np.testing.assert_array_equal(ours, theirs)
    # the fast case did go through sub-steps (the last sub-step that worked is below dt), the slow one did not
    assert (stepped._substep < dt) == (speed > 1.0)


def _state_arrays(state):
    return (state.base_position, state.base_orientation, state.base_velocity, state.base_angular_velocity,
            state.joint_angles, state.joint_orientations, state.joint_rates)


def test_advance_allocates_nothing_per_step():
    """The RKMK4 steps are compiled without numba's runtime (discrete_robot.jit.njit's allocates=False), so numba
    refuses any allocation in them; counted here, in a fresh interpreter with numba's allocation statistics on:
    advance() allocates as much for 1000 steps as for 10 (what crosses from Python per call), loads in the body
    and in the world frame included."""
    script = textwrap.dedent("""
        import os
        os.environ["NUMBA_NRT_STATS"] = "1"
        import numpy as np
        from numba.core.runtime import rtsys
        from discrete_robot.model.description import load_model, package_config_path
        from discrete_robot.space.loads import ExternalLoad, LoadFrame
        from discrete_robot.space.robot import SpaceRobot
        from discrete_robot.space.simulation import Simulator
        from discrete_robot.space.state import random_state

        robot = SpaceRobot.from_model(load_model(package_config_path("space_robot_dual_arm.yaml")))
        loads = [ExternalLoad("arm1_link2", force=np.array([1.0, -2.0, 0.5]), point=np.array([0.0, 0.0, 0.1]),
                              frame=LoadFrame.BODY),
                 ExternalLoad("base", moment=np.array([0.0, -3.0, 1.0]), frame=LoadFrame.WORLD)]
        simulator = Simulator(robot, random_state(robot, np.random.default_rng(0), speed=0.5), loads=loads)
        simulator.advance(1e-3, 2)
        counts = []
        for steps in (10, 1000):
            before = rtsys.get_allocation_stats().alloc
            simulator.advance(1e-3, steps)
            counts.append(rtsys.get_allocation_stats().alloc - before)
        print(*counts)
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    few, many = map(int, done.stdout.split())
    assert few == many, f"advance allocated {few} times for 10 steps and {many} for 1000"
