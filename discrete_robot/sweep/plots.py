"""A sweep's figures and headline numbers, from its results table (the rows with status ok).

- push-to-pose: success rate (with 95 % Wilson intervals) and the final goal error in tolerances against the
  friction mismatch between the world and the planner, one line per pressure distribution of the world;
- predict-push: the rotation sense over the contact points of the outline against the finger's direction;
- min-time: planned duration against the torque-limit scale;
- simulate: energy drift against the time step, per integrator.
"""

from pathlib import Path

import numpy as np

from discrete_robot.plotting import new_figure, save_figure

#: bins of the friction mismatch in the push-to-pose plot
MISMATCH_BINS = 8
#: two-sided 95 % normal quantile (Wilson score interval)
Z95 = 1.959963984540054


def _ok(table) -> dict:
    """The ok rows' columns as numpy arrays (lists for list columns)."""
    rows = table.filter(np.array(table.column("status").to_pylist()) == "ok")
    return {name: np.array(rows.column(name).to_pylist(), dtype=object if name in ("final_pose", "final_q",
                                                                                      "final_qd") else None)
            for name in rows.column_names}


def wilson_interval(successes: int, trials: int) -> tuple[float, float]:
    """The 95 % Wilson score interval of a success rate (E. B. Wilson, JASA 22, 1927)."""
    if trials == 0:
        return 0.0, 1.0
    p = successes / trials
    centre = (p + Z95 ** 2 / (2 * trials)) / (1 + Z95 ** 2 / trials)
    half = Z95 * np.sqrt(p * (1 - p) / trials + Z95 ** 2 / (4 * trials ** 2)) / (1 + Z95 ** 2 / trials)
    return float(max(0.0, centre - half)), float(min(1.0, centre + half))


def friction_mismatch(columns: dict) -> tuple[np.ndarray, str]:
    """(world / planner - 1, which friction): the finger friction's mismatch, or the support friction's when the
    finger's never differs."""
    for name in ("contact_friction", "support_friction"):
        mismatch = columns[name] / columns[f"planner_{name}"] - 1.0
        if np.any(np.abs(mismatch) > 1e-12):
            return mismatch, name
    return columns["contact_friction"] * 0.0, "contact_friction"


def push_to_pose(table, output_dir: Path) -> tuple[list[Path], dict]:
    columns = _ok(table)
    if not len(columns["case"]):
        return [], {}
    mismatch, which = friction_mismatch(columns)
    edges = np.linspace(mismatch.min(), mismatch.max() + 1e-12, MISMATCH_BINS + 1)
    # the goal error in tolerances: the larger of position / position tolerance and |angle| / angle tolerance,
    # at most 1 exactly when the push succeeded
    goal_error = np.maximum(columns["position_error_m"] / columns["position_tolerance"],
                            np.abs(columns["angle_error_rad"]) / columns["angle_tolerance"])
    fig, (rate_axis, error_axis) = new_figure(2, 1, sharex=True, figsize=(7.0, 6.8))
    headline = {}
    for pressure in sorted(set(columns["pressure"])):
        mine = columns["pressure"] == pressure
        success = columns["success"][mine].astype(bool)
        x = mismatch[mine]
        centres, rates, low, high = [], [], [], []
        for a, b in zip(edges[:-1], edges[1:], strict=True):
            inside = (x >= a) & (x < b)
            if inside.any():
                k, n = int(success[inside].sum()), int(inside.sum())
                interval = wilson_interval(k, n)
                centres.append(100 * 0.5 * (a + b))
                rates.append(k / n)
                low.append(max(0.0, k / n - interval[0]))     # the interval's clamped ends, rounded
                high.append(max(0.0, interval[1] - k / n))
        rate_axis.errorbar(centres, rates, yerr=[low, high], marker="o", capsize=3,
                           label=f"world: {pressure} ({int(mine.sum())} cases)")
        error_axis.semilogy(100 * x, np.maximum(goal_error[mine], 1e-6), ".", alpha=0.6, label=pressure)
        headline[pressure] = {"cases": int(mine.sum()), "success_rate": float(success.mean()),
                              "success_rate_95": wilson_interval(int(success.sum()), int(mine.sum()))}
    planner = ", ".join(sorted(set(columns["planner_pressure"])))
    fig.suptitle(f"push to pose: the planner assumes {planner} pressure (95 % Wilson intervals)")
    rate_axis.set(ylabel="success rate", ylim=(-0.05, 1.05))
    rate_axis.legend(fontsize=8, loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=3)
    error_axis.axhline(1.0, color="grey", linestyle="--", label="tolerance")
    error_axis.set(xlabel=f"{which.replace('_', ' ')}: world / planner - 1 [%]",
                   ylabel="goal error [tolerances]")
    error_axis.legend(fontsize=8, ncol=4)
    return [save_figure(fig, output_dir, "sweep_push_to_pose")], {"success_by_pressure": headline,
                                                                   "mismatch_of": which}


def predict_push(table, output_dir: Path) -> tuple[list[Path], dict]:
    columns = _ok(table)
    if not len(columns["case"]):
        return [], {}
    position = columns["contact_edge"] + columns["contact_fraction"]
    fig, axis = new_figure(figsize=(7.0, 4.2))
    for sense, colour, label in ((1, "tab:blue", "counter-clockwise"), (-1, "tab:red", "clockwise"),
                                 (0, "grey", "translation / separating")):
        mine = columns["rotation"] == sense
        axis.scatter(position[mine], np.degrees(columns["pusher_angle"][mine]), s=10, color=colour, label=label)
    axis.set(xlabel="contact point along the outline [edges from vertex 0]",
             ylabel="finger direction from the inward normal [deg]", title="rotation sense of a pushed object")
    axis.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.15), ncol=3)
    modes = {mode: int(np.sum(columns["mode"] == mode)) for mode in sorted(set(columns["mode"]))}
    senses = {name: int(np.sum(columns["rotation"] == value)) for name, value in
              (("counter_clockwise", 1), ("clockwise", -1), ("none", 0))}
    return [save_figure(fig, output_dir, "sweep_predict_push")], {"modes": modes, "rotation": senses}


def min_time(table, output_dir: Path) -> tuple[list[Path], dict]:
    columns = _ok(table)
    if not len(columns["case"]):
        return [], {}
    fig, axis = new_figure()
    axis.loglog(columns["torque_scale"], columns["duration_s"], "o")
    axis.set(xlabel="torque-limit scale", ylabel="planned duration [s]", title="minimum time against torque limits")
    return [save_figure(fig, output_dir, "sweep_min_time")], {
        "duration_s": [float(columns["duration_s"].min()), float(columns["duration_s"].max())]}


def simulate(table, output_dir: Path) -> tuple[list[Path], dict]:
    columns = _ok(table)
    if not len(columns["case"]):
        return [], {}
    fig, axis = new_figure()
    headline = {}
    for integrator in sorted(set(columns["integrator"])):
        mine = columns["integrator"] == integrator
        axis.loglog(columns["dt"][mine], np.maximum(columns["energy_drift"][mine], 1e-300), "o", label=integrator)
        headline[integrator] = float(columns["energy_drift"][mine].max())
    axis.set(xlabel="time step [s]", ylabel="largest |T + V - E0| [J]", title="energy drift against step")
    axis.legend(fontsize=8)
    return [save_figure(fig, output_dir, "sweep_simulate")], {"largest_energy_drift": headline}


PLOTS = {"push-to-pose": push_to_pose, "predict-push": predict_push, "min-time": min_time, "simulate": simulate}
