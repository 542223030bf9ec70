"""``torus-sim convert``: a batch system's accounting (Slurm's sacct, PBS / Torque) as an SWF log to replay."""

from __future__ import annotations

__all__ = ["NAMES", "add_parser", "main"]

NAMES = ("convert",)
"""The subcommand's names."""


def add_parser(commands) -> None:
    """Add ``convert ACCOUNTING --out LOG.swf`` with ``--from``, ``--fields``, ``--timezone``, ``--max-procs``, ``--max-nodes``."""
    from torus_sim.interfaces.commands.arguments import positive
    from torus_sim.outputs.formats.accounting import FORMATS

    convert = commands.add_parser(
        "convert",
        help="your machine's accounting (sacct --parsable2, PBS / Torque logs) as an SWF log, with a report",
        description=(
            "Convert Slurm's accounting (sacct --parsable2 output, any field order by its header) or a PBS / Torque "
            "accounting log (its E records) into a Standard Workload Format log that --workload takes. Steps fold "
            "into their jobs, array tasks become jobs, users, groups, queues and partitions are renumbered; nodes, "
            "GPUs and memory go into LOG.resources.csv beside it and the report (what was dropped and why, with "
            "line numbers) into LOG.report.txt."
        ),
    )
    convert.add_argument("accounting", help="the accounting file (compressed files are read too)")
    convert.add_argument("--out", required=True, help="the SWF file to write (LOG.swf)")
    convert.add_argument("--from", dest="source", choices=FORMATS, help="the format (default: told from the first line)")
    convert.add_argument(
        "--fields",
        help="sacct's --format list (JobID,Submit,...) for a file written with --noheader; a header line names them otherwise",
    )
    convert.add_argument("--timezone", default="UTC", help="the IANA time zone of the file's wall-clock times (default UTC)")
    convert.add_argument("--max-procs", type=positive, help="the machine's processors, written as the log's MaxProcs")
    convert.add_argument("--max-nodes", type=positive, help="the machine's nodes, written as the log's MaxNodes")


def main(args) -> int:
    """``torus-sim convert``: write LOG.swf, LOG.resources.csv and LOG.report.txt, print the report; exit 0.

    Raises:
        AccountingFormatError: a malformed line (file and line named); nothing is written.
        ConfigurationError: an unknown format or time zone, or no job left to write.
    """
    from torus_sim.outputs.formats.accounting import convert, report_text

    fields = [name for name in args.fields.split(",") if name.strip()] if args.fields else None
    conversion, written = convert(
        args.accounting,
        args.out,
        source=args.source,
        fields=fields,
        timezone=args.timezone,
        max_procs=args.max_procs,
        max_nodes=args.max_nodes,
    )
    print(report_text(conversion), end="")
    for key, path in written.items():
        print(f"  {key}: {path}")
    if args.max_procs is None and args.max_nodes is None:
        print("  the log names no machine size: give --max-procs (or --nodes when you run it)")
    return 0
