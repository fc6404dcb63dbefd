"""``python -m discrete_robot discrete experiment <name>``: the article's numerical examples.

Each experiment runs the article's variational integrator with the article's step and length, times it
(CPU time, best of three), then runs scipy's RK45 with the tolerance that makes it take about as long
(:func:`~discrete_robot.variational.comparison.run_rk45_for_cpu_time`), and once more at MATLAB ode45's
default tolerances (rtol 1e-3, atol 1e-6), which the article's RK45 figures are consistent with. It reports
what the article reports — the mean variation of the energy (mean over steps of |E_k − E_0|), the unit-length or
orthogonality error — plus the largest error against an exact or tight-tolerance reference solution.
A PNG plot goes to ``--output-dir``. The article's own figures are in ``ARTICLE_FIGURES`` and in
docs/variational_experiments.md.
"""

import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy.integrate import solve_ivp

from discrete_robot.composition import compose
from discrete_robot.geometry2d import rotation2d
from discrete_robot.plotting import new_figure, save_figure
from discrete_robot.validation import positive_step
from discrete_robot.variational import (
    ALL,
    Experiment,
    cart_pendulum,
    dumbbell,
    mass_spring,
    planar_pendulum,
    spherical_pendulum,
)
from discrete_robot.variational.comparison import (
    CpuMatchedRun,
    cpu_timed,
    mean_variation,
    orthogonality_errors,
    run_rk45_for_cpu_time,
)

LOGGER = logging.getLogger(__name__)


ARTICLE_FIGURES = {
    Experiment.MASS_SPRING: {"time_step": 0.035, "duration": 200.0, "vi_energy_mean_variation": 2.7327e-13},
    Experiment.PLANAR_PENDULUM: {"time_step": 0.03, "duration": 1000.0, "vi_energy_mean_variation": 1.0835e-2},
    Experiment.SPHERICAL_PENDULUM: {"time_step": 0.05, "duration": 200.0, "initial_energy_per_ml2": -0.44,
                                    "vi_energy_mean_variation": 1.5460e-4, "vi_unit_length_error_mean": 3.2476e-15,
                                    "rk45_unit_length_error_mean": 1.0164e-2},
    Experiment.DUMBBELL: {"vi_energy_mean_variation": 2.5983e-4, "vi_orthogonality_error_mean": 1.8553e-13,
                          "rk45_rotation_matrix_orthogonality_error_mean": 0.0287,
                          "rk45_quaternion_orthogonality_error_mean": 0.0753},
    Experiment.CART_PENDULUM: {"time_step": 0.05, "pendulum_mass": 0.14, "cart_mass": 0.44, "length": 0.215,
                               "kappa_over_critical": 2.0,
                               "behaviour": "φ stabilised with sustained oscillations; s drifts and oscillates"},
}

DUMBBELL_TIME_STEP = 0.5
"""Normalised time units: the seed text gives no step for the dumbbell. 100 steps per orbit, 31 per turn of
the body; it puts the LGVI's mean energy variation (3e-4 of |E|) at the article's order of magnitude."""
DUMBBELL_ORBITS = 10
CART_PENDULUM_DURATION = 20.0
CART_PENDULUM_DISSIPATION = 1.0
"""D (1/s) of the dissipative variant; gives the linearised φ oscillation a damping ratio of about 0.15."""

REFERENCE_TOLERANCE = 1e-12
DEFAULT_TOLERANCES = (1e-3, 1e-6)
"""(rtol, atol) of MATLAB's ode45 when none are given; reported next to the equal-CPU-time run."""


def _steps(duration: float, h: float) -> int:
    return int(round(duration / h))


@dataclass(frozen=True)
class Rk45Baselines:
    """One attitude/state form of the RK45 baseline: the equal-CPU-time run and the default-tolerance run."""

    matched: CpuMatchedRun
    default: object
    default_seconds: float


def run_baselines(simulate_rk45: Callable[[float, float], object], vi_seconds: float) -> Rk45Baselines:
    """``simulate_rk45(rtol, atol)`` tuned to the VI's CPU time (rtol = atol), and at DEFAULT_TOLERANCES."""
    matched = run_rk45_for_cpu_time(lambda rtol: simulate_rk45(rtol, rtol), vi_seconds)
    default, seconds = cpu_timed(simulate_rk45, *DEFAULT_TOLERANCES)
    return Rk45Baselines(matched, default, seconds)


