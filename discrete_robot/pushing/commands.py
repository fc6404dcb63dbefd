"""Implementations of the ``pushing`` commands (their arguments: :mod:`.cli`, which imports this module only
when a command runs, so ``--help`` loads no numerical module)."""

import json
from pathlib import Path

import numpy as np

from discrete_robot.errors import InputError
from discrete_robot.geometry2d import to_world
from discrete_robot.plotting import new_figure, save_figure
from discrete_robot.pushing.prediction import predict_push
from discrete_robot.pushing.requests import (
    parse_predict_request,
    parse_simulate_request,
    prediction_fields,
    trajectory_fields,
)
from discrete_robot.pushing.simulation import PushTrajectory, simulate_push


def read_request(text: str) -> dict:
    """A JSON object given inline or as @path."""
    if text.startswith("@"):
        path = Path(text[1:])
        if not path.is_file():
            raise InputError(f"request file {path} not found")
        text = path.read_text()
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise InputError(f"the request is not valid JSON: {error}") from error


def predict(args) -> dict:
    request = parse_predict_request(read_request(args.request), grid_points=args.grid_points)
    prediction = predict_push(request.obj, request.contact_point, request.pusher_velocity, request.contact_friction,
                              request.pusher_radius)
    return {"success": True, "message": "", **prediction_fields(prediction),
            "is_translation": prediction.is_translation, "support_power": prediction.support_power}


def plot_trajectory(footprint: np.ndarray, trajectory: PushTrajectory, output_dir: Path, outlines: int = 12) -> Path:
    """The object's outline at ``outlines`` times (darker = later), the finger's path and the centers of rotation."""
    fig, ax = new_figure(figsize=(6.4, 5.4))
    samples = np.unique(np.linspace(0, len(trajectory.times) - 1, outlines).round().astype(int))
    for rank, k in enumerate(samples):
        outline = to_world(trajectory.poses[k], np.vstack([footprint, footprint[:1]]))
        shade = 0.85 - 0.75 * rank / max(len(samples) - 1, 1)
        ax.plot(outline[:, 0], outline[:, 1], color=(shade, shade, 1.0), lw=1.2,
                label=f"t = {trajectory.times[k]:.2f} s" if k in (samples[0], samples[-1]) else None)
    ax.plot(trajectory.finger_positions[:, 0], trajectory.finger_positions[:, 1], "r-", lw=1, label="finger path")
    cor = trajectory.centers_of_rotation
    near = np.all(np.isfinite(cor), axis=1) & (np.linalg.norm(cor - trajectory.poses[:, :2], axis=1)
                                                < 5 * np.ptp(footprint, axis=0).max())
    ax.plot(cor[near, 0], cor[near, 1], "k.", ms=2, label="center of rotation")
    ax.set(xlabel="x [m]", ylabel="y [m]", title="quasistatic push (world frame)", aspect="equal")
    ax.legend(fontsize=8, loc="best")
    return save_figure(fig, output_dir, "push_simulation")


def simulate(args) -> dict:
    request = parse_simulate_request(read_request(args.request), default_time_step=args.default_time_step,
                                     grid_points=args.grid_points)
    trajectory = simulate_push(request.obj, request.initial_pose, request.pusher_path, request.pusher_speed,
                               request.time_step, request.contact_friction, request.pusher_radius)
    plot = plot_trajectory(request.obj.footprint, trajectory, args.output_dir)
    return {"success": True, "message": "", **trajectory_fields(trajectory), "plot": plot}
