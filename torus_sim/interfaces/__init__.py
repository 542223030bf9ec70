"""How people drive torus-sim: the command line, the browser view and the plug-in surface.

:mod:`~torus_sim.interfaces.cli` and :mod:`~torus_sim.interfaces.commands` (``torus-sim run | sweep |
figure | viz | ...``), :mod:`~torus_sim.interfaces.viz` (the Solara browser view) and
:mod:`~torus_sim.interfaces.api` (the stable surface for a plug-in, imported as ``torus_sim.api``).
"""