def _rk45_summary(trajectory, rtol: float, atol: float, cpu_seconds: float, metrics: dict) -> dict:
    return {"rtol": rtol, "atol": atol, "cpu_seconds": cpu_seconds, "steps": int(trajectory.t.size - 1),
            "energy_mean_variation": mean_variation(trajectory.energy),
            "energy_final_change": float(trajectory.energy[-1] - trajectory.energy[0]), **metrics}


def _baseline_entries(key: str, baselines: Rk45Baselines, metrics: Callable[[object], dict]) -> dict:
    """``key``: the equal-CPU-time run with its calibration trials; ``key``_default_tolerance: the other."""
    matched = baselines.matched
    return {key: {**_rk45_summary(matched.result, matched.rtol, matched.rtol, matched.cpu_seconds,
                                  metrics(matched.result)),
                  "calibration_trials": [{"rtol": r, "cpu_seconds": t} for r, t in matched.trials]},
            f"{key}_default_tolerance": _rk45_summary(baselines.default, *DEFAULT_TOLERANCES,
                                                      baselines.default_seconds, metrics(baselines.default))}


def _vi_summary(trajectory, cpu_seconds: float, metrics: dict) -> dict:
    return {"cpu_seconds": cpu_seconds, "steps": int(trajectory.t.size - 1),
            "energy_mean_variation": mean_variation(trajectory.energy),
            "energy_max_variation": float(np.max(np.abs(trajectory.energy - trajectory.energy[0]))), **metrics}


def _curves(vi, vi_label: str, baselines: dict[str, Rk45Baselines]) -> list[tuple[str, object, str]]:
    """(label, trajectory, style) of every run, RK45 first so that the VI is drawn on top."""
    styles = iter([("b:", "c--"), ("k:", "m--")])
    curves = []
    for name, runs in baselines.items():
        matched_style, default_style = next(styles)
        curves += [(f"{name}, equal CPU (rtol {runs.matched.rtol:.0e})", runs.matched.result, matched_style),
                   (f"{name}, rtol 1e-3", runs.default, default_style)]
    return curves + [(vi_label, vi, "r-")]


def _plot_curves(ax, curves, values: Callable[[object], np.ndarray], ylabel: str, xlabel: str = "t [s]",
                 log: bool = False):
    for label, trajectory, style in curves:
        y = values(trajectory)
        if log:
            ax.semilogy(trajectory.t, np.maximum(y, 1e-17), style, label=label, lw=0.9)
        else:
            ax.plot(trajectory.t, y, style, label=label, lw=0.9)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.legend(fontsize="small")


def _energy(trajectory) -> np.ndarray:
    return trajectory.energy


def _energy_figure(output_dir: Path, name: str, title: str, curves, ylim: tuple[float, float] | None = None) -> Path:
    """The energy (J) of every run against time, saved as ``name`` in ``output_dir``; the figure's path."""
    fig, ax = new_figure()
    _plot_curves(ax, curves, _energy, "E [J]")
    if ylim is not None:
        ax.set_ylim(*ylim)
    ax.set_title(title)
    return save_figure(fig, output_dir, name)


def run_mass_spring(output_dir: Path | None, duration: float | None = None) -> dict:
    """Example 1: h = 0.035 s, 200 s, q0 = √2 m, q̇0 = 0 (E = 1 J), against RK45 and the exact solution."""
    article = ARTICLE_FIGURES[Experiment.MASS_SPRING]
    h, duration = article["time_step"], duration or article["duration"]
    params, q0, qd0 = mass_spring.MassSpringParams(), np.sqrt(2.0), 0.0
    vi, vi_seconds = cpu_timed(mass_spring.simulate_vi, params, q0, qd0, h, _steps(duration, h), repeats=3)
    rk = run_baselines(lambda rtol, atol: mass_spring.simulate_rk45(params, q0, qd0, vi.t[-1], rtol, atol),
                       vi_seconds)

    def metrics(trajectory) -> dict:
        exact = mass_spring.exact_solution(params, q0, qd0, trajectory.t)[0]
        return {"max_position_error": float(np.max(np.abs(trajectory.q - exact)))}

    result = {"experiment": Experiment.MASS_SPRING, "time_step": h, "duration": float(vi.t[-1]),
              "initial_energy": float(vi.energy[0]), "vi": _vi_summary(vi, vi_seconds, metrics(vi)),
              **_baseline_entries("rk45", rk, metrics), "article": article}
    if output_dir is not None:
        result["plot"] = _energy_figure(output_dir, "variational_mass_spring", f"Mass-spring, h = {h} s",
                                        _curves(vi, "VI", {"RK45": rk}), ylim=(0.9, 1.1))
    return result


