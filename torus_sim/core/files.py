"""File helpers shared by every stage: content hashes, input files read whole or refused, all-or-nothing writes."""

from __future__ import annotations

import bz2
import gzip
import hashlib
import json
import lzma
import math
import os
import shutil
import tempfile
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO

from torus_sim.core.errors import InputFileError

__all__ = [
    "PACKAGE_ROOT",
    "RESULT_NAMES",
    "atomic_write",
    "check_output_folder",
    "check_text_input",
    "file_sha256",
    "input_lines",
    "input_text",
    "json_text",
    "portable_text",
    "recorded_file",
    "require_file",
    "sidecar_path",
    "write_folder",
]

_COMPRESSIONS = (  # (magic bytes, name, opener)
    (b"\x1f\x8b", "gzip", gzip.open),
    (b"\xfd7zXZ\x00", "xz", lzma.open),
    (b"BZh", "bzip2", bz2.open),
)
_DECOMPRESSION_ERRORS = (EOFError, OSError, zlib.error, lzma.LZMAError)  # gzip.BadGzipFile is an OSError


def sidecar_path(log: str | Path, suffix: str) -> Path:
    """The file written beside an SWF log: ``mine.swf`` (or ``mine.swf.gz``) -> ``mine<suffix>``, in the same folder.

    The name ``torus-sim convert`` gives the tables beside the log it writes (``.resources.csv``, ``.report.txt``), and
    the name a reader looks for.

    Args:
        log: the log's path.
        suffix: what replaces ``.swf`` / ``.swf.gz`` (appended to any other name).
    """
    log = Path(log)
    for ending in (".swf.gz", ".swf"):
        if log.name.endswith(ending):
            return log.with_name(log.name[: -len(ending)] + suffix)
    return log.with_name(log.name + suffix)


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
        if path.is_symlink():
            raise InputFileError(path, f"is a symbolic link that leads nowhere (a loop or a missing target), not a {what} file")
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
    path = check_text_input(path, what)
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


def check_text_input(path: str | Path, what: str = "input") -> Path:
    """``path`` as a Path when it names a regular file whose first bytes (decompressed) could be text.

    Reads at most the first 64 KiB (decompressed), never the whole file: a reader that hashes or parses a file calls
    it first, so a binary or sparse file of any size is refused at once (:func:`input_lines` calls it too).

    Args:
        path: the file.
        what: what the file is for (for the messages).

    Returns:
        The path.

    Raises:
        FileNotFoundError: no such file.
        InputFileError: a directory or another non-file; zstd-compressed data, UTF-16 text or NUL bytes in its first
            bytes; compressed data whose start is truncated or corrupt.
    """
    path = require_file(path, what)
    name, opener = _compression(path)
    if opener is None:
        with open(path, "rb") as probe:
            _sniff(path, probe.read(_SNIFF_BYTES), what)
        return path
    try:
        with opener(path, "rb") as probe:
            _sniff(path, probe.read(_SNIFF_BYTES), what, name)
    except _DECOMPRESSION_ERRORS as error:
        raise InputFileError(path, f"truncated or corrupt {name} file ({error})") from None
    return path


_SNIFF_BYTES = 1 << 16


def _sniff(path: Path, head: bytes, what: str, compression: str | None = None) -> None:
    """Refuse content that is not text from its first bytes, saying what it is (never reading a whole binary file).

    Raises:
        InputFileError: zstd-compressed data, UTF-16 text, or NUL bytes (binary data, a sparse file).
    """
    inside = f" (inside the {compression} compression)" if compression else ""
    if head.startswith(b"\x28\xb5\x2f\xfd"):
        raise InputFileError(
            path, f"is zstd-compressed{inside}, which is not read: decompress it (zstd -d) or use gzip, xz or bzip2"
        )
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise InputFileError(path, f"is UTF-16 text{inside}: convert it to UTF-8 (iconv -f UTF-16 -t UTF-8)")
    if b"\x00" in head:
        raise InputFileError(path, f"holds binary data (NUL bytes){inside}, not the text of a {what} file")


def input_text(path: str | Path, what: str = "input") -> str:
    """The whole text of an input file (see :func:`input_lines`): decompressed, or refused with the file's name.

    Raises:
        FileNotFoundError: no such file.
        InputFileError: a directory, or truncated or corrupt compressed data.
    """
    return "".join(input_lines(path, what))


