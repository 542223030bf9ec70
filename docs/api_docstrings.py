"""A Griffe extension for the API reference: Sphinx roles become links, defaults named by a constant show its value.

torus-sim's docstrings cross-reference as Sphinx does (``:class:`~torus_sim.experiments.scenario.Scenario```, ``:func:`run```,
``:data:`SUBCOMMANDS```), which reads well in ``help()`` and in an editor; mkdocstrings does not know the roles
and would print them as raw text. Before rendering, this extension rewrites each role into an autorefs
cross-reference, ``<autoref identifier="torus_sim.experiments.scenario.Scenario" optional><code>Scenario</code></autoref>``:
a link where the object has a page, its name in code where it has none (``optional``: no warning). A name
without dots is looked up where Sphinx looks first: the documented object's class for ``:meth:`` and
``:attr:``, its module otherwise. ``~`` shows the last component only; ``:func:`` and ``:meth:`` add ``()``.

A default written as a module constant (``confidence: float = CONFIDENCE``) is shown with its value
(``0.95``) when the constant is a literal of the same module or one it imports.

mkdocs.yml loads it: ``plugins: mkdocstrings: handlers: python: options: extensions: [docs/api_docstrings.py]``.

References:
    Sphinx, "Cross-referencing Python objects" (the roles, ``~``, explicit titles);
    mkdocs-autorefs (the ``<autoref ... optional>`` element); Griffe's extension API (``on_object``).
"""

from __future__ import annotations

import ast
import re

import griffe

_ROLE = re.compile(r":(?:py:)?(?P<role>class|func|meth|mod|attr|data|exc|obj|const):`(?P<body>[^`]+)`")
_EXPLICIT = re.compile(r"^(?P<title>.+?)\s*<(?P<target>[^<>]+)>$")


def _identifier(obj: griffe.Object, role: str, target: str) -> str:
    """The full dotted path a role's target names, seen from ``obj`` (Sphinx's lookup order, first guess)."""
    target = target.lstrip(".")
    if target.split(".", 1)[0] in ("torus_sim", "failure_logs", "predictors", "agents", "torus_sim_examples"):
        return target
    if target.split(".", 1)[0] in ("numpy", "pandas", "np", "pd", "mesa", "networkx", "scipy"):
        return target
    scope = obj if obj.is_class or obj.is_module else obj.parent
    if role in ("meth", "attr") and scope is not None and not scope.is_module:
        return f"{scope.path}.{target}"
    module = obj.module if not obj.is_module else obj
    return f"{module.path}.{target}"


def rewrite(text: str, obj: griffe.Object) -> str:
    """``text`` with every Sphinx role replaced by an optional autorefs cross-reference (see the module's docstring)."""

    def replace(match: re.Match) -> str:
        role, body = match["role"], match["body"].strip()
        explicit = _EXPLICIT.match(body)
        if explicit:
            title, target = explicit["title"], explicit["target"].strip()
        else:
            target = body
            short = target.startswith("~")
            target = target.lstrip("~")
            title = target.rsplit(".", 1)[-1] if short else target
            if role in ("func", "meth") and not title.endswith(")"):
                title += "()"
        identifier = _identifier(obj, role, target.lstrip("~"))
        return f'<autoref identifier="{identifier}" optional><code>{title}</code></autoref>'

    return _ROLE.sub(replace, text)


def _literal(obj: griffe.Object, name: str) -> str | None:
    """The source text of the literal value of constant ``name`` as ``obj``'s module sees it, or None."""
    module = obj.module if not obj.is_module else obj
    try:
        member = module.members.get(name)
        if member is not None and member.is_alias:
            member = member.final_target
    except (griffe.AliasResolutionError, griffe.CyclicAliasError, KeyError):
        return None
    if member is None or not member.is_attribute or member.value is None:
        return None
    value = str(member.value)
    try:
        ast.literal_eval(value.replace("_", ""))
    except (ValueError, SyntaxError):
        return None
    return value


class ApiDocstrings(griffe.Extension):
    """Rewrite Sphinx roles and constant defaults of every loaded object (see the module's docstring)."""

    def on_object(self, *, obj: griffe.Object, **kwargs) -> None:
        """Rewrite ``obj``'s docstring, and its parameters' defaults when it is a function."""
        if obj.is_alias:
            return
        if obj.docstring is not None:
            obj.docstring.value = rewrite(obj.docstring.value, obj)
        if obj.is_function:
            for parameter in obj.parameters:
                default = parameter.default
                name = str(default) if default is not None else ""
                if name.isidentifier() and name.isupper():
                    value = _literal(obj, name)
                    if value is not None:
                        parameter.default = value
