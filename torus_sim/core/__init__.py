"""What every layer uses: the errors, the job, its columns, files and disk tables, the version.

Nothing here knows a machine, a policy or the engine: each module is a leaf the others build on.
"""
