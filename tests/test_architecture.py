"""The codebase's shape (issue 42): one-way layers, modules of a readable size, wiring that knows no name.

Each test reads the source, not the behaviour: a change that breaks the shape fails here before a
newcomer has to untangle it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("torus_sim", "failure_logs", "predictors", "agents")

LAYERS = [
    (
        "foundation",
        [
            "torus_sim.core.errors",
            "torus_sim.core.files",
            "torus_sim.core.disk_tables",
            "torus_sim.inputs.datasets",
            "torus_sim.inputs.registry",
            "torus_sim.inputs.input_registry",
            "torus_sim.inputs.plugin_admission",
            "torus_sim.inputs.provenance",
            "torus_sim.inputs.parameters",
            "torus_sim.inputs.input_source",
            "torus_sim.inputs.untrusted",
            "torus_sim.core.version",
            "torus_sim.core.lazy_imports",
            "torus_sim.core.progress_bars",
            "torus_sim.core.job",
            "torus_sim.core.job_columns",
            "torus_sim.machine.topology",
            "torus_sim.machine.partitions",
            "torus_sim.machine.partition_table",
            "torus_sim.machine.machines",
            "torus_sim.analytic",
        ],
    ),
    ("inputs", ["torus_sim.inputs.workload", "failure_logs", "torus_sim.inputs.energy"]),
    (
        "platform + policy",
        ["torus_sim.machine.platforms", "torus_sim.policies", "predictors", "torus_sim.policies.guarded_extensions"],
    ),
    ("engine", ["torus_sim.engine", "agents"]),
    ("metrics", ["torus_sim.metrics"]),
    (
        "outputs",
        [
            "torus_sim.outputs.reports",
            "torus_sim.outputs.formats",
            "torus_sim.outputs.figures",
            "torus_sim.outputs.figure_spec",
            "torus_sim.interfaces.viz.charts",
            "torus_sim.outputs.output_columns",
        ],
    ),
    (
        "orchestration",
        [
            "torus_sim.experiments.extensions",
            "torus_sim.experiments.run_inputs",
            "torus_sim.experiments.model_builder",
            "torus_sim.experiments.runner",
            "torus_sim.experiments.scenario",
            "torus_sim.experiments",
            "torus_sim.rl",
            "torus_sim.interfaces.api",
            "torus_sim.interfaces.cli",
            "torus_sim.interfaces.commands",
            "torus_sim.interfaces.viz",
            "torus_sim",
        ],
    ),
]
"""The data flows one way: inputs -> platform + policy -> engine -> metrics -> outputs, wired by the orchestration."""


def _modules():
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            yield ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__"), path


def _layer(module: str) -> int | None:
    best = None
    for index, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and (best is None or len(prefix) > best[1]):
                best = (index, len(prefix))
    return None if best is None else best[0]


def _imports(tree: ast.AST, module: str = "", package: bool = False, type_checking_too: bool = False):
    """Every import in a module's source, at any depth (function-level ones too), outside ``TYPE_CHECKING`` unless
    ``type_checking_too``.

    A relative import is resolved against ``module`` (``package``: the module is a package's ``__init__``);
    ``from a import b`` also yields ``a.b``, which is a module where ``b`` is one.
    """
    type_checking = set()
    for node in ast.walk(tree):
        if not type_checking_too and isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            type_checking |= {sub.lineno for sub in ast.walk(node) if hasattr(sub, "lineno")}
    for node in ast.walk(tree):
        if node.__dict__.get("lineno") in type_checking:
            continue
        if isinstance(node, ast.ImportFrom):
            if node.level:
                parts = module.split(".") if package else module.split(".")[:-1]
                base = ".".join(parts[: len(parts) - (node.level - 1)] + ([node.module] if node.module else []))
            elif node.module:
                base = node.module
            else:
                continue
            yield base, node.lineno
            for alias in node.names:
                yield f"{base}.{alias.name}", node.lineno
        elif isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno


def _import_graph(type_checking_too: bool = False) -> dict[str, dict[str, int]]:
    """The modules of the four packages and what each imports of them: ``{module: {imported module: line}}``.

    An imported name is mapped to the longest module it names (``torus_sim.policies.base.Policy`` ->
    ``torus_sim.policies.base``); imports of the module itself are left out.
    """
    modules = dict(_modules())
    graph: dict[str, dict[str, int]] = {}
    for module, path in modules.items():
        edges = graph.setdefault(module, {})
        for imported, line in _imports(ast.parse(path.read_text()), module, path.name == "__init__.py", type_checking_too):
            while imported and imported not in modules:
                imported = imported.rpartition(".")[0]
            if imported and imported != module:
                edges.setdefault(imported, line)
    return graph


def test_every_module_has_a_layer():
    assert [module for module, _ in _modules() if _layer(module) is None] == []


def test_no_module_imports_from_a_layer_above_its_own():
    """Function-level, relative and ``TYPE_CHECKING`` imports count: a deferred import is still a dependency, and an
    annotation's import says the module knows the layer above (issue 76: give engine and agents an order)."""
    upward = []
    for module, edges in _import_graph(type_checking_too=True).items():
        own = _layer(module)
        for imported, line in edges.items():
            other = _layer(imported)
            if other is not None and other > own:
                upward.append(f"{module} ({LAYERS[own][0]}) imports {imported} ({LAYERS[other][0]}) at line {line}")
    assert upward == []


def test_the_import_graph_has_no_cycle_counting_function_level_imports():
    """No two modules need each other, even through an import written inside a function (issue 64).

    The graph is every module of torus_sim, agents, predictors and failure_logs, with an edge for each
    import at any depth outside ``TYPE_CHECKING``; a cycle is a strongly connected component of more than one
    module (networkx), printed with the lines that close it.
    """
    import networkx as nx

    graph = _import_graph()
    digraph = nx.DiGraph([(module, imported) for module, edges in graph.items() for imported in edges])
    cycles = []
    for component in nx.strongly_connected_components(digraph):
        if len(component) > 1:
            cycle = nx.find_cycle(digraph.subgraph(component))
            cycles.append(" -> ".join(f"{a} (line {graph[a][b]})" for a, b in cycle) + f" -> {cycle[0][0]}")
    assert sorted(cycles) == []


def test_every_module_is_named_in_one_line_of_the_architecture_page():
    """Issue 64: no line cap (a long algorithm may be long), but every module owns one thing, said in one table row of
    docs/architecture.md; a new module must be added there, a removed one taken out."""
    page = (ROOT / "docs" / "architecture.md").read_text().partition("## Every module")[2]
    rows = {}
    for line in page.splitlines():
        if line.startswith("| `") and "` |" in line:
            path, _, owns = line[3:].partition("` |")
            rows[path] = owns.strip(" |")
    files = {str(path.relative_to(ROOT)) for _, path in _modules()}
    assert sorted(files - set(rows)) == [], "modules missing from docs/architecture.md"
    assert sorted(set(rows) - files) == [], "rows of docs/architecture.md naming no module"
    assert [path for path, owns in rows.items() if len(owns) < 12] == [], "a row that does not say what the module owns"


def test_the_engine_is_one_package_and_nothing_outside_imports_its_internals():
    loose = [name for name in ("model", "events", "wait_queue", "queue_columns", "size_index", "running_ends", "rank_sums")
             if (ROOT / "torus_sim" / f"{name}.py").exists()]  # fmt: skip
    assert loose == []
    internals = []
    allowed = (
        "torus_sim.engine",
        "torus_sim.engine.view",
        "torus_sim.engine.record",
        "torus_sim.engine.guard",
        "torus_sim.engine.sections",
    )
    for module, edges in _import_graph().items():
        if module.startswith(("torus_sim.engine", "agents")):
            continue
        for imported, line in edges.items():
            if (
                imported.startswith("torus_sim.engine")
                and imported not in allowed
                and not imported.startswith(("torus_sim.engine.progress", "torus_sim.engine.events"))
            ):
                internals.append(f"{module} imports {imported} at line {line}")
    assert internals == []


# -- the wiring knows no name ---------------------------------------------------------------------------------


def _registered_names() -> set[str]:
    from failure_logs.sources import FAILURE_SOURCES
    from predictors.base import PREDICTORS
    from predictors.runtime import RUNTIME_PREDICTORS
    from torus_sim.inputs.workload.sources import WORKLOADS
    from torus_sim.machine.machines import MACHINES
    from torus_sim.machine.platforms.kinds import PLATFORMS
    from torus_sim.policies import fault_aware  # noqa: F401  (registers balancing and tiebreak placements)
    from torus_sim.policies.catalog import POLICIES
    from torus_sim.policies.placement import PLACEMENTS

    names = set(MACHINES)
    for registry in (POLICIES, PLACEMENTS, PREDICTORS, RUNTIME_PREDICTORS, WORKLOADS, FAILURE_SOURCES, PLATFORMS):
        names |= set(registry.builtin_names())
    return names


def _string_constants(tree: ast.AST):
    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
                docstrings.add(id(first.value))
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            yield node.value, node.lineno


@pytest.mark.parametrize(
    "module",
    [
        "experiments/runner.py",
        "experiments/run_inputs.py",
        "interfaces/cli.py",
        "interfaces/viz/app.py",
        "experiments/model_builder.py",
        "experiments/extensions.py",
    ],
)
def test_the_wiring_names_no_built_in_workload_failure_source_platform_machine_or_policy(module):
    """A built-in's name lives in its own module and in a catalog (policies/catalog.py, viz/menus.py), never in the wiring."""
    names = _registered_names()
    tree = ast.parse((ROOT / "torus_sim" / module).read_text())
    found = [
        f"{module}:{line}: {text!r}"
        for text, line in _string_constants(tree)
        if text in names or (":" in text and text.split(":")[0] in names and " " not in text)
    ]
    assert found == []


def test_the_runner_has_no_if_chain_on_names():
    """No comparison with a registered name, and no ``startswith`` on one: the registries parse every form."""
    names = _registered_names()
    tree = ast.parse((ROOT / "torus_sim" / "experiments" / "runner.py").read_text())

    def named(node) -> bool:
        values = [node] if not isinstance(node, (ast.Tuple, ast.List, ast.Set)) else node.elts
        return any(isinstance(v, ast.Constant) and isinstance(v.value, str) and v.value.rstrip(":") in names for v in values)

    compared = [
        ast.unparse(node)
        for node in ast.walk(tree)
        if isinstance(node, ast.Compare) and any(map(named, (node.left, *node.comparators)))
    ]
    starts = [
        ast.unparse(node)
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and ast.unparse(node.func).endswith((".startswith", ".endswith"))
        and any(map(named, node.args))
    ]
    assert compared == [] and starts == []


def test_one_function_builds_a_model_from_a_scenario():
    """Issue 64: the runner, the Gymnasium environment, RLScheduler's protocol, the batch runners and the checkpoint
    yields all build their engine with torus_sim.experiments.model_builder.build_model; no other module of the package calls
    SchedulingModel(...) (the runner's ConfiguredModel subclasses it for mesa.batch_run, through model_arguments)."""
    callers = []
    for module, path in _modules():
        if module.startswith("torus_sim.engine") or module == "torus_sim.experiments.model_builder":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and ast.unparse(node.func).split(".")[-1] == "SchedulingModel":
                callers.append(f"{module}:{node.lineno}")
    assert callers == []


def test_no_policy_takes_the_model_or_the_scenario():
    """Issue 64: a policy is attached with a PolicyContext and plans on the view; its factory, its placement and its
    predictors get the scenario fields they declare (``from_scenario``). No function of the policy layer
    (torus_sim/policies, predictors) takes a parameter named ``model`` or ``scenario``, or reads a ``model``."""
    found = []
    for module, path in _modules():
        if not module.startswith(("torus_sim.policies", "predictors")):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                names = [argument.arg for argument in (*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs)]
                found += [f"{module}:{node.lineno} {node.name}({name})" for name in ("model", "scenario") if name in names]
            elif isinstance(node, ast.Name) and node.id == "model":
                found.append(f"{module}:{node.lineno} reads model")
    assert found == []


def _scenario_route(fields: dict) -> tuple[list[str], list[str]]:
    """The modules a scenario is handed to by ``runner.run``: before the engine's run and after it, in order.

    Every call into a module of the four packages whose frame holds the scenario (an argument, or the ``scenario``
    attribute of one) is an entry (a method of the scenario's, declared with a part's section, is the scenario's own) (``sys.setprofile``), from the call of ``runner.run`` on; the calls inside
    ``SchedulingModel.run`` are not looked at. Returns the route up to the first run (modules, repeats merged) and the
    entries after the last run returned (``module:function``).
    """
    import sys

    from torus_sim.engine.model import SchedulingModel
    from torus_sim.experiments.runner import Scenario, run

    scenario = Scenario.make(**fields)
    route: list[str] = []
    after: list[str] = []
    state = {"on": False, "ran": False, "inside": False}

    def profile(frame, event, arg):
        if frame.f_code is SchedulingModel.run.__code__:
            if event in ("call", "return"):
                state["inside"] = event == "call"
                state["ran"] = state["ran"] or event == "return"
            return
        if event != "call" or state["inside"]:
            return
        module = frame.f_globals.get("__name__", "")
        if frame.f_code is run.__code__:
            state["on"] = True
        if not state["on"] or module.split(".")[0] not in PACKAGES:
            return
        values = [value for value in frame.f_locals.values() if not isinstance(value, type)]
        if frame.f_locals.get("self") is scenario:  # the scenario's own method, declared with its part's section
            module = Scenario.__module__
        if any(value is scenario or getattr(value, "scenario", None) is scenario for value in values):
            if state["ran"]:
                after.append(f"{module}:{frame.f_code.co_name}")
            elif not route or route[-1] != module:
                route.append(module)

    sys.setprofile(profile)
    try:
        run(scenario)
    finally:
        sys.setprofile(None)
    return route, after


@pytest.mark.parametrize(
    "fields",
    [
        {"max_jobs": 50},
        {"max_jobs": 50, "policy": "balancing", "confidence": 0.5, "failures": "synthetic:30"},
        {"max_jobs": 50, "machine": "mira", "policy": "tiebreak", "predictor": "history", "downtime": "log"},
        {"max_jobs": 50, "platform": "cluster", "policy": "power-cap", "power": True, "power_cap": 0.8, "idle_off_after": 600},
        {
            "platform": "cluster",
            "workload": "rigid",
            "jobs": 30,
            "mean_failure_probability": 0.3,
            "scenarios": 2,
            "policy": "R-LIST-0",
        },
    ],
    ids=["krevat", "balancing", "mira-tiebreak", "power-cap", "rigid"],
)
def test_a_scenario_stays_in_the_wiring_on_its_way_to_the_engine(fields):
    """Issue 64: the Scenario never crosses below the wiring (every room gets the fields it declares), so its route from
    runner.run to the engine enters at most 12 modules, all of the orchestration layer: no step back up a layer.
    Issue 76: the whole run, not only until the model starts: once the model ran, no module is handed the scenario
    (the run's description, the metric settings and the clock's hour are read before it runs). A batch of several
    failure scenarios builds each model after the one before ran: its later builds are the only visits after."""
    route, after = _scenario_route(fields)
    assert route[0] == "torus_sim.experiments.runner" and len(set(route)) <= 12
    below = [module for module in route if _layer(module) != len(LAYERS) - 1]
    assert below == []
    if fields.get("scenarios", 1) == 1:
        assert after == []
    else:
        assert after and all(_layer(entry.partition(":")[0]) == len(LAYERS) - 1 for entry in after)


def test_no_module_below_the_wiring_takes_a_scenario():
    """Issue 64: below the orchestration layer no function takes a parameter named ``scenario`` (each room is given the
    fields it declares). The CKPT-MIG formulas' ``scenario`` is the slides' machine scenario ("today", "2011", "2015")."""
    found = []
    for module, path in _modules():
        if _layer(module) == len(LAYERS) - 1 or module.startswith("torus_sim.analytic"):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                names = [argument.arg for argument in (*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs)]
                if "scenario" in names:
                    found.append(f"{module}:{node.lineno} {node.name}")
    assert found == []


def test_no_committed_file_names_an_absolute_path_of_the_shared_data():
    """A results table or a matrix row written on one machine named its inputs there (/.../shared/data/...): committed
    files name them relative to the repository (the matrix's refusals, a sweep's failures_given), so a clone reads the same."""
    import re
    import subprocess

    absolute = re.compile(r"(?:^|[\s'\"(,=:])(/[^\s'\",)|]*/shared/data/)")
    listed = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=False).stdout.split()
    if not listed:
        pytest.skip("not a git checkout")
    found = []
    for name in listed:
        if name.startswith("tests/") or not name.endswith((".md", ".csv", ".toml", ".py", ".json", ".txt")):
            continue
        text = (ROOT / name).read_text(errors="replace")
        found += [f"{name}: {match.group(1)}" for match in absolute.finditer(text)][:1]
    assert found == []


