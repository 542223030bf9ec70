"""The ``torus-sim`` command line: one ``run`` and one ``sweep`` for every platform, workload and policy.

``torus-sim run`` with no arguments replays the bundled NASA iPSC/860 log with the bundled BG/L
RAS failures on the 4x4x8 torus under Krevat's scheduler, prints the summary, and writes
``jobs.csv`` and ``summary.json`` into ``--out``. ``torus-sim run FILE`` runs a scenario file;
options given next to it replace the file's values. ``torus-sim sweep FILE`` runs a file's grid on
any executor and draws its figures.
"""

from __future__ import annotations

import argparse
import os
import sys

from torus_sim.core.errors import TorusSimError
from torus_sim.interfaces.commands import SUBCOMMANDS, removed

__all__ = ["build_parser", "command", "main"]


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``torus-sim``: one subparser per subcommand (:data:`torus_sim.interfaces.commands.SUBCOMMANDS`)."""
    parser = argparse.ArgumentParser(
        prog="torus-sim", description="Job scheduling on failure-prone machines: the BlueGene/L torus and clusters."
    )
    subparsers = parser.add_subparsers(dest="command", required=True)
    for command in SUBCOMMANDS:
        command.add_parser(subparsers)
    return parser


def _line_buffered(stream) -> None:
    """Flush ``stream`` at each line even when it is a file or a pipe (no-op where it cannot be reconfigured)."""
    try:
        stream.reconfigure(line_buffering=True)
    except (AttributeError, ValueError, OSError):
        pass


def main(argv: list[str] | None = None) -> int:
    """Run the command line.

    Returns:
        0 on success, 2 on bad input or configuration, on an extension that failed or on an output that
        could not be written (with the reason on stderr, never a traceback), 130 on Ctrl-C (one line;
        a run writes nothing, a sweep keeps the runs it finished).
    """
    argv = sys.argv[1:] if argv is None else list(argv)
    import warnings

    warnings.formatwarning = _warning_line  # one line each: "torus-sim: warning: ...", no source line
    _line_buffered(sys.stdout)  # a run's header reaches a log file or a pipe when printed, not at exit
    if argv and argv[0] in removed.NAMES:  # removed commands: whatever follows, even --help, gets the new form
        return removed.main(argparse.Namespace(command=argv[0], rest=argv[1:]))
    args = build_parser().parse_args(argv)
    chosen = next(command for command in SUBCOMMANDS if args.command in command.NAMES)
    try:
        return chosen.main(args)
    except (TorusSimError, FileNotFoundError, IsADirectoryError, PermissionError) as error:
        text = _in_file(str(error), args) if isinstance(error, TorusSimError) else str(error)
        print(f"torus-sim: error: {text}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # the reader of the output went away (``| head``): stop without a traceback
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except OSError as error:  # a full disk, a quota, a read-only file system, a link loop: one sentence
        print(f"torus-sim: error: {_os_error_text(error, args.command == 'run')}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # Ctrl-C (or a plug-in raising KeyboardInterrupt): one line, the shell's 130
        kept = "nothing was written" if args.command == "run" else "finished runs are kept: the same command resumes"
        print(f"torus-sim: interrupted (Ctrl-C): {kept}", file=sys.stderr)
        return 130
    return 0


def command() -> int:
    """The installed ``torus-sim`` command: :func:`main`, then the objects left frozen for the process's exit.

    The process ends when the command returns; the interpreter's last garbage collections would walk every
    object still alive (the modules, the partition table, the run's columns) to find no garbage: ~50 ms
    of the README's main job's 1.5 s. ``gc.freeze()`` (CPython's documented way out of those walks) moves
    them to the permanent generation, which those collections skip (what reference counts do not free as
    the modules are cleared is left to the operating system, as at any exit). :func:`main` itself, called
    from Python (tests, notebooks), leaves the collector as it is.

    Returns:
        :func:`main`'s exit status.
    """
    status = main()
    import gc

    gc.freeze()
    return status


def _os_error_text(error: OSError, whole: bool) -> str:
    """An operating-system error as one sentence: ``runs/out/.jobs.csv.x1.tmp: No space left on device; nothing was written``.

    Args:
        error: the error.
        whole: the command writes all or nothing (``run``), so the sentence can say nothing was written.
    """
    reason = error.strerror or str(error)
    where = f"{error.filename}: " if error.filename is not None else ""
    return f"{where}{reason}" + ("; nothing was written" if whole else "")


def _in_file(text: str, args) -> str:
    """An error about a setting a scenario file gave, checked only once the run reads its log, named with the file.

    Most of a file's settings are refused as it is read, each with the file and its section
    (``site.toml: [limits] max_jobs_per_user: ...``); a few are checked against the log the run replays (a queue
    tier or a partition naming a queue the log does not have). Such a refusal begins with the setting's name: where
    the command's scenario file sets it in its section (and no option replaced it), the file and the section are put
    before it (``site.toml: [priority] priority_queue_tiers names queue 9, ...``).

    Args:
        text: the error's sentence.
        args: the parsed command line (``file``: the scenario file or None; the options by field name).

    Returns:
        The sentence, named with the file and section where the setting is the file's; else as it was.
    """
    import re

    file = getattr(args, "file", None)
    name = re.match(r"[a-z][a-z0-9_]*", text)
    if not file or name is None or text.startswith(str(file)) or getattr(args, name.group(), None) is not None:
        return text
    import tomllib
    from pathlib import Path

    from torus_sim.experiments.scenario import SECTIONS

    section = next((section for section, fields in SECTIONS.items() if name.group() in fields), None)
    try:
        table = tomllib.loads(Path(file).read_text(encoding="utf-8")).get(section) if section else None
    except (OSError, UnicodeError, tomllib.TOMLDecodeError):  # the file read before: changed since, or gone
        return text
    if not isinstance(table, dict) or name.group() not in table:
        return text
    return f"{file}: [{section}] {text}"


def _warning_line(message, category, filename, lineno, line=None) -> str:
    """A warning as the command line shows it: one line, no file, no source."""
    return f"torus-sim: warning: {message}\n"


if __name__ == "__main__":
    sys.exit(command())
