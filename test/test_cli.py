"""The command line builds every capability's parser (what ``--help`` needs) without importing a numerical
library, compiled kernels, plotting or ROS: those load only when a command runs."""

import subprocess
import sys
from pathlib import Path

import pytest

from discrete_robot.cli import CAPABILITIES

HEAVY = ("scipy", "numba", "matplotlib", "rclpy", "discrete_robot.jit")


@pytest.mark.parametrize("capability", list(CAPABILITIES))
def test_building_a_capabilitys_parser_imports_nothing_heavy(capability):
    probe = (f"import sys; from discrete_robot.cli import build_parser; build_parser({capability!r}); "
             f"print(','.join(m for m in {HEAVY!r} if m in sys.modules))")
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout.strip()
    assert loaded == "", f"building the {capability} parser imported {loaded}"


def test_a_list_value_starting_with_minus_is_a_value_not_an_option():
    from discrete_robot.cli import joined_negative_values

    assert joined_negative_values(["--object-footprint", "-0.05,-0.05,0.05,-0.05", "--goal", "1,0,0"]) == [
        "--object-footprint=-0.05,-0.05,0.05,-0.05", "--goal", "1,0,0"]
    assert joined_negative_values(["--q0", "-1", "-2"]) == ["--q0", "-1", "-2"]    # argparse reads these itself


def test_the_push_to_pose_parser_takes_a_footprint_starting_with_minus():
    from discrete_robot.cli import build_parser, joined_negative_values

    argv = ["experiment", "push-to-pose", "--goal", "1.0,0.0,0.3", "--object-footprint",
            "-0.05,-0.05,0.05,-0.05,0.05,0.05,-0.05,0.05"]
    args = build_parser("experiment").parse_args(joined_negative_values(argv))
    assert args.object_footprint == [-0.05, -0.05, 0.05, -0.05, 0.05, 0.05, -0.05, 0.05]


def test_a_long_result_prints_at_most_twenty_lines_and_goes_whole_to_a_file(tmp_path, capsys, monkeypatch):
    import json

    from discrete_robot import cli

    document = {"t": list(range(2000)), "q": [[0.1 * k, -0.2 * k] for k in range(500)], "name": "long",
                **{f"field_{k}": k for k in range(40)}}
    monkeypatch.setitem(cli.CAPABILITIES, "probe", ("probe_module", "test"))

    class Probe:
        @staticmethod
        def add_commands(parser, common):
            sub = parser.add_subparsers(dest="command", required=True)
            sub.add_parser("long", parents=[common]).set_defaults(run=lambda args: document)

    monkeypatch.setitem(__import__("sys").modules, "probe_module", Probe)
    assert cli.main(["probe", "long", "--output-dir", str(tmp_path)]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert len(printed) <= cli.SUMMARY_LINES + 1         # the summary, and the line naming the file
    assert "[2000 values, 0 .. 1999]" in "\n".join(printed) and "500x2 values" in "\n".join(printed)
    assert json.loads((tmp_path / "probe_long.json").read_text()) == document


def test_the_demo_summary_is_one_line_per_experiment_and_says_what_to_open():
    from discrete_robot.ros.cli import next_steps, summary_text

    experiments = {
        "plan-execute": {"final_position_error_rad": [0.001, 0.002], "largest_tracking_error_rad": 0.02,
                         "planned_duration_s": 1.1, "plot": "/r/plan_execute.png"},
        "space": {"base_displacement_m": [0.01, 0.0, 0.0], "base_rotation_rad": 0.1, "plot": "/r/space_robot.png"},
        "push-sweep": {"final_rotation_rad": [-0.3, 0.0, 0.3], "plot": "/r/push_sweep.png"},
        "push-to-pose": {"final_error": {"position_m": 0.004, "angle_rad": 0.02}, "success": True,
                         "plots": ["/r/push_to_pose.png", "/r/push_to_pose_joints.png"]},
    }
    summary = {"output_dir": "/r", "mcap": {"path": "/r/experiments.mcap"}}
    summary["next_steps"] = next_steps(summary)
    lines = summary_text(experiments, summary).splitlines()
    assert [line.split()[0] for line in lines[:4]] == list(experiments)
    assert len(lines) <= 8 and lines[4].startswith("results: /r")
    assert "experiments.mcap" in "\n".join(lines[4:])


@pytest.mark.parametrize("library, after_s", [("_multiarray_umath", 0.0), ("ft2font", 0.0), ("_devicearray", 0.0),
                                              ("_multiarray_umath", 0.3), ("_multiarray_umath", 2.0)])
def test_ctrl_c_that_no_command_catches_ends_the_process_by_the_signal_in_one_line(library, after_s, tmp_path):
    """SIGINT ``after_s`` after `discrete simulate` mapped the extension ``library`` (numpy's, matplotlib's,
    numba's): while the modules load, or during the run, which lets Ctrl-C end it. The process ends by SIGINT, as
    Python ends on an uncaught KeyboardInterrupt, and says so in one line. A Ctrl-C while an extension starts used
    to come out as its ImportError ("initialization failed" from matplotlib, 11 times in 20 just after it was
    mapped; "PyCapsule_Import could not import module datetime" from numpy) or an abort. The clock starts at an
    extension because before numpy the interpreter itself is starting, whose Ctrl-C is Python's own."""
    import signal
    import time

    command = [sys.executable, "-m", "discrete_robot", "discrete", "simulate", "--model", "config/arm_6dof.yaml",
               "--steps", "100000000", "--output-dir", str(tmp_path)]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    maps, deadline = Path(f"/proc/{process.pid}/maps"), time.monotonic() + 120.0
    while process.poll() is None and library not in maps.read_text():
        if time.monotonic() > deadline:    # generous: a loaded machine loads slowly
            process.kill()
            pytest.fail(f"{library} not loaded in 120 s")
        # no sleep: the signal should land while the extension starts
    time.sleep(after_s)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=120)
    assert process.returncode == -signal.SIGINT, err
    assert "Traceback" not in err, err
    assert err.strip() in ("", "interrupted"), err