def _platform_names() -> set[str]:
    from torus_sim.machine.platforms.kinds import PLATFORMS

    return set(PLATFORMS.names())


def test_no_kind_test_and_no_identities_check_outside_the_platforms():
    """Issue 76: the engine, the policies, the agents and the outputs ask a platform what it can do (``counts_fit``,
    ``counts_only``, ``tracks_nodes``, ``table``, ``fits_now``, ``mfp``, ``allocation_text``, ...), never which kind it is:
    no comparison of anything with a platform kind's name and no read of a cluster's ``identities`` outside
    torus_sim/machine/platforms/ (the kinds build their platforms; a policy's declared ``platforms`` is read by its base class)."""
    names = _platform_names()
    assert {"torus", "cluster"} <= names
    found = []
    for module, path in _modules():
        if module.startswith("torus_sim.machine.platforms") or module == "torus_sim.policies.base":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Compare):
                operands = [node.left, *node.comparators]
                constants = {
                    element.value
                    for operand in operands
                    for element in (operand.elts if isinstance(operand, (ast.Tuple, ast.Set, ast.List)) else [operand])
                    if isinstance(element, ast.Constant) and isinstance(element.value, str)
                }
                kinds = [
                    operand for operand in operands if "kind" in ast.unparse(operand) and "workload" not in ast.unparse(operand)
                ]
                if constants & names and kinds:
                    found.append(f"{module}:{node.lineno} {ast.unparse(node)}")
            elif isinstance(node, ast.Attribute) and node.attr == "identities":
                found.append(f"{module}:{node.lineno} {ast.unparse(node)}")
    assert found == []


