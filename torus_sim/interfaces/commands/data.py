"""``torus-sim data``: the field's logs by name: list them, fetch them into the cache, print a local path or a citation."""

from __future__ import annotations

__all__ = ["NAMES", "add_parser", "main"]

NAMES = ("data",)
"""The subcommand's names."""


def add_parser(commands) -> None:
    """Add ``data`` with its actions ``list``, ``fetch``, ``path`` and ``cite``."""
    data = commands.add_parser(
        "data",
        help="the field's logs by name (pwa:SDSC-SP2, cfdr:LANL, ...): list, fetch into the cache, path, cite",
        description="Registered public logs, fetched by name into the cache (or found in the mirror TORUS_SIM_DATA) "
        "and checked by SHA-256; any --workload or --failures takes the name where it takes a file.",
    )
    actions = data.add_subparsers(dest="action", required=True)
    actions.add_parser("list", help="every registered file: name, size, whether it is here, what it is")
    fetch = actions.add_parser("fetch", help="download (or find in the mirror) and check files")
    fetch.add_argument("names", nargs="*", help="references (default: every one)")
    path = actions.add_parser("path", help="print the local path of a file (fetched first)")
    path.add_argument("name")
    cite = actions.add_parser("cite", help="print a file's origin, licence and the citation its owners ask for")
    cite.add_argument("name")


def main(args) -> int:
    """``torus-sim data ACTION``: exit 0; errors (an unknown name, a failed download, a wrong hash) reach the caller.

    Raises:
        ConfigurationError: an unknown name.
        InputFileError: a file that cannot be fetched or does not match its hash.
    """
    from torus_sim.inputs.datasets import DATASETS, MIRROR_VARIABLE, bundled_copy, cache_folder, dataset, fetch, local_copy

    if args.action == "list":
        print(f"files kept in {cache_folder()} ({MIRROR_VARIABLE} names a mirror instead)")
        for entry in DATASETS.values():
            local = local_copy(entry.name)
            here = "missing" if local is None else "bundled" if local == bundled_copy(entry.name) else "here   "
            print(f"{entry.name:28s} {entry.kind:9s} {entry.size / 1e6:6.2f} MB  {here}  {entry.description}")
        return 0
    if args.action == "fetch":
        for name in args.names or list(DATASETS):
            entry = dataset(name)
            path = fetch(name)
            checked = "shipped with torus-sim" if path == bundled_copy(name) else f"SHA-256 {entry.sha256[:12]}... checked"
            print(f"{entry.name}: {path} ({checked})")
        return 0
    if args.action == "path":
        print(fetch(args.name))
        return 0
    entry = dataset(args.name)
    print(f"{entry.name}: {entry.description}")
    print(f"  home:     {entry.home}")
    print(f"  origin:   {entry.url}")
    print(f"  size:     {entry.size:,} B, SHA-256 {entry.sha256}")
    print(f"  licence:  {entry.licence}")
    print(f"  cite:     {entry.citation}")
    return 0
