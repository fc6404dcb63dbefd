"""``sweep run``: check the spec, build its cases, run them (:mod:`.engine`), write the summary and plots."""

import json
from pathlib import Path

from discrete_robot.errors import InputError
from discrete_robot.sweep.cases import expand
from discrete_robot.sweep.experiments import EXPERIMENTS
from discrete_robot.sweep.plots import PLOTS
from discrete_robot.sweep.spec import parse_spec, read_spec


def prepare(raw: dict, experiments: dict = EXPERIMENTS):
    """(spec, experiment, cases) of a spec mapping: everything checked (InputError naming the key)."""
    spec = parse_spec(raw, experiments)
    experiment = experiments[spec.experiment]
    return spec, experiment, expand(spec, experiment)


def sweep(raw: dict, output_dir: Path, workers: int | None = None, address: str | None = None,
          resume: bool = False, progress: bool = True, experiments: dict = EXPERIMENTS) -> dict:
    """Run a spec mapping into ``output_dir``: the engine's summary plus ``plots``, ``metrics`` (the experiment's
    headline numbers) and the paths of ``summary.json`` and the spec kept with the results."""
    import pyarrow as pa

    from discrete_robot.cli import to_jsonable
    from discrete_robot.sweep.engine import run_sweep
    from discrete_robot.sweep.results import folder_error, write_aside

    if workers is not None and workers < 1:
        raise InputError(f"--workers: must be at least 1, got {workers}")
    spec, experiment, cases = prepare(raw, experiments)
    output_dir = Path(output_dir)
    summary = run_sweep(spec, experiment, cases, output_dir, workers, address, resume, progress)
    table = summary.pop("table")
    ids = {case.id for case in cases}
    # typed: the mask of a table with no rows (Ctrl-C before the first result) would otherwise be of type null
    table = table.filter(pa.array([case in ids for case in table.column("case").to_pylist()], type=pa.bool_()))
    plot = PLOTS.get(experiment.name)
    summary["summary"] = output_dir / "summary.json"
    try:
        summary["plots"], summary["metrics"] = plot(table, output_dir) if plot and table.num_rows else ([], {})
        write_aside(summary["summary"], json.dumps(to_jsonable(summary), indent=2).encode())
    except OSError as error:    # the rows are in results.parquet already
        raise folder_error(Path(error.filename or summary["summary"]), error,
                           f"; every row is kept in {summary['results']}") from None
    return summary


KEPT = "the finished cases are kept; --resume computes the others"


def run(args) -> dict:
    try:
        summary = sweep(read_spec(args.spec), args.output_dir, args.workers, args.address, args.resume,
                        args.progress)
    except KeyboardInterrupt:   # outside the engine's run (which keeps its rows itself): checking, expanding, merging
        return {"success": False, "interrupted": True, "message": f"interrupted: {KEPT}"}
    if summary["lost"]:
        summary["success"] = False
        summary["message"] = f"{summary['lost']}: {KEPT}"
    elif summary["interrupted"]:
        summary["success"] = False
        summary["message"] = f"interrupted: {KEPT}"
    return summary
