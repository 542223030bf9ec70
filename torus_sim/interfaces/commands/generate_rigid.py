"""``torus-sim generate-rigid OUT``: a RIGID §5.1 job set and its failure scenarios in the reference code's formats."""

from __future__ import annotations

import typing
from pathlib import Path

from torus_sim.interfaces.commands.arguments import bounded, fraction

__all__ = ["NAMES", "add_parser", "main"]

NAMES = ("generate-rigid",)
"""The subcommand's names."""


def add_parser(commands) -> None:
    """Add ``generate-rigid`` (n, P, the mean failure probability, scenarios, priority, seed)."""
    from torus_sim.experiments.scenario import Scenario

    generate = commands.add_parser(
        "generate-rigid", help="write a RIGID §5.1 job set and its failure scenarios in the reference code's formats"
    )
    generate.add_argument("out", help="folder for jobs.txt and failures.txt")
    generate.add_argument("--jobs", type=bounded(1, 10**6), default=100, help="n, 1 to 1,000,000")
    generate.add_argument("--processors", type=bounded(1, 2**22), default=10000, help="P, 1 to 4,194,304")
    generate.add_argument("--mean-failure-probability", type=fraction, default=0.3, help="q̄, in [0, 1)")
    generate.add_argument("--scenarios", type=bounded(1, 10**6), default=1000, help="failure scenarios, 1 to 1,000,000")
    priorities = list(typing.get_args(Scenario.model_fields["priority"].annotation))  # RIGID §4's rules
    generate.add_argument("--priority", choices=priorities, default=priorities[0])
    generate.add_argument("--seed", type=bounded(0, 2**63 - 1), default=0)


def main(args) -> int:
    """``torus-sim generate-rigid OUT``: a RIGID §5.1 job set and its failure scenarios in the reference code's formats.

    Raises:
        InputFileError: an output folder that cannot take the files.
    """
    import numpy as np

    from failure_logs.silent import draw_scenarios, error_rate_for_mean_probability, failure_probabilities_by_area
    from torus_sim.core.files import check_output_folder
    from torus_sim.inputs.workload.batch import generate_rigid_set
    from torus_sim.inputs.workload.refcode import RefcodeHeader, write_failure_scenarios, write_rigid_jobs

    check_output_folder(args.out, ("jobs.txt", "failures.txt"))
    rng = np.random.default_rng(args.seed)
    jobs = generate_rigid_set(rng, args.jobs)
    jobs.check_fits(args.processors)
    rate = error_rate_for_mean_probability(jobs.areas, args.mean_failure_probability)
    failures = draw_scenarios(failure_probabilities_by_area(jobs.areas, rate), args.scenarios, rng)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    print(f"wrote {write_rigid_jobs(out / 'jobs.txt', RefcodeHeader(rate, args.processors, 0.0, args.priority), jobs)}")
    print(f"wrote {write_failure_scenarios(out / 'failures.txt', failures)}")
    return 0
