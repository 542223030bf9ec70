"""File helpers shared by every stage: content hashes, input files read whole or refused, all-or-nothing writes."""

from __future__ import annotations

import bz2
import gzip
import hashlib
import lzma
import os
import tempfile
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO

from torus_sim.errors import InputFileError

__all__ = ["atomic_write", "file_sha256", "input_lines", "input_text", "require_file"]

_COMPRESSIONS = (  # (magic bytes, name, opener)
    (b"\x1f\x8b", "gzip", gzip.open),
    (b"\xfd7zXZ\x00", "xz", lzma.open),
    (b"BZh", "bzip2", bz2.open),
)
_DECOMPRESSION_ERRORS = (EOFError, OSError, zlib.error, lzma.LZMAError)  # gzip.BadGzipFile is an OSError


def require_file(path: str | Path, what: str = "input") -> Path:
    """``path`` as a Path when it names a readable regular file.

    Args:
        path: the file.
        what: what the file is for, used in the messages ("workload", "failure log", ...).

    Raises:
        FileNotFoundError: nothing at ``path`` (the message names the file and what it is for).
        InputFileError: ``path`` is a directory or another non-file.
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{what} file not found: {path}")
    if path.is_dir():
        raise InputFileError(path, f"is a directory, not a {what} file")
    if not path.is_file():
        raise InputFileError(path, f"is not a regular file (a {what} file was expected)")
    return path


def _compression(path: Path) -> tuple[str, Callable] | tuple[None, None]:
    with open(path, "rb") as probe:
        magic = probe.read(6)
    for prefix, name, opener in _COMPRESSIONS:
        if magic.startswith(prefix):
            return name, opener
    return None, None


def input_lines(path: str | Path, what: str = "input") -> Iterator[str]:
    """The text lines of an input file, plain or compressed (gzip, xz, bzip2, told by their magic bytes).

    Bytes that are not UTF-8 are replaced (U+FFFD), so a binary file reaches the caller's parser,
    which refuses its lines by number.

    Args:
        path: the file.
        what: what the file is for (for the messages).

    Yields:
        Each line with its end of line.

    Raises:
        FileNotFoundError: no such file.
        InputFileError: a directory, or compressed data that is truncated or corrupt (raised where
            the reading reaches it; lines before it were yielded).
    """
    path = require_file(path, what)
    name, opener = _compression(path)
    if opener is None:
        with open(path, encoding="utf-8", errors="replace") as handle:
            yield from handle
        return
    try:
        with opener(path, "rt", encoding="utf-8", errors="replace") as handle:
            yield from handle
    except _DECOMPRESSION_ERRORS as error:
        raise InputFileError(path, f"truncated or corrupt {name} file ({error})") from None


def input_text(path: str | Path, what: str = "input") -> str:
    """The whole text of an input file (see :func:`input_lines`): decompressed, or refused with the file's name.

    Raises:
        FileNotFoundError: no such file.
        InputFileError: a directory, or truncated or corrupt compressed data.
    """
    return "".join(input_lines(path, what))


def file_sha256(path: str | Path) -> str:
    """Hex SHA-256 of a file's bytes as stored (for run manifests).

    Raises:
        FileNotFoundError: no such file.
    """
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def atomic_write(path: str | Path, write: Callable[[IO], None], binary: bool = False) -> Path:
    """Write a text (or binary) file so that it either appears whole or not at all.

    The content goes to a temporary file in the same folder, is flushed to disk, and is then
    renamed over ``path`` (an atomic rename on POSIX). If ``write`` raises, the temporary file
    is removed and ``path`` is left as it was.

    Args:
        path: the destination.
        write: called with the open handle (text, or bytes with ``binary``); writes the content.
        binary: open the temporary file in binary mode.

    Returns:
        The destination path.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    text = {} if binary else {"newline": "", "encoding": "utf-8"}
    handle = tempfile.NamedTemporaryFile(
        "wb" if binary else "w", dir=path.parent, prefix=f".{path.name}.", suffix=".tmp", delete=False, **text
    )
    try:
        with handle:
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(handle.name, 0o666 & ~umask)  # as open() would create it, not the temp file's 0600
        os.replace(handle.name, path)
    except BaseException:
        Path(handle.name).unlink(missing_ok=True)
        raise
    return path