def run_planar_pendulum(output_dir: Path | None, duration: float | None = None) -> dict:
    """Example 2: m = 1 kg, l = 9.81 m, θ0 = π/2, Ω0 = 0 (E = 0 J), h = 0.03 s, 1000 s; exact elliptic solution."""
    article = ARTICLE_FIGURES[Experiment.PLANAR_PENDULUM]
    h, duration = article["time_step"], duration or article["duration"]
    params, theta0 = planar_pendulum.PlanarPendulumParams(), np.pi / 2
    vi, vi_seconds = cpu_timed(planar_pendulum.simulate_vi, params, theta0, 0.0, h, _steps(duration, h), repeats=3)
    rk = run_baselines(lambda rtol, atol: planar_pendulum.simulate_rk45(params, theta0, 0.0, vi.t[-1], rtol, atol),
                       vi_seconds)

    def metrics(trajectory) -> dict:
        exact = planar_pendulum.exact_angle_from_rest(params, theta0, trajectory.t)
        return {"max_angle_error": float(np.max(np.abs(np.angle(np.exp(1j * (trajectory.theta - exact))))))}

    result = {"experiment": Experiment.PLANAR_PENDULUM, "time_step": h, "duration": float(vi.t[-1]),
              "initial_energy": float(vi.energy[0]),
              "vi": _vi_summary(vi, vi_seconds, {**metrics(vi), "orthogonality_error_max": float(
                  orthogonality_errors(vi.rotation).max())}),
              **_baseline_entries("rk45", rk, metrics), "article": article}
    if output_dir is not None:
        result["plot"] = _energy_figure(output_dir, "variational_planar_pendulum", f"Planar pendulum, h = {h} s",
                                        _curves(vi, "Lie group VI on SO(2)", {"RK45": rk}))
    return result


def run_spherical_pendulum(output_dir: Path | None, duration: float | None = None) -> dict:
    """Example 3: q0 = [√3/2, 0, 1/2], ω0 = 0.1[√3, 0, −3] rad/s, h = 0.05 s, 200 s; DOP853 reference."""
    article = ARTICLE_FIGURES[Experiment.SPHERICAL_PENDULUM]
    h, duration = article["time_step"], duration or article["duration"]
    params = spherical_pendulum.SphericalPendulumParams()
    q0, omega0 = spherical_pendulum.article_initial_state()
    vi, vi_seconds = cpu_timed(spherical_pendulum.simulate_vi, params, q0, omega0, h, _steps(duration, h), repeats=3)
    rk = run_baselines(
        lambda rtol, atol: spherical_pendulum.simulate_rk45(params, q0, omega0, vi.t[-1], rtol, atol), vi_seconds)
    reference = solve_ivp(spherical_pendulum.continuous_dynamics(params), (0.0, vi.t[-1]),
                          np.concatenate([q0, omega0]), method="DOP853", rtol=REFERENCE_TOLERANCE,
                          atol=REFERENCE_TOLERANCE, dense_output=True).sol

    def metrics(trajectory) -> dict:
        return {"unit_length_error_mean": float(trajectory.unit_length_error.mean()),
                "max_position_error": float(np.max(np.linalg.norm(trajectory.q - reference(trajectory.t)[:3].T,
                                                                  axis=1)))}

    result = {"experiment": Experiment.SPHERICAL_PENDULUM, "time_step": h, "duration": float(vi.t[-1]),
              "initial_energy_per_ml2": float(vi.energy[0]),
              "vi": _vi_summary(vi, vi_seconds, {**metrics(vi), "vertical_angular_velocity_change_max": float(
                  np.ptp(vi.omega[:, 2]))}),
              **_baseline_entries("rk45", rk, metrics), "article": article}
    if output_dir is not None:
        fig, (ax_energy, ax_unit) = new_figure(2, 1, figsize=(6.4, 7.2))
        curves = _curves(vi, "VI on S²", {"RK45": rk})
        _plot_curves(ax_energy, curves, _energy, "E / (m l²) [1/s²]")
        ax_energy.set_title(f"Spherical pendulum, h = {h} s")
        _plot_curves(ax_unit, curves, lambda trajectory: trajectory.unit_length_error, "| |q| − 1 |", log=True)
        result["plot"] = save_figure(fig, output_dir, "variational_spherical_pendulum")
    return result