RESERVATION_ALGORITHMS = {
    "torus_sim.policies.easy": ("ConservativePolicy",),
    "torus_sim.policies.rigid": (
        "ListPolicy._with_reservations",
        "ListPolicy._every_reservation",
        "ListPolicy._first_reservations",
    ),
    "torus_sim.policies.power_cap": ("PowerCapPolicy._shadow",),
}
"""The reservation algorithms (issue 76 §2): conservative backfilling, R-LIST's passes with reservations, the power
cap's reservation for the blocked head."""

PROFILE_REPRESENTATIONS = {
    "counts_fit", "counts_only", "tracks_nodes", "table", "AvailabilityProfile", "PartitionProfile", "CountProfile",
    "KeptReservations", "ProfileKeeper", "StepArrays", "compiled_count_profile", "free_at", "fits_now",
}  # fmt: skip
"""What tells the machine's representations apart: its capabilities and each representation's own profile or call."""


def _definitions(tree: ast.Module, dotted: str):
    """The class or method ``Class`` / ``Class.method`` of a module's tree."""
    names = dotted.split(".")
    nodes = tree.body
    found = None
    for name in names:
        found = next(n for n in nodes if isinstance(n, (ast.ClassDef, ast.FunctionDef)) and n.name == name)
        nodes = found.body
    return found


