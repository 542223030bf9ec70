"""The site's generated reference pages: the command line from its argument parser, the scenario fields from their model.

    python docs/make_reference.py           # rewrite docs/reference/cli.md and docs/reference/scenario.md
    python docs/make_reference.py --check   # exit 1 if either differs from what the code makes (tests run it)

``docs/outputs.md`` is made the same way by ``python -m torus_sim.outputs.output_columns``.
"""

from __future__ import annotations

import argparse
import os
import sys
import typing
from pathlib import Path

HERE = Path(__file__).resolve().parent
WIDTH = "100"
"""The help's width in columns (fixed: the page is the same on every terminal)."""


def cli_markdown() -> str:
    """docs/reference/cli.md: every subcommand's ``--help``, in the order ``torus-sim --help`` lists them."""
    previous = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = WIDTH
    import torus_sim.inputs.registry as registry

    installed = registry.installed_entry_points
    # the reference describes this package alone: a plug-in installed beside it (the examples package) adds nothing
    registry.installed_entry_points = lambda group: tuple(
        point for point in installed(group) if point.dist is not None and point.dist.name == "torus-sim"
    )
    try:
        from torus_sim.interfaces.cli import build_parser

        parser = build_parser()
        subparsers = next(action for action in parser._actions if isinstance(action, argparse._SubParsersAction))
        lines = [
            "# Command line",
            "",
            "Made by `python docs/make_reference.py` from the argument parser (`torus_sim/interfaces/cli.py`, one module per",
            "subcommand under `torus_sim/interfaces/commands/`); a test checks that it is current. Every option of `run` is a",
            "scenario field ([scenario fields](scenario.md)).",
            "",
            "```text",
            parser.format_help().rstrip(),
            "```",
            "",
        ]
        seen = set()
        for name, sub in subparsers.choices.items():
            if id(sub) in seen:
                continue
            seen.add(id(sub))
            lines += [f"## torus-sim {name}", "", "```text", sub.format_help().rstrip(), "```", ""]
            nested = [action for action in sub._actions if isinstance(action, argparse._SubParsersAction)]
            for group in nested:
                for action_name, action_parser in group.choices.items():
                    lines += [
                        f"### torus-sim {name} {action_name}",
                        "",
                        "```text",
                        action_parser.format_help().rstrip(),
                        "```",
                        "",
                    ]
        return "\n".join(lines).rstrip() + "\n"
    finally:
        registry.installed_entry_points = installed
        if previous is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = previous


def _type_text(annotation) -> str:
    """A field's type as a reader writes it: ``int``, ``float or none``, ``text``, ``one of a, b``."""
    origin = typing.get_origin(annotation)
    if origin is typing.Literal:
        return "one of " + ", ".join(f"`{value}`" for value in typing.get_args(annotation))
    if origin in (typing.Union, getattr(__import__("types"), "UnionType", None)):
        return " or ".join(_type_text(argument) for argument in typing.get_args(annotation))
    names = {str: "text", int: "integer", float: "number", bool: "true / false", type(None): "none", dict: "table"}
    if annotation in names:
        return names[annotation]
    if origin in (list, tuple):
        return "list"
    if origin is dict:
        return "table"
    return getattr(annotation, "__name__", str(annotation))


def scenario_markdown() -> str:
    """docs/reference/scenario.md: every scenario field by section, with its type, default and meaning."""
    from torus_sim.experiments.scenario import SECTIONS, Scenario

    lines = [
        "# Scenario fields",
        "",
        "Made by `python docs/make_reference.py` from the scenario's pydantic model (`torus_sim/experiments/scenario.py`); a test",
        "checks that it is current. A scenario file groups the fields in these sections (`[platform]`, `[workload]`,",
        "...); a sweep's `[grid]` and `[[case]]` name them flat; `torus-sim run` takes each as an option",
        "(`load_scale` is `--load-scale`). A wrong type or an unknown key is refused with a sentence naming it.",
        "",
    ]
    fields = Scenario.model_fields
    for section, members in SECTIONS.items():
        lines += [f"## [{section}]", "", "| field | type | default | meaning |", "|---|---|---|---|"]
        for name in members:
            info = fields[name]
            default = info.get_default(call_default_factory=True)
            shown = "none" if default is None else f"`{default}`"
            meaning = (info.description or "").replace("|", "\\|")
            lines.append(f"| `{name}` | {_type_text(info.annotation)} | {shown} | {meaning} |")
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


PAGES = {"reference/cli.md": cli_markdown, "reference/scenario.md": scenario_markdown}
"""Each generated page and the function that makes it."""


def main(argv: list[str] | None = None) -> int:
    """Rewrite the generated pages, or with ``--check`` compare them (exit 1 naming those that differ)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare with the committed pages, write nothing")
    args = parser.parse_args(argv)
    stale = []
    for page, make in PAGES.items():
        path = HERE / page
        text = make()
        if args.check:
            if not path.is_file() or path.read_text(encoding="utf-8") != text:
                stale.append(page)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
    for page in stale:
        print(f"docs/{page} is not what the code makes: python docs/make_reference.py")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
