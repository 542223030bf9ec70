"""The project's exception classes: every error says where and what was wrong."""

from __future__ import annotations

from pathlib import Path

__all__ = [
    "AccountingFormatError",
    "BatsimWorkloadFormatError",
    "PolicyError",
    "ConfigurationError",
    "FailureLogFormatError",
    "InputFileError",
    "InputFormatError",
    "JobSetFormatError",
    "JobStateError",
    "SimulationError",
    "TorusSimError",
    "WorkloadFormatError",
]


class TorusSimError(Exception):
    """Base class of every error torus-sim raises on purpose."""


class ConfigurationError(TorusSimError, ValueError):
    """A parameter is out of its domain (a negative load scale, an unknown scheduler name, ...)."""


class InputFileError(TorusSimError, ValueError):
    """An input file cannot be used as a whole: a directory, truncated or corrupt compression, no job.

    Args:
        path: the file.
        reason: what is wrong, as a sentence a user can act on.
    """

    def __init__(self, path: str | Path, reason: str) -> None:
        self.path = str(path)
        self.reason = reason
        super().__init__(f"{self.path}: {reason}")


class InputFormatError(InputFileError):
    """A line of an input file is malformed.

    Args:
        path: the file.
        line_no: 1-based line number in that file.
        reason: what was expected and what came.
    """

    kind = "input"

    def __init__(self, path: str | Path, line_no: int, reason: str) -> None:
        self.line_no = line_no
        super().__init__(path, reason)
        self.args = (f"{self.path}:{line_no}: malformed {self.kind} line: {reason}",)


class WorkloadFormatError(InputFormatError):
    """A malformed Standard Workload Format line (see :mod:`torus_sim.inputs.workload.swf`)."""

    kind = "SWF"


class BatsimWorkloadFormatError(WorkloadFormatError):
    """A Batsim JSON workload that is not valid JSON (see :mod:`torus_sim.outputs.formats.batsim`)."""

    kind = "Batsim JSON"


class AccountingFormatError(InputFormatError):
    """A malformed line of a batch system's accounting (Slurm's sacct, PBS / Torque; see :mod:`torus_sim.outputs.formats.accounting`)."""

    kind = "accounting"


class FailureLogFormatError(InputFormatError):
    """A malformed failure-log line (BG/L RAS, LANL, or a torus-sim failure CSV)."""

    kind = "failure-log"


class MaintenanceFormatError(InputFormatError):
    """A malformed line of a maintenance-window file (``start,end`` in seconds)."""

    kind = "maintenance-window"


class EffectiveSizeFormatError(InputFormatError):
    """A malformed line of an effective-size file (``start,end,nodes``: seconds and a node count)."""

    kind = "effective-size"


class ReservationFormatError(InputFormatError):
    """A malformed line of a reservation file (``start,end,nodes[,on_running]``: seconds, a count or named node ids, wait or kill)."""

    kind = "reservation"


class JobSetFormatError(InputFormatError):
    """A malformed line of a reference-code job file or failure-scenario file (see :mod:`torus_sim.inputs.workload.refcode`)."""

    kind = "job-set"


class JobStateError(TorusSimError, RuntimeError):
    """A job life-cycle transition was asked for from a state that does not allow it."""


class SimulationError(TorusSimError, RuntimeError):
    """The engine reached a state that breaks an invariant (a bug, never bad input)."""


class PolicyError(SimulationError):
    """An extension (a policy, or a placement or predictor it uses) failed; the run stops there.

    It raised (anything but ``KeyboardInterrupt``), exited, overran its wall-clock limit, returned an
    action or a value the engine refuses, changed what it was shown, or made no progress. The engine
    checks every action before applying it, so the state is the one after the last action it
    accepted (never half-changed); nothing is written.

    Args:
        policy: the extension's name.
        at: simulated time, seconds.
        job: the job id concerned, or None.
        reason: what was wrong.
        kind: what the extension is (``policy``, ``runtime predictor``, ...), the first word of the message.
    """

    def __init__(self, policy: str, at: float, job: int | None, reason: str, kind: str = "policy") -> None:
        self.policy, self.at, self.job, self.reason, self.kind = str(policy), at, job, reason, kind
        about = f", job {job}" if job is not None else ""
        super().__init__(f"{kind} {self.policy!r} at t = {at:,.1f} s{about}: {reason}")