def test_the_reservation_algorithms_are_written_once_over_the_profile_protocol():
    """Issue 76 §2: conservative backfilling, R-LIST's passes with reservations and the power cap's head reservation
    read the platform's profile only through the protocol (``reservations.ReservationProfile``: earliest, room_now,
    room_at, reserve, reserve_in_order, open_for) and the pass that reserves every waiting job
    (``reservations.ReservationPass``): no capability read, no representation's profile or call named. Counts, node ids
    and the torus's partitions implement it (their compiled kernels behind it); the platform's answers choose one in
    ``reservations.reservation_pass`` and ``availability.availability_profile``."""
    found = []
    for module, dotted_names in RESERVATION_ALGORITHMS.items():
        path = ROOT / (module.replace(".", "/") + ".py")
        tree = ast.parse(path.read_text())
        for dotted in dotted_names:
            for node in ast.walk(_definitions(tree, dotted)):
                name = node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else None
                if name in PROFILE_REPRESENTATIONS:
                    found.append(f"{module}:{node.lineno} {dotted}: {name}")
    assert found == []


def test_nothing_outside_the_engine_reads_a_private_attribute_of_it():
    """Issue 76: the Gymnasium environment, the browser view and every other caller drive the engine through its public
    surface (``now``, ``moves``, ``pass_open``, ``apply_action``, ...): no ``model._name`` (or ``model.component._name``)
    outside torus_sim/engine/ and agents/."""
    import re

    private = re.compile(r"\bmodel(?:\.[a-z]+)*\._[a-z]\w*")
    found = []
    for module, path in _modules():
        if module.startswith(("torus_sim.engine", "agents")):
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            found += [f"{module}:{number} {match.group(0)}" for match in private.finditer(line)]
    assert found == []


