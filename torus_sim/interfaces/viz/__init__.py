"""The browser view: a Mesa SolaraViz page that steps any scenario and draws it.

Key components (nothing is imported here: importing the package costs nothing until a module is asked for):

- :mod:`~torus_sim.interfaces.viz.app`: the Solara page (``torus-sim viz`` serves it; ``solara run torus_sim/interfaces/viz/app.py``),
  its live charts, the ``/compare`` page.
- :mod:`~torus_sim.interfaces.viz.menus`: the choices the page offers (platforms, machines, policies, workloads, failures).
- :mod:`~torus_sim.interfaces.viz.controls`: the scenario controls, applied together.
- :mod:`~torus_sim.interfaces.viz.model`: the model the page steps and what the page says of it.
- :mod:`~torus_sim.interfaces.viz.charts`: the Vega-Lite drawings (the machine, the Gantt chart, the series), from the
  node agents and the record only.
- :mod:`~torus_sim.interfaces.viz.session`: a closed tab's session freed after the cull timeout.
"""
