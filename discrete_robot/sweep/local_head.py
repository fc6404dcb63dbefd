"""The sweep's local Ray instance, started in a process of its own (:func:`start`) so that the driver obeys
Ctrl-C while it starts: ``ray.init`` started in the driver held the interpreter (the GIL) in a C++ wait for its
raylet, up to 2-3 s on 2 loaded cores, when no signal handler runs; here the driver only waits for this process's
one line (:func:`address`, in steps of STEP) and then joins the instance as it joins a cluster.

``python -m discrete_robot.sweep.local_head CPUS`` starts the instance (``ray.init(address="local")``: its GCS
server, raylet and workers are children of this process and die with it, by Ray's own fate sharing), writes its
GCS address on one line of stdout and keeps it running until stdin ends: the driver closes it or ends, so a
driver killed outright leaves no instance behind. The process is a session of its own: the terminal's Ctrl-C
reaches the driver only, which stops every process of the instance itself (engine.LocalProcesses).
"""

import logging
import select
import signal
import subprocess
import sys

#: s between the driver's checks while the instance starts (its signal handlers run between them)
STEP = 0.1


class HeadError(Exception):
    """The local instance's process ended before giving its address; the message says how."""


def start(cpus: int) -> subprocess.Popen:
    """The process of a local instance with ``cpus`` CPUs, started (stderr is the driver's: Ray's reasons)."""
    return subprocess.Popen([sys.executable, "-m", __name__, str(cpus)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, start_new_session=True)


def address(head: subprocess.Popen) -> str:
    """The GCS address (HOST:PORT) ``head`` writes once its instance runs, waited for in steps of STEP s."""
    while not select.select([head.stdout], [], [], STEP)[0]:
        if head.poll() is not None:
            break
    line = head.stdout.readline().decode().strip()
    if not line:
        raise HeadError(f"the local Ray instance did not start (its process ended with status {head.wait()})")
    return line


def main(cpus: int) -> None:
    import ray

    # "local": a new instance even where `ray start` left one running on this machine (which ray.init() would join)
    context = ray.init(address="local", num_cpus=cpus, include_dashboard=False, log_to_driver=False,
                       logging_level=logging.WARNING)
    # SIGTERM (the driver stopping the instance after Ctrl-C) ends this process as the end of stdin does, without
    # the stack dump Ray's own handler writes on the driver's stderr
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    print(context.address_info["gcs_address"], flush=True)
    sys.stdin.buffer.read()


if __name__ == "__main__":
    main(int(sys.argv[1]))