def _finite(value):
    """``value`` with every NaN or infinite float (numpy's too) replaced by None, recursively."""
    if isinstance(value, float) or (hasattr(value, "dtype") and getattr(value, "shape", None) == () and value.dtype.kind == "f"):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(item) for item in value]
    return value


def json_text(value, **options) -> str:
    """Strict JSON text of ``value``: NaN and infinities (no JSON number) written as ``null``.

    Python's ``json`` writes ``NaN`` and ``Infinity`` by default, which strict parsers (JavaScript's
    ``JSON.parse``, ``jq``, Go) refuse; a metric without a value (a mean over no job) is ``null``.

    Args:
        value: dicts, lists, numbers, text (other objects through ``default``, as ``json.dumps``).
        **options: passed to ``json.dumps`` (``indent``, ``sort_keys``, ``default``).

    Returns:
        The text.
    """
    return json.dumps(_finite(value), allow_nan=False, **options)


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
    staged = _staged(path, write, binary)
    try:
        os.replace(staged, path)
    except BaseException:
        staged.unlink(missing_ok=True)
        raise
    return path


def _umask() -> int:
    """The process's umask (read without changing it for longer than two calls)."""
    umask = os.umask(0)
    os.umask(umask)
    return umask


def _staged(path: Path, write: Callable[[IO], None], binary: bool = False) -> Path:
    """A hidden temporary file beside ``path`` holding the content, on disk (fsynced), with the umask's mode.

    Raises:
        OSError: the content could not be written (a full disk, a quota); nothing is left behind.
    """
    text = {} if binary else {"newline": "", "encoding": "utf-8"}
    handle = tempfile.NamedTemporaryFile(
        "wb" if binary else "w", dir=path.parent, prefix=f".{path.name}.", suffix=".tmp", delete=False, **text
    )
    try:
        with handle:
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(handle.name, 0o666 & ~_umask())  # as open() would create it, not the temp file's 0600
    except BaseException:
        Path(handle.name).unlink(missing_ok=True)
        raise
    return Path(handle.name)


PACKAGE_ROOT = Path(__file__).resolve().parents[2]
"""The folder holding the installed packages (``torus_sim``, ``failure_logs``, ...): site-packages, or a checkout."""


def portable_text(text):
    """A text without this machine's path to the installed packages.

    A bundled input's path is then the same on every machine: what a run prints and records (the guide: no absolute
    path of this machine in a result).

    Args:
        text: a path, or a description that names paths (a failure source's ``path|fit=...``); any other value.

    Returns:
        ``text`` with every path under :data:`PACKAGE_ROOT` written relative to it (``torus_sim/inputs/data/NASA-...swf.gz``);
        anything that is not a string as it is.
    """
    if not isinstance(text, str):
        return text
    return text.replace(f"{PACKAGE_ROOT}{os.sep}", "")


def recorded_file(text: str) -> Path:
    """The file a recorded path names (:func:`portable_text`'s inverse for a file).

    Args:
        text: a path as a run recorded it.

    Returns:
        The path as it is when absolute or present here, else under :data:`PACKAGE_ROOT`.
    """
    path = Path(text)
    return path if path.is_absolute() or path.exists() else PACKAGE_ROOT / path


RESULT_NAMES = (
    "jobs.csv",
    "summary.json",
    "scenarios.csv",
    "batsim_jobs.csv",
    "schedule.swf",
    "relogged.swf",
    "jobs.parquet",
    "scenarios.parquet",
    "batsim_jobs.parquet",
    "against_log.json",
    "against_log.png",
)
"""The files a run may write into its output folder (a run removes those of an earlier run it does not write)."""


