"""Saving figures without a display (CLI experiments, benchmarks, the demo)."""

from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # headless: experiments run on CI and over SSH
import matplotlib.pyplot as plt  # noqa: E402


def new_figure(rows: int = 1, cols: int = 1, **kwargs):
    """A figure and its axes, sized for a readable PNG."""
    kwargs.setdefault("figsize", (6.4 * cols, 3.6 * rows))
    kwargs.setdefault("constrained_layout", True)
    return plt.subplots(rows, cols, **kwargs)


def save_figure(fig, output_dir: Path, name: str) -> Path:
    """Write ``fig`` to ``output_dir/name.png`` (folders created) and close it; returns the path."""
    output_dir = Path(output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)
    path = output_dir / f"{name}.png"
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path
