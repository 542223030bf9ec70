"""``torus-sim compile``: compile the reservation kernels into numba's cache ahead of the first run that needs them."""

from __future__ import annotations

__all__ = ["NAMES", "WARM_UP", "add_parser", "main"]

NAMES = ("compile",)
"""The subcommand's names."""

WARM_UP = (
    {"platform": "cluster", "policy": "conservative", "max_jobs": 400, "failures": "none"},
    {"platform": "cluster", "policy": "R-LIST-Q", "max_jobs": 400, "failures": "synthetic:60", "load_scale": 1.5},
    {"policy": "conservative", "max_jobs": 300, "failures": "none"},
    {"policy": "R-LIST-Q", "max_jobs": 300, "failures": "synthetic:60", "load_scale": 1.5},
    {"policy": "R-LIST-1", "max_jobs": 300, "failures": "synthetic:60", "load_scale": 1.5},
)
"""Short runs of the bundled NASA log that reach every compiled kernel: conservative and R-LIST-Q on counts and on the
torus (a load of 1.5 makes queues long enough that jobs arrive among the kept reservations: their undo), and R-LIST-1
on the torus (one reservation searched alone: the MFP search)."""


def add_parser(commands) -> None:
    """Add ``compile`` (no options)."""
    commands.add_parser(
        "compile",
        help="compile the reservation kernels (conservative, R-LIST-Q) once for this installation, ahead of the first run",
        description=(
            "Compile the numba kernels of conservative backfilling and R-LIST-Q into numba's cache (the package's "
            "__pycache__, or NUMBA_CACHE_DIR), so that no later run pays it: run it once after installing, in a "
            "container image or before a sweep on fresh workers. A run that finds them missing compiles them itself "
            "and says so."
        ),
    )


def main(args) -> int:
    """``torus-sim compile``: run :data:`WARM_UP` and print what was compiled and where the cache is (exit 0; 2 without numba)."""
    import time
    import warnings

    from torus_sim.core.errors import ConfigurationError
    from torus_sim.experiments.runner import Scenario, run

    try:
        from torus_sim.policies import count_reservations, kernels, partition_steps
    except ImportError as error:
        raise ConfigurationError(
            f"numba cannot be imported ({error}): the reservations run in Python, nothing to compile"
        ) from None
    modules = (count_reservations, partition_steps)
    cold = {module.__name__: kernels.cold_kernels(module) for module in modules}
    began = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the warm-up's own notices and the short runs' warnings say nothing new
        for fields in WARM_UP:
            run(Scenario(**fields))
    took = time.perf_counter() - began
    compiled = sum(len(names) - len(kernels.cold_kernels(module)) for module, names in zip(modules, cold.values(), strict=True))
    left = [f"{module.__name__.rsplit('.', 1)[1]}.{name}" for module in modules for name in kernels.cold_kernels(module)]
    cache = count_reservations._limits._cache._cache_path  # noqa: SLF001 - where numba keeps them (for the sentence)
    print(
        f"compiled {compiled} reservation kernels in {took:.1f} s into {cache}"
        if compiled
        else f"the kernels were compiled already ({cache})"
    )
    if left:
        print(f"{len(left)} kernels compile at their first use (paths these short runs do not take): {', '.join(left)}")
    return 0
