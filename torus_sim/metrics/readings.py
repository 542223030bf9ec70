"""The readings of PV-EASY's strict fairness and reservation violation.

They live apart from the metrics that compute them (:mod:`torus_sim.metrics.online`) so that the
scenario's defaults, and the command line's parser, read them without importing pandas.
"""

FAIRNESS_READINGS = ("backfilled", "shadow")
"""The readings of PV-EASY's strict fairness and reservation violation (see :func:`fairness_table`)."""

DEFAULT_FAIRNESS_READING = "backfilled"
"""The reading the summaries use unless told (see docs/pv_easy for what each gives on CTC)."""
