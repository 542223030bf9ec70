"""Selection of extension points by name (placement policies, predictors, ...)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

from torus_sim.errors import ConfigurationError

__all__ = ["Registry"]

T = TypeVar("T")


class Registry(Generic[T]):
    """Factories of one kind of extension, by name.

    Args:
        kind: what the registry holds, for error messages ("placement", "predictor").
    """

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._factories: dict[str, Callable[..., T]] = {}

    def register(self, name: str, factory: Callable[..., T]) -> None:
        """Make ``factory`` selectable as ``name`` (replacing an earlier one of that name)."""
        self._factories[name] = factory

    def make(self, name: str, **kwargs) -> T:
        """Build the extension registered as ``name`` with ``kwargs``.

        Raises:
            ConfigurationError: no extension has that name.
        """
        if name not in self._factories:
            raise ConfigurationError(f"unknown {self.kind} {name!r}; choose from {sorted(self._factories)}")
        return self._factories[name](**kwargs)

    def names(self) -> list[str]:
        """Registered names, sorted."""
        return sorted(self._factories)

    def __contains__(self, name: str) -> bool:
        return name in self._factories
