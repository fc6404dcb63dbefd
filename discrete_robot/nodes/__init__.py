"""ROS 2 nodes: thin layers that translate messages and parameters for the physics core."""

import os as _os
import signal as _signal
import sys as _sys


def _end_on_signal_while_importing() -> None:
    """A node executable (``<name>_node``) stopped while it still imports its modules (seconds on a loaded
    machine: numpy, rclpy, the compiled kernels) ends at once with status 0, not with a KeyboardInterrupt
    traceback or a SIGTERM death; ``nodes.common.init_with_stop_signal`` then installs the running node's
    handlers. Only in a node executable: a test process or the CLI importing this package keeps its own."""
    if _os.path.basename(_sys.argv[0] if _sys.argv else "").endswith("_node"):
        for sig in (_signal.SIGINT, _signal.SIGTERM):
            _signal.signal(sig, lambda *_: _os._exit(0))


_end_on_signal_while_importing()
