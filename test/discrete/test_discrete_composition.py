"""discrete4 and discrete6: the discrete model's step is symmetric, so its compositions (Suzuki's five stages,
Kahan & Li's nine) converge at orders 4 and 6 and keep T + V to round-off, and dissipation is accounted over
sub-steps."""

import json

import numpy as np
import pytest
import yaml

from discrete_robot.cli import main
from discrete_robot.composition import compose
from discrete_robot.discrete import compiled, newton
from discrete_robot.discrete.dissipation import Dissipation
from discrete_robot.discrete.dynamic_model import DiscreteDynamicModel
from discrete_robot.discrete.integrators import COMPOSITION_TOL, make_stepper
from discrete_robot.discrete.partial_difference import DifferencePaths, PathOperator
from discrete_robot.discrete.simulation import FixedStepSimulation
from discrete_robot.errors import ConvergenceError, InputError
from discrete_robot.model.description import load_model, package_config_path
from discrete_robot.model.dynamics import RigidBodySystem
from discrete_robot.model.example_robots import example_robot_path
from discrete_robot.model.lagrangian import kinetic_energy

ARM = package_config_path("arm_6dof.yaml")


@pytest.fixture(scope="module", params=["arm_6dof", "ur5"])
def robot(request):
    return load_model(ARM if request.param == "arm_6dof" else example_robot_path("ur5"))


def test_the_symmetric_step_is_its_own_adjoint_and_neuman_tourassis_is_not(robot):
    """Φ₋ₕ ∘ Φₕ = id: a step by −h from a step's result returns to its start, to round-off (the two difference paths
    swap when k and k+1 do); the single Neuman–Tourassis path comes back O(h²) away in q̇ (first order)."""
    system = RigidBodySystem(robot)
    rng = np.random.default_rng(7)
    q0, qd0, tau = rng.uniform(-1.0, 1.0, robot.dof), rng.uniform(-2.0, 2.0, robot.dof), rng.uniform(-1, 1, robot.dof)
    for h in (1e-2, 1e-3):
        back = {}
        for operator in PathOperator:
            model = DiscreteDynamicModel(system, operator)
            forward = model.step(q0, qd0, tau, h)
            back[operator] = model.continue_step(forward.q, forward.qd, tau, -h, qd0)
        symmetric, single = back[PathOperator.SYMMETRIC], back[PathOperator.NEUMAN_TOURASSIS]
        assert np.abs(symmetric.q - q0).max() < 1e-14
        assert np.abs(symmetric.qd - qd0).max() < 1e-11      # round-off of Δ[a q̇]/h, ε |a q̇| / h
        assert np.abs(single.qd - qd0).max() > 10.0 * h ** 2


def _final_state(argv, capsys, tmp_path) -> np.ndarray:
    assert main(["discrete", "simulate", "--model", str(ARM), "--no-limits", "--duration", "1.0", "--json",
                 "--output-dir", str(tmp_path), *argv]) == 0
    result = json.loads(capsys.readouterr().out)
    return np.concatenate([result["q"], result["qd"]])


def _ratio(finals) -> float:
    """‖x_h − x_{h/2}‖∞ / ‖x_{h/2} − x_{h/4}‖∞."""
    return np.abs(finals[0] - finals[1]).max() / np.abs(finals[1] - finals[2]).max()


def test_discrete4_converges_at_order_4_on_the_arm(capsys, tmp_path):
    """``discrete simulate`` of the 6-joint arm released from its initial pose, 1 s at h = 0.01, 0.005, 0.0025:
    the self-convergence ratio of the final states is 2⁴ = 16 (± 30 %); the plain discrete model's is 2² = 4."""
    finals = [_final_state(["--integrator", "discrete4", "--dt", str(h)], capsys, tmp_path)
              for h in (0.01, 0.005, 0.0025)]
    assert 16.0 * 0.7 < _ratio(finals) < 16.0 * 1.3
    finals = [_final_state(["--integrator", "discrete", "--dt", str(h)], capsys, tmp_path)
              for h in (0.01, 0.005, 0.0025)]
    assert 4.0 * 0.7 < _ratio(finals) < 4.0 * 1.3


