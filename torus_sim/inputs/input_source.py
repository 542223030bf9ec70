"""What an input source is to the registry that selects it from a short text: a name, ``name:argument``, a file.

:class:`InputSource` is the base of the workload sources (:mod:`torus_sim.inputs.workload.sources`) and the
failure sources (:mod:`failure_logs.sources`); :meth:`torus_sim.inputs.input_registry.InputRegistry.select` reads its
attributes, and :func:`file_head` gives a file's first bytes to the sources' ``sniff``.
"""

from __future__ import annotations

import os

__all__ = ["InputSource", "file_head"]


class InputSource:
    """Base of the input kinds a short text selects (workload and failure sources): what :meth:`~torus_sim.inputs.input_registry.InputRegistry.select` reads.

    Attributes a subclass sets:
        name: its registry name (the scenario's text, or the part before ``:``).
        takes_argument, argument_form: the text is ``name:argument`` (``moldable:mix``, ``synthetic:4000``);
            ``argument_form`` says what the argument is, for messages and help.
        reads_file: it reads a file (the path, or its argument): a sweep reads it once before any run.
        suffixes: file-name endings it reads (a path goes to the source whose suffix matches).
        fallback: a path no source claims by suffix or content goes to it.

    Hooks a subclass overrides:
        sniff(head) -> bool (classmethod): whether a file's first 4 KiB look like its format.

    Args:
        argument: the text after ``name:``, or a file's path (None for a plain name).
    """

    name = "input"
    takes_argument = False
    argument_form = ""
    reads_file = False
    suffixes: tuple[str, ...] = ()
    fallback = False
    info = None  # PluginInfo: where it came from (set by the registry)

    def __init__(self, argument: str | None = None) -> None:
        self.argument = argument

    @classmethod
    def sniff(cls, head: bytes) -> bool:
        """Whether a file starting with ``head`` is in this source's format (False: never claimed by content)."""
        return False

    @property
    def path(self) -> str | None:
        """The file the input comes from, or None (a generated input, a bundled one)."""
        return self.argument if self.reads_file else None


def file_head(path: str, size: int = 4096) -> bytes | None:
    """The first ``size`` bytes of a file, decompressed (gzip, xz, bzip2); None when it cannot be read."""
    import bz2
    import gzip
    import lzma

    if not os.path.isfile(path):  # missing (the reader says so), a FIFO or a device (never opened here)
        return None
    try:
        with open(path, "rb") as probe:
            magic = probe.read(6)
        opener = (
            gzip.open
            if magic.startswith(b"\x1f\x8b")
            else lzma.open
            if magic.startswith(b"\xfd7zXZ")
            else bz2.open
            if magic.startswith(b"BZh")
            else open
        )
        with opener(path, "rb") as handle:
            return handle.read(size)
    except (OSError, EOFError, lzma.LZMAError, ValueError):
        return None
