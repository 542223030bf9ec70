"""The workload sources' plug-in API: what a source is given (:class:`WorkloadContext`) and what it returns.

A source is online (jobs submitted over time: :meth:`WorkloadSource.jobs` returns a
:class:`~torus_sim.inputs.workload.jobs.Workload`) or a batch (released at time 0: it returns :class:`BatchJobs`).
The built-in sources are in :mod:`torus_sim.inputs.workload.trace_sources` (SWF and Batsim logs) and
:mod:`torus_sim.inputs.workload.batch_sources` (RIGID / MOLDABLE sets, tables, the reference code's files,
CKPT-MIG's steady state); :mod:`torus_sim.inputs.workload.sources` holds the registry that selects one by name.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from torus_sim.core.errors import ConfigurationError
from torus_sim.inputs.input_source import InputSource
from torus_sim.inputs.workload.batch import RigidJobSet
from torus_sim.inputs.workload.jobs import SWF_RULES, Workload

__all__ = ["BatchJobs", "WorkloadContext", "WorkloadSource", "stable_hash"]


def stable_hash(text: str) -> int:
    """A hash of ``text`` that is the same in every process (Python's ``hash`` of a string is salted per process)."""
    import hashlib

    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")


@dataclass
class WorkloadContext:
    """What a source needs to know of the run besides its own argument.

    Attributes:
        scenario: the scenario fields the source declares it reads (its ``from_scenario``: ``nodes``, ``jobs``,
            ``job_set``, ``seed``, ``load_scale``, ``offered_load``, ``max_jobs``, ``swf_rules``, ...), read-only
            (:class:`~torus_sim.experiments.scenario.ScenarioFields`); a plug-in that declares none is given the whole
            scenario for now, with a warning.
        platform: the run's platform kind (:class:`~torus_sim.machine.platforms.kinds.PlatformKind`): its
            nodes, the sizes a job can occupy, its default cleaning rules.
        capacity: the platform's nodes when the caller knows them already; else the platform kind
            decides, from the scenario or the workload's own machine size.
        platform_fields: the scenario fields the platform kind declares (its hooks' argument).
        log_fields: SWF fields the run reads from the log besides its jobs (a site's readings: the queues, the groups,
            the logged schedule): a source that reads an SWF file reads them in the same pass and hands the trace
            over with the workload (:attr:`~torus_sim.inputs.workload.jobs.Workload.log`); other sources ignore them.
    """

    scenario: object
    platform: object
    capacity: int | None = None
    platform_fields: object = None
    log_fields: tuple[str, ...] = ()

    def nodes(self, named: int | None) -> int:
        """The platform's nodes, given the machine size the workload names (or None).

        Raises:
            ConfigurationError: the platform kind cannot tell its size.
        """
        return self.capacity or self.platform.capacity(self._platform_fields(), named)

    @property
    def round_size(self):
        """The platform's size rounding (``size -> occupied size``), or None."""
        return self.platform.round_size(self._platform_fields())

    def _platform_fields(self):
        if self.platform_fields is None:  # a context made by hand from a whole scenario (tests, plug-ins' own use)
            self.platform_fields = self.scenario.platform_fields()
        return self.platform_fields

    @property
    def rules(self):
        """The SWF cleaning rules: the scenario's ``swf_rules``, else the platform kind's default; its readings of cancelled and failed lines and of runs past the requested time."""
        rules = SWF_RULES[getattr(self.scenario, "swf_rules", None) or self.platform.default_rules]
        cancelled = getattr(self.scenario, "cancelled", "run")
        rules = rules if cancelled == rules.cancelled else replace(rules, cancelled=cancelled)
        failed = getattr(self.scenario, "failed", "run")
        rules = rules if failed == rules.failed else replace(rules, failed=failed)
        kill = getattr(self.scenario, "kill_at_walltime", None)
        return rules if kill is None or kill == rules.kill_at_walltime else replace(rules, kill_at_walltime=kill)


@dataclass
class BatchJobs:
    """A batch source's jobs and what the silent-error draws need of them.

    Attributes:
        workload: the jobs, all submitted at 0 (``kind = "batch"``).
        rigid: the rigid job set (t_j, p_j; its areas weight RIGID's silent errors), or None.
        error_rate: an error rate λ the source itself names (the reference code's header), or None.
    """

    workload: Workload
    rigid: RigidJobSet | None = None
    error_rate: float | None = None


class WorkloadSource(InputSource):
    """Base class of workload sources.

    Attributes a subclass sets:
        name: its registry name (the scenario's ``workload``, or the part before ``:``).
        kind: ``online`` (jobs over time) or ``batch`` (released at 0).
        from_scenario: the scenario fields it reads, a tuple of names (``context.scenario`` holds exactly those).
        takes_argument: the specification is ``name:argument`` (``moldable:mix``); ``argument_form``
            says what the argument is, for messages.
        reads_file: it reads a file (the path, or its argument): a sweep reads it once before any run.
        suffixes: file-name endings it reads (a path is given to the source whose suffix matches).
        fallback: a path no source claims by suffix or content is given to it (the SWF reader).
        platforms: the platform kinds its jobs run on (None: every kind).

    Hooks a subclass overrides:
        jobs(context) -> Workload (online) or BatchJobs (batch).
        sniff(head) -> bool: whether a file's first 4 KiB look like this format (classmethod).
        silent_error_seed(seed, job_set, count, rate) -> list[int]: the seed of a moldable batch's
            drawn silent errors.
        declared_fields(argument) -> dict: scenario fields the input itself names (a job file's
            header), taken where a scenario leaves them out (classmethod; built-in sources only).

    Args:
        argument: the text after ``name:``, or a file's path (None for a plain name).
    """

    name = "workload"
    kind = "online"
    from_scenario: tuple[str, ...] | None = None
    platforms: tuple[str, ...] | None = None
    platform_refusal = ""

    def check_platform(self, platform: str) -> None:
        """Raise ConfigurationError when the jobs cannot run on the platform kind ``platform``."""
        if self.platforms is not None and platform not in self.platforms:
            raise ConfigurationError(self.platform_refusal or f"workload {self.name} runs on {' and '.join(self.platforms)}")

    def jobs(self, context: WorkloadContext):
        """The run's jobs: a :class:`~torus_sim.inputs.workload.jobs.Workload` (online) or :class:`BatchJobs` (batch)."""
        raise NotImplementedError

    def silent_error_seed(self, seed: int, job_set: int, count: int, rate: float) -> list[int]:
        """The generator seed of a moldable batch's drawn silent errors (MOLDABLE §5.1's experiments)."""
        return [seed, job_set, count, round(rate * 1e12), 2]

    @classmethod
    def declared_fields(cls, argument: str | None) -> dict:
        """Scenario fields the input itself names, for a scenario that leaves them out ({} here).

        Args:
            argument: the text after ``name:`` or the file's path.

        Returns:
            ``{field: value}``; a value that is a :class:`ConfigurationError` is the sentence for a
            scenario that needs that field and does not give it (the input names nothing that can run).
            An input that cannot be read declares nothing: its run says why.
        """
        return {}
