"""The base class of batch policies on the flat platform (the hooks :class:`~torus_sim.flat.model.FlatModel` calls)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from torus_sim.flat.model import FlatModel

__all__ = ["FlatPolicy"]


class FlatPolicy:
    """Base class of the flat batch policies (R-LIST, R-SHELF, LIST with an allocation, BATCH-LIST).

    Hooks a policy overrides:
        begin(model): called once at time 0; start the first attempts with ``model.start``.
        on_completion(model, job, failed): an attempt of ``job`` ended; ``failed`` says whether the
            detector found a silent error (the job must run again) or the job is done.

    A policy never advances time and never touches the platform directly: ``model.start`` allocates,
    the engine releases.
    """

    def begin(self, model: FlatModel) -> None:  # noqa: D102
        raise NotImplementedError

    def on_completion(self, model: FlatModel, job: int, failed: bool) -> None:  # noqa: D102
        raise NotImplementedError
