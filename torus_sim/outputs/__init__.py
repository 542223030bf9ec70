"""The outputs: the record's columns, the papers' tables and figures, the field's exchange formats.

:mod:`~torus_sim.outputs.output_columns` (every jobs.csv column declared once), :mod:`~torus_sim.outputs.reports`
(tables), :mod:`~torus_sim.outputs.figures` (matplotlib figures) and :mod:`~torus_sim.outputs.formats`
(SWF schedules, Batsim, Parquet, accounting logs converted to SWF).
"""