def run_dumbbell(output_dir: Path | None, duration: float | None = None) -> dict:
    """Example 4: dumbbell in a central field (normalised units), LGVI vs RK45 with R and with quaternions."""
    params = dumbbell.DumbbellParams()
    initial = dumbbell.default_initial_state(params)
    orbit_period = 2.0 * np.pi * np.sqrt(np.linalg.norm(initial.position) ** 3 / params.mu)
    h, duration = DUMBBELL_TIME_STEP, duration or DUMBBELL_ORBITS * orbit_period
    vi, vi_seconds = cpu_timed(dumbbell.simulate_vi, params, initial, h, _steps(duration, h), repeats=3)
    rk = {form: run_baselines(lambda rtol, atol, form=form: dumbbell.simulate_rk45(params, initial, vi.t[-1], rtol,
                                                                                  form, atol), vi_seconds)
          for form in dumbbell.AttitudeForm}
    reference = solve_ivp(dumbbell.continuous_dynamics(params), (0.0, vi.t[-1]),
                          np.concatenate([initial.rotation.ravel(), initial.position, initial.omega,
                                          initial.velocity]),
                          method="DOP853", rtol=REFERENCE_TOLERANCE, atol=REFERENCE_TOLERANCE, dense_output=True).sol

    def metrics(trajectory) -> dict:
        y = reference(trajectory.t).T
        orthogonality = orthogonality_errors(trajectory.rotation)
        return {"orthogonality_error_mean": float(orthogonality.mean()),
                "orthogonality_error_max": float(orthogonality.max()),
                "max_position_error": float(np.max(np.linalg.norm(trajectory.position - y[:, 9:12], axis=1))),
                "max_attitude_error": float(np.max(np.linalg.norm(trajectory.rotation - y[:, :9].reshape(-1, 3, 3),
                                                                  axis=(1, 2)))),
                "angular_momentum_change_max": float(np.max(np.abs(trajectory.angular_momentum
                                                                   - trajectory.angular_momentum[0])))}

    result = {"experiment": Experiment.DUMBBELL, "time_step": h, "duration": float(vi.t[-1]),
              "orbit_period": orbit_period, "initial_energy": float(vi.energy[0]),
              "parameters": {"mu": params.mu, "sphere_mass": params.sphere_mass,
                             "sphere_radius": params.sphere_radius, "half_length": params.half_length,
                             "orbit_radius": float(np.linalg.norm(initial.position))},
              "vi": _vi_summary(vi, vi_seconds, metrics(vi)),
              **{key: value for form, runs in rk.items()
                 for key, value in _baseline_entries(f"rk45_{form.value}", runs, metrics).items()},
              "article": ARTICLE_FIGURES[Experiment.DUMBBELL]}
    if output_dir is not None:
        fig, (ax_orbit, ax_energy, ax_orth) = new_figure(3, 1, figsize=(6.4, 10.8))
        ax_orbit.plot(vi.position[:, 0], vi.position[:, 1], "r-", lw=0.8)
        ax_orbit.set_aspect("equal")
        ax_orbit.set_title(f"Dumbbell in a central field: mass centre (LGVI, h = {h})")
        curves = _curves(vi, "LGVI", {"RK45 (R)": rk[dumbbell.AttitudeForm.ROTATION_MATRIX],
                                      "RK45 (quaternion)": rk[dumbbell.AttitudeForm.QUATERNION]})
        _plot_curves(ax_energy, curves, _energy, "E (normalised)", "t (normalised)")
        ax_energy.set_ylim(vi.energy[0] - 30 * np.ptp(vi.energy), vi.energy[0] + 30 * np.ptp(vi.energy))
        _plot_curves(ax_orth, curves, lambda trajectory: orthogonality_errors(trajectory.rotation), "‖I − RᵀR‖",
                     "t (normalised)", log=True)
        result["plot"] = save_figure(fig, output_dir, "variational_dumbbell")
    return result