def test_discrete6_converges_at_order_6_on_the_arm(capsys, tmp_path):
    """``discrete simulate`` of the 6-joint arm released from its initial pose, 1 s at h = 0.005, 0.0025, 0.00125:
    ratio 2⁶ = 64 (± 40 %). The wrist whips at 20 rad/s and the motion magnifies a 1e-12 rad change of q(0) to
    2e-7 at 1 s; the finer difference (2.4e-9) stands above the steps' round-off now that the kernel's edge
    differences have no cancellation (with divided differences both were round-off, 3.6e-7 and 6.0e-7: ratio
    0.61). Moving q(0) by 1e-14 to 1e-12 rad left the ratio at 56.6–56.7."""
    finals = [_final_state(["--integrator", "discrete6", "--dt", str(h)], capsys, tmp_path)
              for h in (0.005, 0.0025, 0.00125)]
    assert 64.0 * 0.6 < _ratio(finals) < 64.0 * 1.4


def test_discrete4_keeps_the_energy_of_the_arm_and_the_ur5_to_round_off(robot):
    """The issue's case: T + V within 1e-12 of |E₀| over 10⁵ steps of 1 ms (5·10⁵ sub-steps, a fifth of them
    backwards) from bench_work_precision's start, no damping or limits. Newton runs each sub-step to its round-off
    floor: stopped at the second-order step's tolerance, the arm's T + V fell steadily, by 2.4e-12 of |E₀|."""
    system = RigidBodySystem(robot)
    simulation = FixedStepSimulation(system, "discrete4", 1e-3, robot.initial_positions + 0.3,
                                     np.linspace(0.5, -0.5, robot.dof))
    start, energies, kinetic = simulation.energy(), [], []
    for _ in range(100):
        simulation.step(1000, np.zeros(robot.dof))
        energies.append(simulation.energy())
        kinetic.append(kinetic_energy(system, simulation.q, simulation.qd))
    assert np.ptp(kinetic) > 0.1 * abs(start)     # the motion exchanges T and V
    assert np.abs(np.array(energies) - start).max() < 1e-12 * abs(start)


def test_damping_and_friction_take_exactly_the_energy_accounted_over_the_sub_steps():
    """With the arm's joint damping and friction, T + V falls by exactly the work they do, summed over every
    sub-step (backward ones give energy back): E + W = E₀ to round-off, where W over whole steps would be off."""
    model = load_model(ARM)
    system = RigidBodySystem(model)
    dissipation = Dissipation(np.full(6, 0.5), np.full(6, 0.2))
    for kind in ("discrete4", "discrete6"):
        simulation = FixedStepSimulation(system, kind, 5e-3, model.initial_positions, np.zeros(6),
                                         dissipation=dissipation)
        start = simulation.energy()
        whole_steps = 0.0
        for _ in range(200):
            before = simulation.q
            simulation.step(1, np.zeros(6))
            mean = (simulation.q - before) / 5e-3
            whole_steps -= 5e-3 * float(dissipation.forces(mean) @ mean)
        assert simulation.dissipated_energy > 1.0
        assert abs(simulation.energy() + simulation.dissipated_energy - start) < 1e-12 * abs(start)
        assert abs(simulation.energy() + whole_steps - start) > 1e-6 * abs(start)


