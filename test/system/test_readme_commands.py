"""The README is a contract: every command of its ```bash blocks runs and exits 0.

So are the documents it sends a user to for the other commands (DOCUMENTS: docs/usage.md, docs/nodes.md).
Each command of their bash code blocks is either run here (one test case per command) or listed in
NOT_RUN with the reason it cannot run in a test; a command in neither fails
``test_every_readme_command_is_run_or_listed_as_not_run``, so a new README command has to be classified.

The commands run as a user runs them by hand: from the repository root, in an environment without what
``make`` exports (the venv on AMENT_PREFIX_PATH and PATH), so the command line has to set up what it needs
itself. They write into a temporary folder (``--output-dir``, which every command takes, and the user files
of USER_FILES), never into the repository. The only other changes to a README command are the ones in the
visible SHORTER table.
"""

import os
import re
import shlex
import shutil
import signal
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
README = (REPO / "README.md").read_text()
#: the README and the documents it gives the rest of its commands to; their bash blocks are all run
DOCUMENTS = ("README.md", "docs/usage.md", "docs/nodes.md")
TEXT = "\n".join((REPO / name).read_text() for name in DOCUMENTS)
VENV = REPO / ".venv"

CLI = ".venv/bin/python -m discrete_robot"   # the commands this test runs: the package's command line

# README command prefix -> reason it is not run here. Prefixes of the command as shlex splits it, joined by
# single spaces (comments stripped).
NOT_RUN = {
    "make setup": "creates the venv this test runs in (run before any test: CI's .ci/run, `make test`)",
    "make demo": "runs `make setup` and the whole demo; the demo's command is test/system/test_demo.py",
    "make test": "runs the whole test suite, this test included (recursion)",
    "mkdir -p ~/ws/src": "creates a colcon workspace in $HOME and clones `<this repository>` (a placeholder): "
                         "system-ROS 2 set-up, not available here",
    "cd ~/ws": "followed by rosdep: needs a system ROS 2 and root (apt)",
    "colcon build": "needs colcon and a system ROS 2 (this machine has the embedded runtime only)",
    "source install/setup.bash": "sources the colcon workspace's setup (a shell built-in, no workspace here)",
    "ros2 launch": "needs the `ros2` CLI and `launch` of a system ROS 2 (not on PyPI); the launch files are "
                   "checked by test/system/test_launch_files.py, bringup, its equivalent, runs below",
    "ros2 run": "needs the `ros2` CLI of a system ROS 2; the node executables run in test/nodes/",
    "ros2 security": "needs sros2 and a Fast DDS with its security plugins: a system ROS 2 (docs/nodes.md, Security)",
    "export ROS_SECURITY_KEYSTORE=~/discrete_robot_keystore": "the secured shell of a system ROS 2, for the "
                                                              "`ros2 run` commands after it (docs/nodes.md, Security)",
}

# Shortened commands: README command prefix -> {option: value it is run with}. The README shows realistic
# lengths; here only the number of steps (or simulated time) shrinks, every other argument is the README's.
# An option listed here must be in the README command (else the entry is stale and a test fails).
SHORTER = {
    # 2000 steps of the 6-joint arm take ~10 s; 20 steps run the same model, integrator and plot.
    f"{CLI} discrete simulate --model config/arm_6dof.yaml": {"--steps": "20"},
}

# Commands that start the live ROS 2 nodes: the project's `ros` and `slow` markers. Nothing shorter exists for
# them: plan-execute's only options are --start-bringup and --no-record.
MARKS = {
    f"{CLI} experiment plan-execute": (pytest.mark.ros, pytest.mark.slow),
    # the 6-joint arm at 1 ms runs at about a third of real time: ~90 s, as a user runs it
    f"{CLI} experiment push-to-pose": (pytest.mark.ros, pytest.mark.slow),
}

# Files the README's commands name that are the user's own: README path -> shipped file copied there (a
# model) or None (a file the command writes). The command gets the temporary copy's path instead.
USER_FILES = {
    "my_arm.yaml": REPO / "config" / "planar_2link.yaml",
    "arm.yaml": REPO / "config" / "planar_2link.yaml",
    "urdf/my_arm.urdf": None,
}


