"""Entry point of ``python -m discrete_robot``."""

import os
import signal
import sys

try:
    from discrete_robot import cli

    status = cli.main()
except KeyboardInterrupt:
    # Ctrl-C that no command caught: while the modules load, or a command that lets it end the run. One line, not
    # a traceback, and then ended by the signal, as Python ends on an uncaught KeyboardInterrupt, so a shell or a
    # script sees a Ctrl-C (status 130, or −2 to a parent in Python).
    print("interrupted", file=sys.stderr)
    sys.stdout.flush()
    sys.stderr.flush()
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGINT)
    raise SystemExit(130) from None     # only where SIGINT is blocked: its shell status, CPython's fallback too
if cli.interrupted_run:
    # Ctrl-C: the summary is written and the sweep's Ray processes are stopped. The interpreter's own teardown
    # (Ray's exit hooks, which talk to the cluster) took 0.3-1.2 s more on a loaded machine, past the 2 s a stop
    # is allowed.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)
sys.exit(status)
