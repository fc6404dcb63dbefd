"""Ctrl-C in ``python -m discrete_robot``: the two SIGINT handlers its phases use (standard library only: installed
before anything else loads).

While the modules load, :func:`end_by_sigint` ends the process at once. During a command's run, :func:`interrupt`
raises KeyboardInterrupt, so a command may keep what it has done (a sweep writes its summary), except inside an
import: a KeyboardInterrupt raised while an extension starts comes out as that extension's ImportError
(numpy: "PyCapsule_Import could not import module datetime"; matplotlib: "initialization failed"), and libraries
that probe an optional module catch it and go on (numba at its first kernel call, numba/np/linalg.py:
``import scipy.linalg.cython_blas`` in ``try/except ImportError``; tqdm's multiprocessing lock): the Ctrl-C was
lost, and a 10⁸-step ``discrete simulate`` ran on. There the process ends at once too.
"""

import os
import signal
import sys

#: the files of the import machinery's frames (CPython's frozen importlib)
_IMPORT_FRAMES = ("<frozen importlib._bootstrap>", "<frozen importlib._bootstrap_external>")


def end_by_sigint(*_):
    """Print one line and end by SIGINT, as Python ends on an uncaught KeyboardInterrupt, so a shell or a script
    sees a Ctrl-C (status 130, or −2 to a parent in Python)."""
    print("interrupted", file=sys.stderr)
    sys.stdout.flush()
    sys.stderr.flush()
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGINT)
    raise SystemExit(130)     # only where SIGINT is blocked: its shell status, CPython's fallback too


def interrupt(signum, frame):
    """KeyboardInterrupt, as Python's default handler raises, unless the signal landed inside an import (a frame of
    the import machinery on the stack): then :func:`end_by_sigint`."""
    while frame is not None:
        if frame.f_code.co_filename in _IMPORT_FRAMES:
            end_by_sigint()
        frame = frame.f_back
    raise KeyboardInterrupt