def readme_commands(text: str) -> list[list[str]]:
    """The commands of the ```bash blocks, each as shlex tokens, without comments.

    A command continues on the next line while a quote is open (push predict's JSON request) or the line
    ends with a backslash; comment-only lines give no command.
    """
    commands = []
    for block in re.findall(r"^```bash\n(.*?)^```", text, flags=re.S | re.M):
        pending = ""
        for line in block.splitlines():
            pending = f"{pending}\n{line}" if pending else line
            if pending.endswith("\\"):
                pending = pending[:-1]
                continue
            try:
                tokens = shlex.split(pending, comments=True)
            except ValueError:   # "No closing quotation": the command goes on on the next line
                continue
            pending = ""
            if tokens:
                commands.append(tokens)
        assert not pending, f"README bash block ends inside a command: {pending!r}"
    return commands


def text_of(tokens) -> str:
    """A command as the tables name it: its tokens joined by single spaces."""
    return re.sub(r"\s+", " ", " ".join(tokens))


def matching(table: dict, command: str):
    """The table's entry whose key is a prefix of ``command`` (whole words), or None."""
    return next((value for key, value in table.items() if command == key or command.startswith(key + " ")),
                None)


TOKENS = [tuple(tokens) for tokens in readme_commands(TEXT)]
COMMANDS = [text_of(tokens) for tokens in TOKENS]
RUN = [tokens for tokens in TOKENS if text_of(tokens).startswith(CLI + " ")]


def case_id(tokens) -> str:
    short = text_of(tokens).removeprefix(CLI + " ")
    return short if len(short) <= 60 else short[:57] + "..."


def plain_shell_env() -> dict:
    """This process's environment without what `make` (and test/conftest.py) export for the venv.

    AMENT_PREFIX_PATH and PATH lose the venv's entries (a sourced system ROS 2 keeps its own); the
    ROS_DOMAIN_ID stays the one test/conftest.py chose for this session, so the nodes a command starts
    meet no other test run's.
    """
    env = dict(os.environ)
    venv_entries = {str(VENV), str(VENV / "bin")}
    for name in ("AMENT_PREFIX_PATH", "PATH"):
        kept = [p for p in env.get(name, "").split(os.pathsep) if p and p.rstrip("/") not in venv_entries]
        if kept:
            env[name] = os.pathsep.join(kept)
        else:
            env.pop(name, None)
    env.setdefault("ROS_DOMAIN_ID", str(1 + os.getpid() % 101))
    return env


def user_file(path: str, tmp_path: Path) -> str:
    if path not in USER_FILES:
        return path
    target = tmp_path / "user" / path
    target.parent.mkdir(parents=True, exist_ok=True)
    source = USER_FILES[path]
    if source is not None and not target.exists():
        shutil.copyfile(source, target)
    return str(target)


def runnable(command: tuple[str, ...], tmp_path: Path) -> list[str]:
    """The argv a README command runs with: SHORTER's values, temporary user files and output folder."""
    tokens = list(command)
    for option, value in (matching(SHORTER, text_of(command)) or {}).items():
        assert option in tokens, f"SHORTER sets {option} but the README command has none: {text_of(command)}"
        tokens[tokens.index(option) + 1] = value
    tokens = [user_file(t, tmp_path) for t in tokens]
    output_dir = str(tmp_path / "output")
    if "--output-dir" in tokens:
        tokens[tokens.index("--output-dir") + 1] = output_dir
    else:
        tokens += ["--output-dir", output_dir]
    return tokens


def failure(result: subprocess.CompletedProcess, argv: list[str]) -> str:
    """The failed command, its exit status, the end of its stdout and its stderr."""
    return (f"`{shlex.join(argv)}` exited with {result.returncode}\n--- stdout (end) ---\n{result.stdout[-2000:]}"
            f"\n--- stderr ---\n{result.stderr[-6000:]}")


