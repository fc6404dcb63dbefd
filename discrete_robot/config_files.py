"""Start-up files read defensively, once, in one place: model, scene and parameter files.

Every file a node or the CLI loads at start-up goes through :func:`read_text` (the bytes) and, for YAML,
:func:`parse_yaml` (the structure); :func:`load_yaml` does both; :func:`regular_file` checks a file that a
library opens itself (xacro) and a path before it is handed to a loader. Model loaders
(``model.description.load_model``, its URDF and xacro readers) and scene loaders call these instead of
``Path.read_text`` / ``yaml.safe_load``, so every start-up file is refused the same way, in one line naming the
file and the reason:

- only a regular file: a FIFO, a device (``/dev/zero``), a socket or a directory is refused without ever
  blocking (the file is opened with ``O_NONBLOCK``, so opening a FIFO with no writer returns at once, and the
  open descriptor is checked with ``fstat`` before a byte is read);
- at most :data:`MAX_FILE_BYTES` (a 100 MB file is refused after reading one byte past the limit, not read whole);
- UTF-8 text (a file in another encoding is refused naming the byte offset, not a UnicodeDecodeError);
- YAML nested at most :data:`MAX_NESTING` deep (checked on the parser's event stream, which is iterative,
  before PyYAML's recursive composer would raise RecursionError on a 10⁵-deep document);
- no YAML aliases (``*name``, with the merge key ``<<: *name``), refused on the same event stream before anything
  is built: PyYAML shares an alias's node, but whoever walks the result (a JSON dump, numpy, a copy) expands it,
  and a 501-byte "billion laughs" document then grew a sweep to 3.6 GB. No shipped file uses one;
- integers of at most 4300 digits (Python's own limit on converting text, which PyYAML would raise as a bare
  ValueError).

Errors are :class:`~discrete_robot.errors.ModelError`, which the nodes report as a one-line start-up failure.
"""

import os
import stat
from pathlib import Path

import yaml

from discrete_robot.errors import ModelError

#: the largest start-up file read, bytes (the shipped models and scenes are a few kB; a URDF with inline meshes
#: stays well below)
MAX_FILE_BYTES = 10 * 2 ** 20
#: the deepest YAML nesting accepted (model files nest 4-5 levels)
MAX_NESTING = 64

try:    # libyaml's parser when it is built in: the same events, ten times faster on a large file
    _LOADER = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - PyYAML without libyaml
    _LOADER = yaml.SafeLoader


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "not a regular file"


def _open_regular(path: Path, what: str) -> int:
    """A read-only descriptor of the regular file ``path``, opened without blocking (O_NONBLOCK: a FIFO with no
    writer opens at once) and checked with fstat before any read; ModelError naming ``what`` otherwise."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | getattr(os, "O_CLOEXEC", 0))
    except OSError as error:
        raise ModelError(f"{what} {path}: cannot be read ({error.strerror or error})") from None
    mode = os.fstat(descriptor).st_mode
    if not stat.S_ISREG(mode):
        os.close(descriptor)
        raise ModelError(f"{what} {path}: {_kind(mode)}, not a regular file")
    return descriptor


def _too_large(path: Path, what: str, limit: int) -> ModelError:
    return ModelError(f"{what} {path}: larger than {limit} bytes ({limit / 2 ** 20:g} MB), the most a start-up "
                      "file may hold")


def regular_file(path, what: str = "file", limit: int = MAX_FILE_BYTES) -> Path:
    """``path`` when it names a regular file of at most ``limit`` bytes (checked without reading it or blocking
    on it), for a reader that opens the file itself (xacro); ModelError naming ``what`` otherwise."""
    path = Path(path)
    descriptor = _open_regular(path, what)
    try:
        size = os.fstat(descriptor).st_size
    finally:
        os.close(descriptor)
    if size > limit:
        raise _too_large(path, what, limit)
    return path


def read_bytes(path, what: str = "file", limit: int = MAX_FILE_BYTES) -> bytes:
    """The bytes of the regular file ``path`` (at most ``limit``); ModelError naming ``what`` and the reason.

    Never blocks on a FIFO or a device: the open is non-blocking and the descriptor's type is checked before
    any read; a file growing past the limit is read only to one byte past it."""
    path = Path(path)
    descriptor = _open_regular(path, what)
    try:
        with os.fdopen(descriptor, "rb", closefd=False) as stream:
            data = stream.read(limit + 1)
    except OSError as error:
        raise ModelError(f"{what} {path}: cannot be read ({error.strerror or error})") from None
    finally:
        os.close(descriptor)
    if len(data) > limit:
        raise _too_large(path, what, limit)
    return data


def read_text(path, what: str = "file", limit: int = MAX_FILE_BYTES) -> str:
    """The UTF-8 text of the regular file ``path`` (:func:`read_bytes`); ModelError when it is not UTF-8."""
    data = read_bytes(path, what, limit)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ModelError(f"{what} {path}: not UTF-8 text (byte {error.start}: {data[error.start]:#04x})") from None


def parse_yaml(text: str, source: str, max_nesting: int = MAX_NESTING):
    """The YAML document ``text`` as plain data (safe loader); ModelError naming ``source`` for invalid YAML,
    nesting deeper than ``max_nesting`` or an alias (module docstring)."""
    try:
        depth = 0
        for event in yaml.parse(text, Loader=_LOADER):
            if isinstance(event, yaml.AliasEvent):
                line = event.start_mark.line + 1 if event.start_mark is not None else "?"
                raise ModelError(f"{source}: YAML aliases are not accepted (*{event.anchor}, line {line}): write "
                                 "the value out")
            if isinstance(event, yaml.CollectionStartEvent):
                depth += 1
                if depth > max_nesting:
                    line = event.start_mark.line + 1 if event.start_mark is not None else "?"
                    raise ModelError(f"{source}: nested deeper than {max_nesting} levels (line {line})")
            elif isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
        return yaml.load(text, Loader=_LOADER)   # noqa: S506  (a safe loader: CSafeLoader or SafeLoader)
    except ModelError:
        raise
    except (yaml.YAMLError, ValueError) as error:     # ValueError: an integer past Python's 4300 digits
        raise ModelError(f"{source}: invalid YAML ({' '.join(str(error).split())})") from None


def load_yaml(path, what: str = "file"):
    """A start-up YAML file read and parsed defensively (:func:`read_text`, :func:`parse_yaml`)."""
    return parse_yaml(read_text(path, what), f"{what} {path}")
