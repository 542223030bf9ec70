"""The field's exchange formats, in and out.

Key components:
    batsim: Batsim's job record (``batsim_jobs.csv``, read by evalys) and Batsim JSON workloads.
    swf_schedule: the simulated schedule as a Standard Workload Format file.
    parquet: results tables as Parquet with the run manifest in the file's metadata (needs pyarrow).
"""