def test_every_readme_command_is_run_or_listed_as_not_run():
    assert RUN, "found no `.venv/bin/python -m discrete_robot` command in README.md's bash blocks"
    assert any(text_of(tokens).startswith(CLI + " ") for tokens in readme_commands(README)), \
        "README.md's own bash blocks run no `.venv/bin/python -m discrete_robot` command"
    unclassified = [c for c in COMMANDS if not c.startswith(CLI + " ") and matching(NOT_RUN, c) is None]
    assert not unclassified, (f"README commands neither run by this test nor listed in its NOT_RUN table "
                              f"(add them to one of the two): {unclassified}")


def test_the_tables_name_only_commands_the_readme_has():
    for table in (NOT_RUN, SHORTER, MARKS):
        stale = [key for key in table if not any(c == key or c.startswith(key + " ") for c in COMMANDS)]
        assert not stale, f"entries for commands the README no longer has: {stale}"
    for path in USER_FILES:
        assert re.search(rf"(?<![\w/.]){re.escape(path)}\b", TEXT), f"no document of {DOCUMENTS} names {path}"


@pytest.mark.parametrize("command", [pytest.param(c, marks=matching(MARKS, text_of(c)) or (), id=case_id(c))
                                     for c in RUN])
def test_readme_command_exits_0(command, tmp_path, request):
    if request.node.get_closest_marker("ros"):
        pytest.importorskip("rclpy", reason="starts the ROS 2 nodes (run `make setup` for the embedded runtime)")
    argv = runnable(command, tmp_path)
    result = subprocess.run(argv, cwd=REPO, env=plain_shell_env(), capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, failure(result, argv)


# Outside the code blocks the README gives bringup's synopsis:
# `.venv/bin/bringup [--only discrete_robot_node ...] [--model-file arm.yaml] [--namespace NS] [--foxglove [PORT]]
# [--ros-args ...]`. It runs until Ctrl-C, so it is run with every option of the synopsis, its placeholders given
# values (PLACEHOLDERS), stopped by SIGINT once it publishes, and must exit 0.
BRINGUP = re.search(r"`(\.venv/bin/bringup [^`]*)`", README)
#: the synopsis's placeholders and what the test runs them with (NS: where it listens; PORT: a free port)
PLACEHOLDERS = {"NS": "readme_synopsis", "PORT": None}


def free_port() -> str:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return str(probe.getsockname()[1])


@pytest.mark.ros
def test_readme_bringup_synopsis_publishes_and_stops_cleanly_on_sigint(ros, tmp_path):
    from sensor_msgs.msg import JointState

    from discrete_robot.ros.session import RosTimeoutError

    assert BRINGUP, "README no longer gives the `.venv/bin/bringup [...]` synopsis: update this test"
    synopsis = BRINGUP.group(1)
    # "[--only discrete_robot_node ...]" -> "--only discrete_robot_node": one node keeps it short.
    tokens = [t for t in shlex.split(synopsis.replace("[", " ").replace("]", " ")) if t != "..."]
    assert tokens[:2] == [".venv/bin/bringup", "--only"], synopsis
    values = {**PLACEHOLDERS, "PORT": free_port()}
    argv = [values.get(t) or user_file(t, tmp_path) for t in tokens]
    topic = f"/{values['NS']}/joint_states" if "--namespace" in tokens else "joint_states"
    log = tmp_path / "bringup.log"
    with open(log, "w") as output:
        process = subprocess.Popen(argv, cwd=REPO, env=plain_shell_env(), stdout=output, stderr=subprocess.STDOUT)
        try:
            try:
                ros.session.wait_for_message(topic, JointState, timeout=60.0)
            except RosTimeoutError as error:   # fail with the bringup's own output
                pytest.fail(f"`{shlex.join(argv)}` published no joint_states ({error}):\n{log.read_text()[-4000:]}")
            process.send_signal(signal.SIGINT)
            status = process.wait(timeout=15.0)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
    assert status == 0, f"`{shlex.join(argv)}` exited with {status} after SIGINT:\n{log.read_text()[-4000:]}"
    assert "Traceback" not in log.read_text(), log.read_text()[-4000:]