def test_a_job_enters_the_wait_queue_only_through_the_scheduler_agent():
    """Issue 76: the scheduler agent owns the wait queue; the engine's handlers hand it arrivals (``enqueue_arrivals``)
    and returning jobs (``enqueue``), and nothing else adds to a queue but the agent's per-user limits, maintenance
    windows and prime time, which let a held job back in (issue 77)."""
    import re

    adding = re.compile(r"\bqueue\.(add|extend)\(")
    found = []
    for module, path in _modules():
        if module in (
            "agents.scheduler",
            "torus_sim.engine.wait_queue",
            "torus_sim.engine.limits",
            "torus_sim.engine.maintenance",
            "torus_sim.engine.prime_time",
        ):
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if adding.search(line):
                found.append(f"{module}:{number} {line.strip()}")
    assert found == []


def test_the_runs_description_is_made_from_what_was_built_not_from_the_registries_again(monkeypatch):
    """Issue 76 §3: the run's description (summary.json's ``inputs``) is recorded from the sources the model builder
    resolved; nothing asks the workload or failure registries while it is written, after the model ran."""
    from failure_logs import sources as failure_sources
    from torus_sim.experiments import model_builder, runner
    from torus_sim.inputs.workload import sources as workload_sources

    phase, asked = ["building"], []
    for module, name in (
        (model_builder, "workload_source"),
        (model_builder, "failure_source"),
        (workload_sources, "workload_source"),
        (failure_sources, "failure_source"),
    ):
        registry = getattr(module, name)
        monkeypatch.setattr(module, name, lambda *args, _n=name, _r=registry: asked.append((phase[0], _n)) or _r(*args))
    describe = runner._inputs_manifest

    def described(*args):
        phase[0] = "describing"
        return describe(*args)

    monkeypatch.setattr(runner, "_inputs_manifest", described)
    result = runner.run(runner.Scenario(max_jobs=50, failures="synthetic:5"))
    assert ("building", "failure_source") in asked and ("building", "workload_source") in asked
    assert [name for when, name in asked if when == "describing"] == []
    assert result.inputs["failures"]["spec"] == "synthetic:5" and result.inputs["workload"]["jobs"] == 50


