"""Entry point of ``python -m discrete_robot``."""

import os
import sys

from discrete_robot import cli

status = cli.main()
if cli.interrupted_run:
    # Ctrl-C: the summary is written and the sweep's Ray processes are stopped. The interpreter's own teardown
    # (Ray's exit hooks, which talk to the cluster) took 0.3-1.2 s more on a loaded machine, past the 2 s a stop
    # is allowed.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)
sys.exit(status)