_PROBED = '''
import os, signal, sys, time
sys.path.insert(0, sys.argv[1])
from discrete_robot.interrupts import interrupt
signal.signal(signal.SIGINT, interrupt)
try:
    {body}
except {caught}:
    print("{outcome}")
'''
_EXTENSION = '''
import os, signal, time
try:
    os.kill(os.getpid(), signal.SIGINT)
    time.sleep(10.0)
except KeyboardInterrupt:
    raise ImportError("initialization failed") from None
'''


@pytest.mark.parametrize("body, caught, ends", [
    ("import probed_extension", "ImportError", True),
    ("os.kill(os.getpid(), signal.SIGINT); time.sleep(10.0)", "KeyboardInterrupt", False)])
def test_a_ctrl_c_during_a_runs_import_ends_the_process_and_elsewhere_raises(body, caught, ends, tmp_path):
    """The run's handler (discrete_robot.interrupts.interrupt). A Ctrl-C while an extension starts becomes its
    ImportError, which a library probing an optional module catches (numba's scipy.linalg probe, tqdm's lock): the
    process ends at once instead, where Python's handler lost the Ctrl-C (the probe here turns it into an
    ImportError as an extension's start does, and its importer goes on). Outside an import it is a
    KeyboardInterrupt, which a command may catch to keep what it has done."""
    import signal

    (tmp_path / "probed_extension.py").write_text(_EXTENSION)
    outcome = "lost" if ends else "caught"
    script = _PROBED.format(body=body, caught=caught, outcome=outcome)
    result = subprocess.run([sys.executable, "-c", script, str(tmp_path)], capture_output=True, text=True,
                            timeout=120)
    if ends:
        assert result.returncode == -signal.SIGINT and result.stderr.strip() == "interrupted", result.stderr
        assert "lost" not in result.stdout
    else:
        assert result.returncode == 0 and result.stdout.strip() == "caught", result.stderr
