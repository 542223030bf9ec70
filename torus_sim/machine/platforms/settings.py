"""The scenario's ``[platform]`` section: which machine a run simulates (a torus of supernodes, a cluster, a plug-in's).

A part of :class:`torus_sim.experiments.scenario.Scenario` (a pydantic model of its own, mixed into the scenario with
the other parts' sections): its fields keep their flat names in scenario files, sweep grids and options.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import BaseModel, Field, field_validator, model_validator

from torus_sim.core.errors import ConfigurationError
from torus_sim.machine.machines import load_machine, machine_torus, parse_torus_dims
from torus_sim.machine.partitions import MAX_PARTITIONS, partition_count
from torus_sim.machine.platforms.cluster import MAX_NODES
from torus_sim.machine.platforms.kinds import platform_kind
from torus_sim.machine.platforms.queue_partitions import parse_partitions
from torus_sim.machine.topology import Torus

__all__ = ["PlatformSection"]


class PlatformSection(BaseModel):
    """The ``[platform]`` section: the platform kind and its machine (a torus's dimensions and wraps, a cluster's nodes).

    Raises:
        ValueError: (pydantic's) a platform kind no registry knows, a torus text that does not parse, a machine and
            dimensions that disagree, a torus too large to tabulate.
    """

    SECTION: ClassVar[str] = "platform"

    platform: str = Field(
        "torus", description="torus (the torus of supernodes), cluster (P nodes), a plug-in's name or an import path"
    )
    machine: str | None = Field(
        None,
        description="bgl, intrepid, mira or a machine description .toml: the torus and its blocks (default: torus_dims)",
    )
    torus_dims: tuple[int, ...] = Field(
        (4, 4, 8), description="supernodes (midplanes) along each dimension, 1 to 6 of them, or text 2x3x4x4 (m: mesh)"
    )
    torus_wraps: tuple[bool, ...] | None = Field(None, description="per dimension, false for a mesh (default: every one a ring)")
    nodes: int | None = Field(
        None, ge=1, le=MAX_NODES, description="P of a cluster (default: the workload's machine size), at most 4,194,304"
    )
    node_types: str | None = Field(
        None,
        description="a heterogeneous cluster's node types, NAME:NODES:CORES:MEMORY_GIB[:GPUS],... (thin:224:8:16,fat:16:8:64)",
    )
    partitions: str | None = Field(
        None,
        description='a cluster partitioned by the log\'s queues (platform = "partitions"): NAME:PROCESSORS:QUEUES,... with '
        "the queues joined by + or * for every other (batch:100:1+2,small:28:*), then a partition's limits if any "
        "(:max_time=SECONDS:max_nodes=N, Slurm's MaxTime and MaxNodes); a job runs only on its queue's partition",
    )
    partition_field: Literal["queue", "partition", "rules"] | None = Field(
        None,
        description='what a partitioned cluster routes by: "queue" (SWF field 15), "partition" (field 16) or "rules" (each '
        "job to the first partition whose limits admit it, every partition's queues *); unset: queue",
    )

    @model_validator(mode="before")
    @classmethod
    def _dims_text(cls, data):
        """``torus_dims = "2x3x4x4"`` (an ``m`` after a mesh dimension) -> dims and wraps."""
        if isinstance(data, dict) and isinstance(data.get("torus_dims"), str):
            try:
                dims, wraps = parse_torus_dims(data["torus_dims"])
            except ConfigurationError as error:
                raise ValueError(str(error)) from None
            data = {**data, "torus_dims": dims}
            if not all(wraps):
                if data.get("torus_wraps") not in (None, wraps):
                    raise ValueError(f"torus_dims {data['torus_dims']} marks mesh dimensions and torus_wraps disagrees")
                data["torus_wraps"] = wraps
        return data

    @model_validator(mode="after")
    def _torus_fits(self):
        """The torus (from the machine or the dims) is consistent and small enough to tabulate."""
        if self.machine is not None and ("torus_dims" in self.model_fields_set or "torus_wraps" in self.model_fields_set):
            try:
                described = load_machine(self.machine).torus
            except ConfigurationError as error:
                raise ValueError(str(error)) from None
            if self.torus_dims != described.dims or (self.torus_wraps is not None and self.torus_wraps != described.wraps):
                raise ValueError(
                    f"machine {self.machine} is a {described.label} torus; torus_dims / torus_wraps say otherwise (give one of them)"
                )
        try:
            torus = self.torus
        except ConfigurationError as error:
            raise ValueError(str(error)) from None
        count = partition_count(torus)  # checked before anything is built
        if count > MAX_PARTITIONS:
            raise ValueError(
                f"a {torus.label} torus has {count:,} partitions; the partition table holds at most {MAX_PARTITIONS:,}"
            )
        return self

    @model_validator(mode="after")
    def _partitions_text(self):
        """Partitions that parse (:func:`~torus_sim.machine.platforms.queue_partitions.parse_partitions`), by rules or not."""
        if self.partitions is not None:
            try:
                parse_partitions(self.partitions, by_rules=self.partition_field == "rules")
            except ConfigurationError as error:
                raise ValueError(str(error)) from None
        return self

    @field_validator("platform")
    @classmethod
    def _platform_kind(cls, value):
        """A platform kind the registry knows (:mod:`torus_sim.machine.platforms.kinds`): a name or an import path."""
        try:
            platform_kind(value)
        except ConfigurationError as error:
            raise ValueError(str(error)) from None
        return value

    @property
    def torus(self) -> Torus:
        """The torus of the platform: the machine's (dims, wraps, allowed blocks) or ``torus_dims`` / ``torus_wraps``.

        Raises:
            ConfigurationError: an unknown machine or an inconsistent description.
        """
        return machine_torus(self.machine, tuple(self.torus_dims), None if self.torus_wraps is None else tuple(self.torus_wraps))