def run_cart_pendulum(output_dir: Path | None, duration: float | None = None) -> dict:
    """Kinetic shaping with κ = 2 κ_crit at h = 0.05 s, without (article Fig. 7) and with dissipation."""
    article = ARTICLE_FIGURES[Experiment.CART_PENDULUM]
    params = cart_pendulum.CartPendulumParams()
    h, duration = article["time_step"], duration or CART_PENDULUM_DURATION
    n_steps = _steps(duration, h)
    q0, qd0 = cart_pendulum.default_initial_state()
    kappa = article["kappa_over_critical"] * params.critical_kappa
    runs = {}
    for label, dissipation in (("kinetic_shaping", 0.0), ("with_dissipation", CART_PENDULUM_DISSIPATION)):
        controller = cart_pendulum.KineticShapingController(params, kappa, dissipation)
        runs[label], seconds = cpu_timed(controller.simulate, q0, qd0, h, n_steps)
        runs[label] = (runs[label], seconds, dissipation)
    open_loop = cart_pendulum.simulate_uncontrolled(params, q0, qd0, h, n_steps)
    fallen = np.flatnonzero(np.abs(open_loop.q[:, 0]) > np.pi / 2)

    def summary(trajectory, seconds, dissipation):
        phi, s = trajectory.q[:, 0], trajectory.q[:, 1]
        last_second = max(1, int(round(1.0 / h)))
        return {"dissipation": dissipation, "cpu_seconds": seconds,
                "phi_max_abs": float(np.max(np.abs(phi))),
                "phi_max_abs_last_second": float(np.max(np.abs(phi[-last_second:]))),
                "cart_displacement_final": float(s[-1] - s[0]),
                "cart_force_max_abs": float(np.max(np.abs(trajectory.force))),
                "controlled_momentum_change_max": float(np.ptp(trajectory.controlled_momentum))}

    result = {"experiment": Experiment.CART_PENDULUM, "time_step": h, "duration": float(open_loop.t[-1]),
              "kappa": kappa, "critical_kappa": params.critical_kappa,
              "initial_state": {"phi": q0[0], "s": q0[1], "phi_dot": qd0[0], "s_dot": qd0[1]},
              **{label: summary(*run) for label, run in runs.items()},
              "uncontrolled_falls_after": float(open_loop.t[fallen[0]]) if fallen.size else None,
              "article": article}
    if output_dir is not None:
        fig, (ax_phi, ax_s, ax_u) = new_figure(3, 1, figsize=(6.4, 9.0))
        for (label, (trajectory, _, _)), style in zip(runs.items(), ("r-", "g--"), strict=True):
            ax_phi.plot(trajectory.t, trajectory.q[:, 0], style, label=label.replace("_", " "), lw=1.0)
            ax_s.plot(trajectory.t, trajectory.q[:, 1], style, lw=1.0)
            ax_u.plot(trajectory.t[:-1], trajectory.force, style, lw=1.0)
        shown = open_loop.t <= (open_loop.t[fallen[0]] if fallen.size else open_loop.t[-1])
        ax_phi.plot(open_loop.t[shown], open_loop.q[shown, 0], "k:", label="uncontrolled")
        ax_phi.set_ylim(-0.2, 0.2)
        ax_phi.set_ylabel("φ [rad]")
        ax_phi.set_title(f"Cart–pendulum, discrete kinetic shaping, κ = 2 κ_crit, h = {h} s")
        ax_phi.legend()
        ax_s.set_ylabel("s [m]")
        ax_u.set_ylabel("u [N]")
        ax_u.set_xlabel("t [s]")
        result["plot"] = save_figure(fig, output_dir, "variational_cart_pendulum")
    return result


