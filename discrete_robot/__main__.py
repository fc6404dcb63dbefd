"""Entry point of ``python -m discrete_robot``."""

import os
import signal
import sys


def _end_by_sigint(*_):
    """Print one line and end by SIGINT, as Python ends on an uncaught KeyboardInterrupt, so a shell or a script
    sees a Ctrl-C (status 130, or −2 to a parent in Python)."""
    print("interrupted", file=sys.stderr)
    sys.stdout.flush()
    sys.stderr.flush()
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGINT)
    raise SystemExit(130)     # only where SIGINT is blocked: its shell status, CPython's fallback too


# While the modules load (the command line's and its command's), Ctrl-C ends the process at once: a
# KeyboardInterrupt raised inside an extension's import comes out as that extension's ImportError (numpy:
# "PyCapsule_Import could not import module datetime"; matplotlib: "initialization failed").
signal.signal(signal.SIGINT, _end_by_sigint)
from discrete_robot import cli  # noqa: E402  (after the handler, which covers this import)

args = cli.parse()
signal.signal(signal.SIGINT, signal.default_int_handler)
try:
    status = cli.run(args)
except KeyboardInterrupt:
    # Ctrl-C that a command lets end its run.
    _end_by_sigint()
if cli.interrupted_run:
    # Ctrl-C: the summary is written and the sweep's Ray processes are stopped. The interpreter's own teardown
    # (Ray's exit hooks, which talk to the cluster) took 0.3-1.2 s more on a loaded machine, past the 2 s a stop
    # is allowed.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)
sys.exit(status)
