"""The scenario's fields as options of ``torus-sim run`` (one per field, grouped by section) and the scenario they give."""

from __future__ import annotations

import argparse
import typing

from torus_sim.core.errors import TorusSimError
from torus_sim.interfaces.commands.arguments import ParameterAction, number_or_text, parameter, value_tuple

__all__ = ["add_scenario_options", "scenario_from"]


def _short_help(field: str) -> str | None:
    """The help of ``--workload`` / ``--failures``: the forms their registries know (built-ins and installed plug-ins).

    Read when the help is printed (:func:`_forms_formatter`): the installed plug-ins' entry points and each
    form's module are not read by a run.
    """
    from torus_sim.experiments.extensions import input_registries

    registries = input_registries()
    if field not in registries:
        return None
    registry = registries[field][0]
    forms = []
    for name in registry.names():
        try:
            factory = registry.resolve(name)[0]
        except TorusSimError:
            continue
        if getattr(factory, "takes_argument", False):
            forms.append(f"{name}:{getattr(factory, 'argument_form', '...')}")
        elif getattr(factory, "reads_file", False):
            forms.append(f"a {name} file ({', '.join(getattr(factory, 'suffixes', ())) or 'by its content'})")
        else:
            forms.append(name)
    return " | ".join(forms) + " | an import path package.module:Class"


def _forms_formatter(base: type[argparse.HelpFormatter]) -> type[argparse.HelpFormatter]:
    """``base`` whose help of an option marked with ``input_forms`` (a scenario field) lists that field's forms.

    The forms (:func:`_short_help`) are read only when the help is formatted; the option's own help
    (the field's description, its default) stands where the registry knows no forms.
    """

    class InputFormsHelpFormatter(base):
        def _get_help_string(self, action):
            field = getattr(action, "input_forms", None)
            forms = _short_help(field) if field is not None else None
            if forms is None:
                return super()._get_help_string(action)
            return forms.replace("%", "%%") + getattr(action, "input_forms_suffix", "")

    return InputFormsHelpFormatter


_NEGATED = {
    "backfill": "--no-backfill",
    "migration": "--no-migration",
    "fit_failures": "--no-fit-failures",
    "mira_io_drawers": "--no-mira-io-drawers",
    "mira_maintenance": "--no-mira-maintenance",
}
_ALIASES = {"policy": ["--scheduler"], "nodes": ["--processors"]}


def add_scenario_options(parser: argparse.ArgumentParser) -> None:
    """One option per scenario field (``--load-scale``, ``--no-backfill``, ...); defaults stay the scenario's."""
    from torus_sim.experiments.extensions import input_registries
    from torus_sim.experiments.scenario import SECTIONS, Scenario

    forms = input_registries()  # --workload and --failures: their forms listed when the help is printed
    parser.formatter_class = _forms_formatter(parser.formatter_class)
    for section, members in SECTIONS.items():
        group = parser.add_argument_group(f"[{section}]")
        for name in members:
            info = Scenario.model_fields[name]
            help_text = (info.description or "").replace("%", "%%")  # argparse formats help with %
            default = info.default
            if name in _NEGATED:
                group.add_argument(_NEGATED[name], dest=name, action="store_false", default=argparse.SUPPRESS, help=help_text)
                continue
            if name == "fairness":
                group.add_argument(
                    "--fairness", dest=name, action=argparse.BooleanOptionalAction, default=argparse.SUPPRESS, help=help_text
                )
                continue
            if name.endswith("_params"):
                flag = "--" + name[: -len("s")].replace("_", "-")
                group.add_argument(
                    flag,
                    dest=name,
                    type=parameter,
                    action=ParameterAction,
                    metavar="KEY=VALUE",
                    default=argparse.SUPPRESS,
                    help=help_text + " (repeat for each; the value read as TOML, else as text)",
                )
                continue
            if name in ("monotonic", "bound_verification", "power"):
                flag = "--" + name.replace("_", "-")
                group.add_argument(flag, dest=name, action="store_true", default=argparse.SUPPRESS, help=help_text)
                continue
            if info.annotation in (bool, bool | None):
                group.add_argument(  # --x sets true, --no-x false (a bool field takes no text)
                    "--" + name.replace("_", "-"),
                    dest=name,
                    action=argparse.BooleanOptionalAction,
                    default=argparse.SUPPRESS,
                    help=help_text,
                )
                continue
            flags = ["--" + name.replace("_", "-"), *_ALIASES.get(name, [])]
            annotation = str(info.annotation)
            kind = str if name == "torus_dims" else value_tuple if "tuple" in annotation else number_or_text  # 2x3x4x4, 4x4x8m
            choices = None
            origin = typing.get_origin(info.annotation)
            if origin is typing.Literal:
                choices = list(typing.get_args(info.annotation))
            shown = f" (default: {default})".replace("%", "%%") if default is not None else ""
            action = group.add_argument(
                *flags, dest=name, type=kind, choices=choices, default=argparse.SUPPRESS, help=help_text + shown
            )
            if name in forms:
                action.input_forms, action.input_forms_suffix = name, shown


def scenario_from(args, own: tuple[str, ...] = ()):
    """The run's scenario: the file's (if any) with the options given on the command line on top.

    Args:
        args: the parsed command line (``file`` and the scenario's options).
        own: the subcommand's own options besides the scenario's (left out of it).
    """
    from torus_sim.experiments.scenario import Scenario

    given = {
        key: value
        for key, value in vars(args).items()
        if key not in ("command", "file", "out", "batsim", "swf", "parquet", "format", "progress", "against_log", *own)
    }
    if args.file is None:
        return Scenario.make("the command line", **given)
    from torus_sim.experiments import load_experiment  # a file's run only: the sweep's imports are not a run's

    experiment = load_experiment(args.file)
    for name in [key for key in given if key.endswith("_params")]:  # --x-param adds to the file's table
        given[name] = {**experiment.base.get(name, {}), **given[name]}
    if experiment.run_count() > 1:
        raise TorusSimError(f"{args.file} has a grid of {experiment.run_count():,} runs: run it with torus-sim sweep {args.file}")
    point = next(experiment.iter_points(), {})
    return experiment.scenario(point, **given)
