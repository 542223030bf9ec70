"""Results tables as Parquet, with the run's manifest in the file's key-value metadata.

Parquet keeps the column types (a job id stays an integer, a time a float64) and reads in a fraction
of the time of a CSV. The manifest (configuration, input hashes, summary) is stored under the key
``torus_sim_manifest`` as JSON, so a table carries what produced it. Needs pyarrow (``pip install
torus-sim[parquet]``).

References:
    Apache Parquet format (key-value metadata); pyarrow ``pyarrow.parquet.write_table``.
"""

from __future__ import annotations

import io
import json

import pandas as pd

from torus_sim.core.errors import ConfigurationError

__all__ = ["MANIFEST_KEY", "parquet_bytes", "read_manifest"]

MANIFEST_KEY = b"torus_sim_manifest"
"""The metadata key of the manifest (JSON) in every Parquet file torus-sim writes."""


def _pyarrow():
    try:
        import pyarrow
        import pyarrow.parquet
    except ImportError:
        raise ConfigurationError("Parquet output needs pyarrow: pip install 'torus-sim[parquet]'") from None
    return pyarrow


def parquet_bytes(table: pd.DataFrame, manifest: dict) -> bytes:
    """A table as Parquet file bytes, the manifest in the schema's metadata.

    Args:
        table: the results table.
        manifest: JSON-ready dictionary (``RunResult.manifest()`` or a sweep's manifest).

    Returns:
        The bytes of a complete Parquet file.

    Raises:
        ConfigurationError: pyarrow is not installed.
    """
    pyarrow = _pyarrow()
    arrow = pyarrow.Table.from_pandas(table, preserve_index=False)
    metadata = dict(arrow.schema.metadata or {})
    metadata[MANIFEST_KEY] = json.dumps(manifest, sort_keys=True, default=str).encode()
    arrow = arrow.replace_schema_metadata(metadata)
    sink = io.BytesIO()
    pyarrow.parquet.write_table(arrow, sink)
    return sink.getvalue()


def read_manifest(path) -> dict:
    """The manifest stored in a Parquet file torus-sim wrote.

    Raises:
        ConfigurationError: pyarrow is not installed.
        KeyError: the file holds no torus-sim manifest.
    """
    pyarrow = _pyarrow()
    metadata = pyarrow.parquet.read_schema(path).metadata or {}
    return json.loads(metadata[MANIFEST_KEY])
