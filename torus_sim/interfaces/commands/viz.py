"""``torus-sim viz``: serve the browser view (Mesa's SolaraViz) on a local port."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from torus_sim.interfaces.commands.arguments import duration

__all__ = ["NAMES", "add_parser", "main"]

NAMES = ("viz",)
"""The subcommand's names."""


def add_parser(commands) -> None:
    """Add ``viz`` (host, port, how long a closed tab's session is kept)."""
    viz_parser = commands.add_parser(
        "viz", help="open the browser visualization (Mesa SolaraViz)", formatter_class=argparse.ArgumentDefaultsHelpFormatter
    )
    viz_parser.add_argument("--host", default="127.0.0.1", help="address to serve on")
    viz_parser.add_argument("--port", type=int, default=8765, help="port to serve on")
    viz_parser.add_argument(
        "--cull-timeout",
        default="2m",
        type=duration,
        help="how long a closed tab's session is kept before its model is freed, e.g. 90s, 2m, 1h (Solara's own default: 24h)",
    )


def main(args) -> int:
    """``torus-sim viz``: serve the browser view; the Solara server replaces this process (2 with a sentence when the port is taken).

    The port is checked before anything starts; a closed tab's session is freed after ``--cull-timeout``
    (:mod:`torus_sim.interfaces.viz.session`); Solara's check for a newer version is off (offline machines, a pinned version);
    the front end is Solara's production build (minified, no file watcher). The command's own process becomes the
    server (``os.execve``) instead of waiting beside it holding its imports.
    """
    import os
    import socket

    try:
        with socket.create_server((args.host, args.port)):
            pass
    except OSError as error:
        print(
            f"torus-sim viz: error: cannot serve on {args.host}:{args.port} ({error.strerror or error}); choose another --port",
            file=sys.stderr,
        )
        return 2
    import importlib.util

    app_path = Path(importlib.util.find_spec("torus_sim.interfaces.viz").origin).with_name(
        "app.py"
    )  # not imported: the server does
    print(
        f"torus-sim viz: serving http://{args.host}:{args.port} (Ctrl-C to stop); "
        f"a closed tab's session is freed after {args.cull_timeout} (--cull-timeout)"
    )
    if args.host not in ("localhost", "127.0.0.1", "::1"):
        print(
            f"torus-sim viz: warning: --host {args.host} makes the page reachable by others on the network "
            "(anyone who reaches it can run simulations on this machine; the controls accept only the choices shown)"
        )
    environment = dict(os.environ, SOLARA_KERNEL_CULL_TIMEOUT=str(args.cull_timeout))
    environment.setdefault("MALLOC_ARENA_MAX", "2")  # glibc: freed session memory returns instead of staying per thread
    command = [sys.executable, "-m", "solara", "run", str(app_path), "--host", args.host, "--port", str(args.port), "--no-open"]
    command.append("--no-check-version")  # offline machines; the version is pinned on purpose
    command.append("--production")  # minified front end, no file watcher or reloader: pages load in half the time
    sys.stdout.flush()
    os.execve(sys.executable, command, environment)  # the server takes this process over: no parent left holding memory
    return 0  # not reached