CONVERGENCE_ORDERS = (2, 4, 6)
CONVERGENCE_PENDULUM_DURATION = 10.0
"""s: the pendula's horizon (1.4 periods of the planar one from 90°; ``--duration`` changes it)."""
CONVERGENCE_PENDULUM_STEPS = (32, 64, 128, 256, 512)
"""Steps over the pendula's horizon: from 32, the triple jump's backward sub-step (1.7 h) is short enough for the
planar LGVI's rotation (eq. (25): sin δ = hΩ − …, |sin δ| < 1)."""
CONVERGENCE_ARM_DURATION = 1.0
CONVERGENCE_ARM_STEPS = (20, 40, 80, 160, 320)
CONVERGENCE_RESOLVED = 1e-11
"""Errors below this are round-off (and the reference's own error, DOP853 at 1e-13): left out of the observed order."""


def _arm_convergence_runs():
    """{label: (run(order, steps) -> [q, q̇] at 1 s, reference)}: the midpoint VI and the discrete model on the
    package's planar 2-link arm, released at q = (1, 0.2) rad, q̇ = (0, 1) rad/s, against DOP853."""
    from discrete_robot.discrete.simulation import FixedStepSimulation
    from discrete_robot.model.description import load_model, package_config_path
    from discrete_robot.model.dynamics import RigidBodySystem
    from discrete_robot.model.lagrangian import accelerations
    from discrete_robot.variational.midpoint import MidpointVariationalIntegrator

    system = RigidBodySystem(load_model(package_config_path("planar_2link.yaml")))
    q0, qd0, T, zero = np.array([1.0, 0.2]), np.array([0.0, 1.0]), CONVERGENCE_ARM_DURATION, np.zeros(2)
    reference = solve_ivp(lambda _t, y: np.concatenate([y[2:], accelerations(system, y[:2], y[2:], zero)]),
                          (0.0, T), np.concatenate([q0, qd0]), method="DOP853", rtol=1e-13, atol=1e-13).y[:, -1]

    def midpoint(order, steps):
        trajectory = MidpointVariationalIntegrator(system, order=order).simulate(q0, qd0, T / steps, steps)
        return np.concatenate([trajectory.q[-1], trajectory.qd[-1]])

    def discrete(order, steps):
        simulation = FixedStepSimulation(system, "discrete" if order == 2 else f"discrete{order}", T / steps, q0, qd0)
        simulation.step(steps, zero)
        return np.concatenate([simulation.q, simulation.qd])

    return {"midpoint VI, planar 2-link arm": (midpoint, reference),
            "discrete model, planar 2-link arm": (discrete, reference)}


def _pendulum_convergence_runs(duration: float):
    """{label: (run(order, steps) -> state at ``duration``, reference)}: the planar (SO(2)) and spherical (S²)
    pendulum's LGVI, their compositions (both steps are symmetric: eq. (25) by −h from (R_{k+1}, Ω_{k+1}) gives
    −δ, and (35) likewise), against the exact angle and DOP853."""
    planar = planar_pendulum.PlanarPendulumParams()
    theta0 = 0.5 * np.pi

    def planar_run(order, steps):
        step = compose(lambda state, h: planar_pendulum.lgvi_step(*state, h, planar), order)
        state = (rotation2d(theta0), 0.0)
        for _ in range(steps):
            state = step(state, duration / steps)
        return np.array([np.arctan2(state[0][1, 0], state[0][0, 0])])

    exact = planar_pendulum.exact_angle_from_rest(planar, theta0, np.array([duration]))
    spherical = spherical_pendulum.SphericalPendulumParams()
    q0, omega0 = spherical_pendulum.article_initial_state()

    def spherical_run(order, steps):
        step = compose(lambda state, h: spherical_pendulum.lgvi_step(*state, h, spherical), order)
        state = (q0, omega0)
        for _ in range(steps):
            state = step(state, duration / steps)
        return np.concatenate(state)

    tight = spherical_pendulum.simulate_rk45(spherical, q0, omega0, duration, 1e-13, method="DOP853")
    return {"planar pendulum LGVI, SO(2)": (planar_run, exact),
            "spherical pendulum LGVI, S²": (spherical_run, np.concatenate([tight.q[-1], tight.omega[-1]]))}