def test_the_top_level_shows_the_layers():
    """Issue 76 §4: torus_sim/ lists at most 12 entries, each a layer or a concept (no loose module but the package's own)."""
    entries = sorted(path.name for path in (ROOT / "torus_sim").iterdir() if path.name != "__pycache__")
    assert len(entries) <= 12, entries
    assert [name for name in entries if name.endswith(".py")] == ["__init__.py"]


def test_every_former_import_path_is_the_module_at_its_home():
    """Issue 76 §4: a former path (``torus_sim.topology``, ``torus_sim.api``, a module under a former package) imports the
    very module at its home: one class identity whichever path a user's code takes, nothing executed twice."""
    import importlib
    import subprocess
    import sys

    from torus_sim.core.former_paths import MOVED

    for former, home in MOVED.items():
        assert (ROOT / "torus_sim" / home.replace(".", "/")).with_suffix(".py").exists() or (
            ROOT / "torus_sim" / home.replace(".", "/")
        ).is_dir(), f"{former} -> {home}: no such module"
    code = (
        "import importlib, sys\n"
        "from torus_sim.topology import Torus\n"
        "from torus_sim.machine.topology import Torus as Home\n"
        "assert Torus is Home\n"
        "import torus_sim.workload.swf as old, torus_sim.inputs.workload.swf as new\n"
        "assert old is new and old.__spec__.name == 'torus_sim.inputs.workload.swf'\n"
        "from torus_sim.api import Policy\n"
        "from torus_sim.policies.base import Policy as Base\n"
        "assert Policy is Base\n"
        "from torus_sim import scenario\n"
        "assert scenario is importlib.import_module('torus_sim.experiments.scenario')\n"
        "print(sum(1 for name in sys.modules if name.startswith('torus_sim.')))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    assert importlib.import_module("torus_sim.platforms.cluster") is importlib.import_module(
        "torus_sim.machine.platforms.cluster"
    )
    assert importlib.util.find_spec("torus_sim.no_such_module") is None


