"""Machine descriptions: which torus of midplanes a Blue Gene has and which blocks it allows.

A machine is data: the number of midplanes (BG/L's "supernodes") along each dimension of its
torus, whether each dimension wraps around (a ring) or not (a mesh), the nodes in a midplane,
and the block sizes (and, optionally, shapes) its scheduler hands out. ``--machine NAME`` picks a
built-in; ``--machine path.toml`` reads a user's own description::

    name = "mira"
    dims = [2, 3, 4, 4]                  # midplanes along each dimension (1 to 6 of them)
    wraps = [true, true, true, true]     # optional, default: every dimension a ring
    nodes_per_midplane = 512
    block_sizes = [1, 2, 4, 8, 16, 24, 32, 48, 64, 96]   # optional, midplanes; default every box size
    block_shapes = [[1, 1, 1, 1], ...]   # optional, default every box of an allowed size
    failures = "none"                    # optional: the failure source when a scenario names none
    midplane_busy_w = 41093.75           # optional: watts of a busy midplane (power accounting)
    midplane_idle_w = 20000.0            # optional: watts of an idle midplane (default: half the busy)
    [sources]                            # optional: where each figure comes from
    dims = "ALCF machine overview"

Built-ins (each figure's source in :data:`MACHINES`):

=========  ============  ==========  ======  =============================================
name       generation    torus       nodes   blocks (midplanes)
=========  ============  ==========  ======  =============================================
bgl        Blue Gene/L   4x4x8       65,536  every box (BGL-FAULT's model)
intrepid   Blue Gene/P   4x4x5       40,960  1, 2, 4, 8, 16, 32, 64, 80
mira       Blue Gene/Q   2x3x4x4     49,152  1, 2, 4, 8, 16, 24, 32, 48, 64, 96
=========  ============  ==========  ======  =============================================
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from functools import cache, lru_cache
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from torus_sim.core.errors import ConfigurationError
from torus_sim.inputs.plugin_admission import is_import_path
from torus_sim.inputs.registry import Registry
from torus_sim.machine.topology import MAX_DIMENSIONS, Torus

__all__ = [
    "MACHINES",
    "MACHINE_ENTRY_POINTS",
    "MACHINE_REGISTRY",
    "MAX_NODES_PER_MIDPLANE",
    "Machine",
    "load_machine",
    "machine_torus",
    "parse_torus_dims",
]


@dataclass(frozen=True)
class Machine:
    """A Blue Gene machine as the scheduler sees it.

    Attributes:
        name: short name (``bgl``, ``intrepid``, ``mira`` or the file's ``name``).
        title: one line for headers and tables.
        dims: midplanes along each dimension of the midplane torus.
        wraps: per dimension, True for a ring, False for a mesh.
        nodes_per_midplane: compute nodes in one midplane (512 on every Blue Gene).
        block_sizes: allowed partition sizes in midplanes, None for every box size.
        block_shapes: allowed box shapes, None for every box of an allowed size.
        failures: the failure source a run on it meets when the scenario names none (``bundled``: the
            BG/L RAS sample; ``mira``: Mira's events; ``none``).
        sources: figure -> where it comes from.
        midplane_busy_w: watts one midplane draws running a job (the published full-machine draw at
            Linpack divided by the midplanes), None when unknown.
        midplane_idle_w: watts of an idle midplane, None when no figure is published (power
            accounting then takes half the busy draw and says so).

    References:
        BGL-FAULT §3.1; ALCF, "Machine Overview" and "Machine Partitions" for Mira.
    """

    name: str
    title: str
    dims: tuple[int, ...]
    wraps: tuple[bool, ...] | None = None
    nodes_per_midplane: int = 512
    block_sizes: tuple[int, ...] | None = None
    block_shapes: tuple[tuple[int, ...], ...] | None = None
    sources: dict[str, str] = field(default_factory=dict, compare=False, hash=False)
    failures: str = "none"
    midplane_busy_w: float | None = None
    midplane_idle_w: float | None = None

    @property
    def torus(self) -> Torus:
        """The midplane torus with this machine's wrap-around and allowed blocks.

        Raises:
            ConfigurationError: the description is inconsistent (see :class:`~torus_sim.machine.topology.Torus`).
        """
        return _torus(self.dims, self.wraps, self.block_sizes, self.block_shapes)

    @property
    def nodes(self) -> int:
        """Compute nodes of the whole machine."""
        return self.torus.size * self.nodes_per_midplane


@cache
def _torus(dims, wraps, block_sizes, block_shapes) -> Torus:
    return Torus(dims, wraps, block_sizes, block_shapes)


MACHINES: dict[str, Machine] = {
    "bgl": Machine(
        "bgl",
        "Blue Gene/L (LLNL): 4x4x8 supernodes of 512 nodes",
        (4, 4, 8),
        failures="bundled",
        midplane_busy_w=11_200.0,
        sources={
            "midplane_busy_w": "TOP500 June 2008, BlueGene/L at LLNL: 2,329.6 kW at Linpack for 104 racks (208 midplanes)",
            "dims": "BGL-FAULT §3.1: a 32x32x64 node torus seen as 4x4x8 supernodes of 8x8x8 nodes",
            "block_sizes": "BGL-FAULT §3.3 and Appendix 9: any box of supernodes, wrapping in every dimension",
        },
    ),
    "intrepid": Machine(
        "intrepid",
        "Blue Gene/P Intrepid (ALCF): 80 midplanes of 512 nodes, 4x4x5",
        (4, 4, 5),
        block_sizes=(1, 2, 4, 8, 16, 32, 64, 80),
        midplane_busy_w=15_750.0,
        sources={
            "midplane_busy_w": "TOP500 June 2008, Intrepid (Blue Gene/P, ANL): 1,260 kW at Linpack for 40 racks (80 midplanes)",
            "dims": (
                "40 racks of 2 midplanes of 8x8x8 nodes (ALCF Intrepid overview); the 80 midplanes taken as the "
                "4x4x5 midplane torus of a 32x32x40 node torus (not checked against ALCF's block list: give "
                "your own description with --machine file.toml to change it)"
            ),
            "block_sizes": "ALCF Intrepid prod queues: 512 to 32,768 nodes in powers of two, and the whole 40,960",
        },
    ),
    "mira": Machine(
        "mira",
        "Blue Gene/Q Mira (ALCF): 96 midplanes of 512 nodes, 2x3x4x4",
        (2, 3, 4, 4),
        block_sizes=(1, 2, 4, 8, 16, 24, 32, 48, 64, 96),
        failures="mira",
        midplane_busy_w=41_093.75,
        sources={
            "midplane_busy_w": "TOP500 June 2012, Mira (Blue Gene/Q, ANL): 3,945 kW at Linpack for 48 racks (96 midplanes)",
            "dims": (
                "ALCF 'Machine Overview for Mira': 48 racks of 2 midplanes, a 5-D node torus of 8x12x16x16x2; "
                "a midplane is 4x4x4x4x2 nodes, so the midplanes form a 2x3x4x4 torus"
            ),
            "block_sizes": (
                "ALCF 'Machine Partitions on Mira': prod-short / prod-long 512, 1,024, 2,048, 4,096 nodes; "
                "prod-capability 8,192, 12,288, 16,384, 24,576, 32,768, 49,152 nodes"
            ),
            "wraps": "the same page: every block a full torus (the 1,024 and 32,768 blocks also exist as mesh in one dimension)",
        },
    ),
}
"""The built-in machines by name (``--machine bgl|intrepid|mira``)."""


def parse_torus_dims(text: str) -> tuple[tuple[int, ...], tuple[bool, ...]]:
    """Read ``--torus-dims`` text: dimensions joined by ``x``, an ``m`` after a mesh dimension.

    Args:
        text: ``4x4x8``, ``2x3x4x4`` or ``4x4x8m`` (the last dimension a mesh).

    Returns:
        ``(dims, wraps)``.

    Raises:
        ConfigurationError: not 1 to 6 positive integers (ASCII digits 0-9) joined by ``x``.
    """
    dims, wraps = [], []
    for part in str(text).lower().replace(" ", "").split("x"):
        mesh = part.endswith("m")
        number = part[:-1] if mesh else part
        if not (number.isascii() and number.isdigit()) or int(number) < 1:  # 0-9 only: "٤" is a digit to Python
            raise ConfigurationError(
                f"torus dims {text!r}: expected 1 to {MAX_DIMENSIONS} positive integers joined by x, "
                "an m after a mesh dimension (4x4x8, 2x3x4x4, 4x4x8m)"
            )
        dims.append(int(number))
        wraps.append(not mesh)
    if not 1 <= len(dims) <= MAX_DIMENSIONS:
        raise ConfigurationError(f"torus dims {text!r}: a torus has 1 to {MAX_DIMENSIONS} dimensions, got {len(dims)}")
    return tuple(dims), tuple(wraps)


MAX_NODES_PER_MIDPLANE = 65_536
"""The most nodes a machine file may put in a midplane (a Blue Gene midplane has 512)."""


class _MachineFile(BaseModel):
    # strict: TOML gives typed values, so 1e12 for an integer or "yes" for a boolean is a mistake, not a conversion
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, strict=True)

    name: str = Field(min_length=1)
    title: str = ""
    dims: list[int] = Field(min_length=1, max_length=MAX_DIMENSIONS)
    wraps: list[bool] | None = None
    nodes_per_midplane: int = Field(512, ge=1, le=MAX_NODES_PER_MIDPLANE)
    block_sizes: list[int] | None = Field(None, min_length=1)
    block_shapes: list[list[int]] | None = Field(None, min_length=1)
    failures: str = "none"
    sources: dict[str, str] = {}
    midplane_busy_w: float | None = Field(None, ge=0)
    midplane_idle_w: float | None = Field(None, ge=0)


MACHINE_ENTRY_POINTS = "torus_sim.machines"
"""The entry-point group installed packages add their machine descriptions to (a :class:`Machine` instance)."""

MACHINE_REGISTRY: Registry[Machine] = Registry("machine", MACHINE_ENTRY_POINTS, Machine)
"""Machines by name: the built-ins (:data:`MACHINES`), installed packages' entry points, import paths."""

for _name, _machine in MACHINES.items():
    MACHINE_REGISTRY.register(_name, _machine)


def _checked_machine(spec: str) -> Machine:
    """A machine an entry point or an import path gives (an instance, or a class / marked factory of one), its torus checked."""
    machine = MACHINE_REGISTRY.build(spec)
    try:
        machine.torus  # noqa: B018 - checks the description now, with its name
    except ConfigurationError as error:
        raise ConfigurationError(f"machine {spec!r}: {error}") from None
    return machine


def load_machine(spec: str) -> Machine:
    """A built-in machine by name, or a machine description file (TOML, see the module docstring).

    Args:
        spec: ``bgl``, ``intrepid``, ``mira``, an installed package's machine (entry points
            ``torus_sim.machine.machines``), an import path to a :class:`Machine`, or a path to a ``.toml`` file.

    Returns:
        The machine; its torus is checked (dims, wraps, blocks that fit).

    Raises:
        ConfigurationError: an unknown name, a missing or unreadable file (a FIFO or a device is
            refused unread), a TOML syntax error, a wrong key or type (named with the file: a float
            for an integer or text for a boolean too), or an inconsistent torus.
    """
    if spec in MACHINES:
        return MACHINES[spec]
    path = Path(spec)
    if not spec.lower().endswith(".toml"):
        if spec in MACHINE_REGISTRY or is_import_path(spec):  # an installed package's machine, or an import path
            return _checked_machine(spec)
        installed = sorted(MACHINE_REGISTRY.iter_plugins())
        more = f", {', '.join(installed)}" if installed else ""
        raise ConfigurationError(f"unknown machine {spec!r}: choose from {', '.join(MACHINES)}{more} or give a .toml description")
    if path.exists() and not path.is_file():  # a FIFO or a device would block or never end
        raise ConfigurationError(f"machine description {path} is not a regular file (a directory, a FIFO or a device)")
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigurationError(f"machine description {path} does not exist") from None
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigurationError(f"machine description {path} cannot be read: {error}") from None
    except tomllib.TOMLDecodeError as error:
        raise ConfigurationError(f"machine description {path} is not valid TOML: {error}") from None
    try:
        described = _MachineFile(**data)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "file"
        raise ConfigurationError(f"machine description {path}: {where}: {first['msg']} (got {first.get('input')!r})") from None
    machine = Machine(
        described.name,
        described.title or f"{described.name}: {'x'.join(map(str, described.dims))} midplanes",
        tuple(described.dims),
        None if described.wraps is None else tuple(described.wraps),
        described.nodes_per_midplane,
        None if described.block_sizes is None else tuple(described.block_sizes),
        None if described.block_shapes is None else tuple(tuple(s) for s in described.block_shapes),
        dict(described.sources),
        described.failures,
        described.midplane_busy_w,
        described.midplane_idle_w,
    )
    try:
        machine.torus  # noqa: B018 - checks the description now, with the file's name
    except ConfigurationError as error:
        raise ConfigurationError(f"machine description {path}: {error}") from None
    return machine


@lru_cache(maxsize=64)
def machine_torus(machine: str | None, dims: tuple[int, ...], wraps: tuple[bool, ...] | None) -> Torus:
    """The torus of a machine name or description file, or of dims and wraps (cached: every sweep point asks).

    Args:
        machine: a built-in machine's name or a ``.toml`` path, or None.
        dims: supernodes along each dimension (used when ``machine`` is None).
        wraps: ring (True) or mesh (False) per dimension; None: every dimension a ring.

    Returns:
        The :class:`~torus_sim.machine.topology.Torus`.

    Raises:
        ConfigurationError: an unknown machine, an unreadable description or inconsistent dims.
    """
    if machine is not None:
        return load_machine(machine).torus
    return Torus(dims, wraps)