def test_simulate_balances_the_energy_of_a_damped_arm_with_stops_over_sub_steps(capsys, tmp_path):
    """``discrete simulate`` with joint damping, friction and position stops (as the node runs): E + W + S = E₀ to
    round-off with discrete4, W being the work summed over the sub-steps."""
    description = yaml.safe_load(package_config_path("planar_2link.yaml").read_text())
    for link in description["links"]:
        link["joint"]["dynamics"] = {"damping": [0.3], "friction": [0.2]}
    model_file = tmp_path / "damped.yaml"
    model_file.write_text(yaml.safe_dump(description))
    assert main(["discrete", "simulate", "--model", str(model_file), "--integrator", "discrete4", "--dt", "0.01",
                 "--duration", "3", "--qd0", "6", "-4", "--json", "--output-dir", str(tmp_path)]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["energy_dissipated_J"] > 1.0 and result["energy_removed_by_joint_stops_J"] > 0.1
    assert result["max_relative_energy_drift"] < 1e-12


def test_a_composed_step_refuses_a_negative_or_zero_step_as_the_plain_one_does():
    """The sub-steps go back in time inside a step; the step itself must still go forward."""
    system = RigidBodySystem(load_model(package_config_path("planar_2link.yaml")))
    for kind in ("discrete", "discrete4", "discrete6"):
        for h in (-0.01, 0.0):
            with pytest.raises(InputError, match="time step"):
                make_stepper(kind, system).step(np.zeros(2), np.zeros(2), np.zeros(2), h)


@pytest.mark.parametrize("friction", [0.0, 0.05])
def test_one_newton_update_leaves_no_more_than_its_quadratic_bound(robot, friction):
    """Newton's first update is the step's result when κ|δ|² (newton.quadratic_bound) is far below round-off; that
    rests on the bound: from starts δ away from the solved q̇(k+1) (1e-3 – 1e-5 of the velocity scale, where the
    remainder stands above round-off), one update leaves at most κ|δ|², and not vacuously (at least 1e-3 of it
    somewhere). With Coulomb friction the tanh's curvature, taken at its largest, joins the bound (at least 1e-4
    of it then), and a random state of the arm is sometimes one Newton cannot solve at all: a light wrist at
    stick–slip, passed over."""
    n = robot.dof
    arm, paths = RigidBodySystem(robot).compiled, DifferencePaths(n)
    dissipation = Dissipation(np.full(n, 0.1), np.full(n, friction))
    solve = DiscreteDynamicModel(RigidBodySystem(robot), tol=COMPOSITION_TOL, dissipation=dissipation,
                                 turned_differences=True)
    once = compiled.compile_model(arm, paths, damping=dissipation.damping, friction=dissipation.friction,
                                  tol=COMPOSITION_TOL, max_iter=1, turned_differences=True)
    single = compiled.create_data(once)
    rng = np.random.default_rng(11)
    ratios, unsolved = [], 0
    while len(ratios) < 54:
        q0, v0, tau = rng.uniform(-1, 1, n), rng.uniform(-2, 2, n), rng.uniform(-1, 1, n)
        for h in (1e-2, 1e-3, -1e-3):
            try:
                exact = solve.continue_step(q0, v0, tau, h).qd
            except ConvergenceError:    # a wrist at stick–slip, whose step Newton cannot solve from any start
                unsolved += 1
                continue
            scale = np.abs(exact).max()
            for size in (1e-3, 1e-4, 1e-5):
                start = exact + size * scale * rng.uniform(-1, 1, n)
                compiled.step(once, single, q0, v0, tau, h, start)
                kappa = newton.quadratic_bound(single.inverse, single.Da, once.friction, single.curvature)
                bound = kappa * np.abs(start - exact).max() ** 2
                left = np.abs(single.velocity - exact).max()
                assert left <= bound + 1e-14 * scale
                ratios.append(left / bound)
    assert max(ratios) > (1e-4 if friction else 1e-3)      # the friction term takes tanh'' at its largest
    assert unsolved <= (len(ratios) // 3 if friction else 0)


def test_predicted_starts_take_one_newton_update_and_change_the_steps_by_round_off_only():
    """The compiled run starts each sub-step from the stage-wise extrapolation over the last whole steps, and at
    h = 1 ms on the arm most sub-steps end after one update. Its steps are those of the same composition whose
    sub-steps start from an explicit Euler prediction and run Newton to the floor (composition.compose over
    DiscreteDynamicModel.continue_step), to round-off over 0.1 s (the motion magnifies each step's round-off some
    thousand times by 0.25 s)."""
    model = load_model(ARM)
    system = RigidBodySystem(model)
    q0, v0, tau, h = model.initial_positions + 0.3, np.linspace(0.5, -0.5, 6), np.zeros(6), 1e-3
    simulation = FixedStepSimulation(system, "discrete4", h, q0, v0)
    simulation.step(100, tau)
    plain = DiscreteDynamicModel(system, tol=COMPOSITION_TOL, turned_differences=True)
    iterations = []

    def sub_step(state, dt):
        result = plain.continue_step(*state, tau, dt)
        iterations.append(result.iterations)
        return result.q, result.qd

    step = compose(sub_step, 4)
    state = (q0, v0)
    for _ in range(100):
        state = step(state, h)
    assert np.abs(simulation.q - state[0]).max() < 1e-12
    assert np.abs(simulation.qd - state[1]).max() < 1e-11
    assert simulation.newton_iterations / 500 < 1.3 < np.mean(iterations)