def _observed_order(points) -> float:
    """The slope of log error against log h between the two smallest steps whose errors are resolved, the most
    asymptotic pair (at the largest steps the compositions' big sub-steps are not yet in their range; NaN with
    fewer than 2 resolved)."""
    resolved = [(h, e) for h, e in points if e > CONVERGENCE_RESOLVED]
    if len(resolved) < 2:
        return float("nan")
    (h0, e0), (h1, e1) = resolved[-2:]
    return float(np.log(e0 / e1) / np.log(h0 / h1))


def run_convergence(output_dir: Path | None, duration: float | None = None) -> dict:
    """Error against h for orders 2, 4 and 6 (:mod:`discrete_robot.composition`): the planar and spherical
    pendulum's LGVI over ``duration`` (default 10 s), and the midpoint VI and the discrete model on a 2-link arm
    over 1 s. Errors: ‖state − reference‖∞ at the end (the planar pendulum's: its angle, wrapped)."""
    horizon = CONVERGENCE_PENDULUM_DURATION if duration is None else duration
    runs = {label: (run, reference, CONVERGENCE_PENDULUM_STEPS, horizon)
            for label, (run, reference) in _pendulum_convergence_runs(horizon).items()}
    runs.update({label: (run, reference, CONVERGENCE_ARM_STEPS, CONVERGENCE_ARM_DURATION)
                 for label, (run, reference) in _arm_convergence_runs().items()})
    curves, orders = {}, {}
    for label, (run, reference, steps, span) in runs.items():
        curves[label], orders[label] = {}, {}
        for order in CONVERGENCE_ORDERS:
            points = []
            for count in steps:
                difference = run(order, count) - reference
                if difference.size == 1:          # an angle
                    difference = np.angle(np.exp(1j * difference))
                points.append((span / count, float(np.max(np.abs(difference)))))
            curves[label][order] = points
            orders[label][order] = _observed_order(points)
    result = {"experiment": Experiment.CONVERGENCE, "pendulum_duration": horizon,
              "arm_duration": CONVERGENCE_ARM_DURATION, "observed_orders": orders,
              "errors": {label: {order: [{"time_step": h, "error": e} for h, e in points]
                                 for order, points in by_order.items()} for label, by_order in curves.items()}}
    if output_dir is not None:
        fig, axes = new_figure(2, 2, figsize=(9.0, 7.5))
        for ax, (label, by_order) in zip(axes.flat, curves.items(), strict=True):
            for order, points in by_order.items():
                ax.loglog(*zip(*points, strict=True), "o-", markersize=4,
                          label=f"order {order} (observed {orders[label][order]:.2f})")
            ax.set_title(label, fontsize=10)
            ax.set_xlabel("h [s]")
            ax.tick_params(axis="x", which="minor", labelbottom=False)     # their labels overlap
            ax.set_ylabel("error at the end")
            ax.grid(True, which="major", alpha=0.3)
            ax.legend(fontsize=7)
        result["plot"] = save_figure(fig, output_dir, "variational_convergence")
    return result


RUNNERS = {
    Experiment.MASS_SPRING: run_mass_spring,
    Experiment.PLANAR_PENDULUM: run_planar_pendulum,
    Experiment.SPHERICAL_PENDULUM: run_spherical_pendulum,
    Experiment.DUMBBELL: run_dumbbell,
    Experiment.CART_PENDULUM: run_cart_pendulum,
    Experiment.CONVERGENCE: run_convergence,
}


def run_experiment(args) -> dict:
    """The CLI entry: one experiment's result, or all of them keyed by name."""
    if args.duration is not None:
        positive_step(args.duration, "--duration")
    names = list(Experiment) if args.name == ALL else [Experiment(args.name)]
    results = {}
    for name in names:
        LOGGER.info("experiment %s ...", name.value)
        results[name.value] = RUNNERS[name](args.output_dir, args.duration)
    return results[names[0].value] if len(names) == 1 else results
