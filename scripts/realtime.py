"""Does bringup keep real time? Real-time factor and publish rates over a window; JSON report.

    .venv/bin/python scripts/realtime.py [--duration 60] [--output results/realtime.json]
                                         [--model-file FILE] [--only NODE ...]

Starts ``bringup`` (every node, each its own process, the shipped defaults; ``--model-file`` and ``--only`` as
bringup takes them, e.g. the arm alone on a URDF) as a child process, waits until the simulators it started
publish, then listens for ``--duration`` wall-clock seconds:

- ``real_time_factor``: simulated seconds advanced on ``/clock`` (the one shared clock) per wall-clock second,
  between the first and the last clock message of the window;
- ``rates_hz``: messages per wall-clock second on ``joint_states`` (the arm, 100 Hz by default) and
  ``space_robot/joint_states`` (50 Hz), with their relative deviation from the configured rate;
- ``first_message_s``: from process start to the first message of each simulator.

The report's ``failures`` name every target missed (real-time factor below 0.99, a rate off by more than 2 %:
issue 10's targets) and ``passed`` is true without any; the last line printed says the same, and the exit
status is 0 when passed, 1 otherwise (``bringup_exit_status`` is bringup's own, 0 when it stopped cleanly).
"""

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

RATES = {"joint_states": 100.0, "space_robot/joint_states": 50.0}
#: the simulator that publishes each of RATES' topics
PUBLISHER = {"joint_states": "discrete_robot_node", "space_robot/joint_states": "space_robot_node"}
MIN_REAL_TIME_FACTOR = 0.99
MAX_RATE_DEVIATION = 0.02


def measure(duration: float, bringup_args: list[str], rates: dict[str, float]) -> dict:
    from rosgraph_msgs.msg import Clock
    from sensor_msgs.msg import JointState

    from discrete_robot.ros.processes import NodeProcess, ament_environment
    from discrete_robot.ros.session import RosSession

    ament_environment()
    with tempfile.TemporaryDirectory(prefix="discrete_robot_realtime_") as workdir, RosSession("realtime") as session:
        started = time.monotonic()
        bringup = NodeProcess("bringup", Path(workdir), args=bringup_args)
        try:
            first = {}
            for topic in rates:
                session.wait_for_message(topic, JointState, timeout=60.0)
                first[topic] = round(time.monotonic() - started, 3)
            counts = dict.fromkeys(rates, 0)
            clock = []

            def counter(topic):
                return lambda _: counts.__setitem__(topic, counts[topic] + 1)

            subscriptions = [session.node.create_subscription(JointState, topic, counter(topic), 100)
                             for topic in rates]
            subscriptions.append(session.node.create_subscription(
                Clock, "/clock", lambda m: clock.append((time.monotonic(), m.clock.sec + 1e-9 * m.clock.nanosec)),
                100))
            window_start = time.monotonic()
            session.spin_until(lambda: False, duration)
            window = time.monotonic() - window_start
            for subscription in subscriptions:
                session.node.destroy_subscription(subscription)
        finally:
            status = bringup.stop()
    if len(clock) < 2:
        raise RuntimeError(f"{len(clock)} /clock message(s) in {window:.1f} s: the arm's simulator publishes none")
    (wall0, sim0), (wall1, sim1) = clock[0], clock[-1]
    measured = {topic: counts[topic] / window for topic in rates}
    return {"duration_s": window, "real_time_factor": (sim1 - sim0) / (wall1 - wall0),
            "rates_hz": measured, "rate_deviation": {t: measured[t] / rates[t] - 1.0 for t in rates},
            "first_message_s": first, "bringup_exit_status": status}


def failures(report: dict) -> list[str]:
    """Each target the run missed, in words."""
    missed = []
    if report["real_time_factor"] < MIN_REAL_TIME_FACTOR:
        missed.append(f"real-time factor {report['real_time_factor']:.4f} < {MIN_REAL_TIME_FACTOR}")
    for topic, deviation in report["rate_deviation"].items():
        if abs(deviation) > MAX_RATE_DEVIATION:
            missed.append(f"{topic} at {report['rates_hz'][topic]:.2f} Hz, {100 * deviation:+.1f} % from "
                          f"{RATES[topic]:g} Hz (limit ±{100 * MAX_RATE_DEVIATION:g} %)")
    if report["bringup_exit_status"] != 0:
        missed.append(f"bringup exited with status {report['bringup_exit_status']}")
    return missed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=60.0, help="wall-clock seconds measured")
    parser.add_argument("--output", type=Path, default=Path("results/realtime.json"))
    parser.add_argument("--model-file", help="the arm's model file (YAML, URDF or xacro), as bringup takes it")
    parser.add_argument("--only", nargs="+", metavar="NODE", help="start only these nodes, as bringup does")
    args = parser.parse_args()
    os.environ.setdefault("ROS_DOMAIN_ID", str(1 + os.getpid() % 101))
    bringup_args = (["--model-file", args.model_file] if args.model_file else []) + (
        ["--only", *args.only] if args.only else [])
    rates = {t: r for t, r in RATES.items() if not args.only or PUBLISHER[t] in args.only}
    try:
        if not rates:
            raise ValueError(f"--only {' '.join(args.only)} starts no simulator: nothing to measure")
        report = measure(args.duration, bringup_args, rates)
    except Exception as error:  # noqa: BLE001 - any failure to measure is reported in one line, with its reason
        print(f"FAILED: could not measure: {type(error).__name__}: {error}")
        return 1
    report["failures"] = failures(report)
    report["passed"] = not report["failures"]
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(report, indent=2))
    rates = ", ".join(f"{t} {r:.2f} Hz" for t, r in report["rates_hz"].items())
    print(f"real-time factor {report['real_time_factor']:.4f}; {rates}; report: {args.output}")
    print("passed" if report["passed"] else "FAILED: " + "; ".join(report["failures"]))
    return 0 if report["passed"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