def check_output_folder(path: str | Path, names: tuple[str, ...] = RESULT_NAMES) -> Path:
    """Refuse an output folder that cannot take a run's results, before anything is simulated.

    Args:
        path: the folder (created later, with its parents, if missing).
        names: the files the run will write there; none may be a folder.

    Returns:
        The folder as a Path.

    Raises:
        InputFileError: an empty path, the file-system root, a path that is (or lies under) a file or a
            device, a result name that is a folder, or a place where nothing can be created.
    """
    text = str(path)
    if not text.strip():
        raise InputFileError(text, "the output folder is empty: give --out a folder")
    folder = Path(text).expanduser()
    try:
        resolved = folder.resolve()
    except (RuntimeError, OSError) as error:  # Python 3.11: RuntimeError("Symlink loop ...")
        raise InputFileError(folder, f"the output folder cannot be resolved: a symbolic-link loop ({error})") from None
    if folder.is_symlink() and not folder.exists():
        raise InputFileError(folder, "the output folder is a symbolic link that leads nowhere (a loop or a missing target)")
    if resolved == Path(resolved.anchor):
        raise InputFileError(folder, "the output folder is the file-system root: give --out a folder of its own")
    if folder.exists() and not folder.is_dir():
        raise InputFileError(folder, "the output folder is a file (or a device), not a folder")
    ancestor = folder
    while not ancestor.exists():
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        raise InputFileError(folder, f"the output folder lies under {ancestor}, which is a file")
    for name in names:
        if (folder / name).is_dir():
            raise InputFileError(folder / name, "a result file of this name would replace a folder")
    try:
        probe = tempfile.mkdtemp(dir=ancestor, prefix=".torus-sim-probe-")
        os.rmdir(probe)
    except OSError as error:
        raise InputFileError(folder, f"cannot write there: {error.strerror or error}") from None
    return folder


def _name_the_folder(error: BaseException, folder: Path) -> None:
    """Give an OSError without a file name (``No space left on device`` from a write) the folder's."""
    if isinstance(error, OSError) and error.filename is None:
        error.filename = str(folder)


def _write_content(path: Path, content) -> None:
    """Write ``content`` (bytes, or a function that writes to a binary handle) to a new file at ``path``."""
    if callable(content):
        with open(path, "wb") as handle:
            content(handle)
    else:
        path.write_bytes(content)


def write_folder(
    folder: str | Path, files: dict[str, bytes], last: str | None = None, replaces: tuple[str, ...] = ()
) -> dict[str, Path]:
    """Write a set of files into ``folder`` so that a reader never finds a mix of two runs, and a failure loses nothing.

    A new folder is written whole in a hidden sibling and renamed into place in one step (with the
    mode the user's umask gives a new folder). Into an existing folder, every file is first written
    beside its destination under a hidden name and flushed to disk; only when all are there is
    ``last`` (the manifest) removed, the files of ``replaces`` that this set does not hold removed (an
    earlier run's results), each new file renamed into place, and ``last`` put back last. A failure
    while writing (a full disk) leaves the folder as it was; a run killed during the renames leaves a
    folder without its manifest (read it as absent). Other files in the folder are never touched.

    Args:
        folder: the destination folder.
        files: file name -> content: bytes, or a function that writes them to a binary handle (a table
            written piece by piece; it is the project's own code, never something read from an input).
        last: the name written last (the manifest), if any.
        replaces: names of an earlier set this set replaces as a whole (e.g. :data:`RESULT_NAMES`).

    Returns:
        file name -> path written.

    Raises:
        OSError: the files could not be written (nothing was changed; the message names the file).
    """
    folder = Path(folder)
    order = [name for name in files if name != last] + ([last] if last in files else [])
    if not folder.exists():
        folder.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(dir=folder.parent, prefix=f".{folder.name}.tmp-"))
        try:
            for name in order:
                _write_content(staging / name, files[name])
                os.chmod(staging / name, 0o666 & ~_umask())
            os.chmod(staging, 0o777 & ~_umask())  # mkdtemp makes it 0700
            os.rename(staging, folder)
        except BaseException as error:
            shutil.rmtree(staging, ignore_errors=True)
            _name_the_folder(error, folder)
            raise
        return {name: folder / name for name in order}
    staged: dict[str, Path] = {}
    try:
        for name in order:
            staged[name] = _staged(
                folder / name,
                lambda handle, data=files[name]: data(handle) if callable(data) else handle.write(data),
                binary=True,
            )
    except BaseException as error:
        for path in staged.values():
            path.unlink(missing_ok=True)
        _name_the_folder(error, folder)
        raise
    if last is not None and (folder / last).exists():
        (folder / last).unlink()
    for name in replaces:
        if name not in files and name != last:
            (folder / name).unlink(missing_ok=True)
    for name in order:
        os.replace(staged[name], folder / name)
    return {name: folder / name for name in order}