def test_no_engine_component_takes_the_model():
    """Issue 76 §1: each engine part is built with the collaborators it uses (the clock, the job book, the counters,
    the platform, the scheduler agent, ...), never the model: no class of torus_sim/engine but the model's own takes a
    parameter named ``model`` at construction or keeps one (``self.model``, ``self._model``). Mesa's model reporters
    (functions of the model, Mesa's protocol) are the record's only reads of it; the pass watchdog (engine/guard.py)
    is no part of a run but the process's one thread that watches every run, and holds each by a weak reference."""
    found = []
    own = ("torus_sim.engine.model", "torus_sim.engine.mesa_core", "torus_sim.engine.guard")
    for module, path in _modules():
        if not module.startswith("torus_sim.engine") or module in own:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef) and node.name == "__init__":
                names = [argument.arg for argument in (*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs)]
                found += [f"{module}:{node.lineno} __init__(model)" for name in names if name == "model"]
            elif isinstance(node, ast.Attribute) and node.attr in ("model", "_model") and ast.unparse(node.value) == "self":
                found.append(f"{module}:{node.lineno} self.{node.attr}")
    assert found == []


def test_the_model_owns_the_clock_the_generator_and_the_wiring():
    """Issue 76 §1: the model's own attributes are the clock, the settings, the guard, the platform and the parts it
    wires (each piece of state has one owner: the job book, the counters, the scheduler agent's queue; the inputs and
    parts a component uses are that component's, read through properties); at most 12, assigned anywhere in the class
    (Mesa's own ``running`` aside), and an ``__init__`` of at most 60 lines."""
    source = (ROOT / "torus_sim" / "engine" / "model.py").read_text()
    model = next(
        node for node in ast.walk(ast.parse(source)) if isinstance(node, ast.ClassDef) and node.name == "SchedulingModel"
    )
    init = next(node for node in ast.walk(model) if isinstance(node, ast.FunctionDef) and node.name == "__init__")
    assigned = sorted(
        {
            target.attr
            for node in ast.walk(model)
            if isinstance(node, (ast.Assign, ast.AnnAssign))
            for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
            for target in ([*target.elts] if isinstance(target, ast.Tuple) else [target])
            if isinstance(target, ast.Attribute) and ast.unparse(target.value) == "self"
        }
        - {"running"}  # Mesa's Model.running: the model's own flag of a step-driven run
    )
    assert len(assigned) <= 12, assigned
    assert init.end_lineno - init.body[0].lineno + 1 <= 60, "the model's __init__ names its steps; the steps live in functions"
    elsewhere = ("run_jobs", "running_jobs", "completed", "makespan", "queue", "policy", "_running_ranks", "_down_since")
    for owned in (
        *elsewhere,
        "workload",
        "failure_log",
        "power",
        "power_states",
        "resilience",
        "progress",
        "node_agents",
        "step_log",
    ):
        assert owned not in assigned, f"{owned} has its owner (the job book, the scheduler agent, the node agents)"
