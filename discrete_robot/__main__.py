"""Entry point of ``python -m discrete_robot``."""

import os
import signal
import sys

from discrete_robot.interrupts import end_by_sigint, interrupt

# While the modules load (the command line's and its command's), Ctrl-C ends the process at once: a
# KeyboardInterrupt raised inside an extension's import comes out as that extension's ImportError (numpy:
# "PyCapsule_Import could not import module datetime"; matplotlib: "initialization failed").
signal.signal(signal.SIGINT, end_by_sigint)
from discrete_robot import cli  # noqa: E402  (after the handler, which covers this import)

args = cli.parse()
# During the run, KeyboardInterrupt, but for a Ctrl-C inside one of the run's own (lazy) imports
signal.signal(signal.SIGINT, interrupt)
try:
    status = cli.run(args)
except KeyboardInterrupt:
    # Ctrl-C that a command lets end its run.
    end_by_sigint()
if cli.interrupted_run:
    # Ctrl-C: the summary is written and the sweep's Ray processes are stopped. The interpreter's own teardown
    # (Ray's exit hooks, which talk to the cluster) took 0.3-1.2 s more on a loaded machine, past the 2 s a stop
    # is allowed.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)
sys.exit(status)
