"""File helpers shared by every stage: content hashes and all-or-nothing writes."""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import IO

__all__ = ["atomic_write", "file_sha256"]


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


def atomic_write(path: str | Path, write: Callable[[IO[str]], None]) -> Path:
    """Write a text file so that it either appears whole or not at all.

    The content goes to a temporary file in the same folder, is flushed to disk, and is then
    renamed over ``path`` (an atomic rename on POSIX). If ``write`` raises, the temporary file
    is removed and ``path`` is left as it was.

    Args:
        path: the destination.
        write: called with the open text handle; writes the content.

    Returns:
        The destination path.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle = tempfile.NamedTemporaryFile(
        "w", dir=path.parent, prefix=f".{path.name}.", suffix=".tmp", delete=False, newline="", encoding="utf-8"
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
