"""The ``torus-sim`` subcommands: one module each, each with ``NAMES``, ``add_parser(commands)`` and ``main(args)``.

Key components:

- :mod:`~torus_sim.interfaces.commands.run`: ``run``, one run from options or a scenario file.
- :mod:`~torus_sim.interfaces.commands.sweep`: ``sweep`` (``experiment``), a scenario file's grid on any executor.
- :mod:`~torus_sim.interfaces.commands.calibrate`: ``calibrate``, a site's production settings fitted on one part of a log.
- :mod:`~torus_sim.interfaces.commands.data`: ``data``, the field's logs by name (list, fetch, path, cite).
- :mod:`~torus_sim.interfaces.commands.convert`: ``convert``, a batch system's accounting (sacct, PBS) as an SWF log.
- :mod:`~torus_sim.interfaces.commands.viz`: ``viz``, the browser view.
- :mod:`~torus_sim.interfaces.commands.compile`: ``compile``, the reservation kernels compiled ahead of the first run.
- :mod:`~torus_sim.interfaces.commands.figure`: ``figure``, one paper figure redrawn from stored results.
- :mod:`~torus_sim.interfaces.commands.compare`: ``compare``, two cases of a finished sweep paired run by run.
- :mod:`~torus_sim.interfaces.commands.summarize`: ``summarize``, expected and maximum ratios over batch results.
- :mod:`~torus_sim.interfaces.commands.generate_rigid`: ``generate-rigid``, a RIGID job set in the reference code's formats.
- :mod:`~torus_sim.interfaces.commands.ckpt`: ``ckpt-tables`` and ``ckpt-compare`` (CKPT-MIG).
- :mod:`~torus_sim.interfaces.commands.removed`: ``flat`` and ``online``, removed in 0.2 (they print the new form).
- :mod:`~torus_sim.interfaces.commands.arguments` and :mod:`~torus_sim.interfaces.commands.scenario_options`: the option types and the
  scenario's fields as options, shared by the subcommands.

:mod:`torus_sim.interfaces.cli` builds the parser from :data:`SUBCOMMANDS` and dispatches to the chosen module's ``main``;
each ``main`` returns the exit code (0, or 2 with one sentence on standard error) or raises a
:class:`~torus_sim.core.errors.TorusSimError` that the command line turns into that sentence.
"""

from __future__ import annotations

from torus_sim.interfaces.commands import (
    calibrate,
    ckpt,
    compare,
    compile,
    convert,
    data,
    figure,
    generate_rigid,
    removed,
    run,
    summarize,
    sweep,
    viz,
)

__all__ = ["SUBCOMMANDS"]

SUBCOMMANDS = (run, sweep, calibrate, compare, data, convert, viz, compile, ckpt, figure, summarize, generate_rigid, removed)
"""The subcommand modules, in the order ``torus-sim --help`` lists them."""
