"""Run the documentation's notebooks and keep their outputs in the files, or check that the code still makes them.

    python docs/notebooks/execute.py            # run every notebook here, write its outputs into it (a deliberate change)
    python docs/notebooks/execute.py --check    # run them, compare with the outputs committed (exit 1 on a difference)

Each notebook runs in a scratch folder (what it writes, ``runs/quickstart``, stays there), with nbclient
and the ``python3`` kernel. The comparison covers every text output (printed text, tables' plain text)
with the run's wall-clock time (``(1.8 s)``) left out; a figure must be there, its pixels are not compared
(they follow the installed matplotlib). The site shows the committed outputs (mkdocs-jupyter, not executed
at build time), so this check is what keeps the page true.
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
NOTEBOOKS = sorted(HERE.glob("*.ipynb"))
_TIMING = re.compile(r"\(\d+(?:\.\d+)? s\)")


def execute(path: Path, timeout: int = 600):
    """The notebook at ``path`` with every cell run in a scratch folder (an nbformat NotebookNode).

    Raises:
        nbclient.exceptions.CellExecutionError: a cell raised (its traceback in the message).
    """
    import nbformat
    from nbclient import NotebookClient

    notebook = nbformat.read(path, as_version=4)
    with tempfile.TemporaryDirectory(prefix="torus-sim-notebook-") as folder:
        NotebookClient(notebook, timeout=timeout, kernel_name="python3", resources={"metadata": {"path": folder}}).execute()
    for cell in notebook.cells:  # the kernel's own start-up warnings are not the notebook's output
        if cell.cell_type == "code":
            cell.outputs = [out for out in cell.outputs if not (out.output_type == "stream" and out.name == "stderr")]
    return notebook


def texts(notebook) -> list[list[str]]:
    """Each code cell's text outputs (streams, plain-text data), wall-clock times masked; figures as ``<figure>``."""
    cells = []
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        shown = []
        for out in cell.outputs:
            if out.output_type == "stream":
                shown.append(_TIMING.sub("(... s)", out.text))
            elif "data" in out:
                shown.append(
                    "<figure>" if "image/png" in out["data"] else _TIMING.sub("(... s)", out["data"].get("text/plain", ""))
                )
        cells.append(shown)
    return cells


def main(argv: list[str] | None = None) -> int:
    """Write (default) or ``--check`` every notebook here; exit 0, or 1 when a check finds a difference."""
    import nbformat

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare with the committed outputs instead of writing")
    args = parser.parse_args(argv)
    failed = 0
    for path in NOTEBOOKS:
        fresh = execute(path)
        if not args.check:
            nbformat.write(fresh, path)
            print(f"wrote {path.relative_to(HERE.parents[1])}")
            continue
        committed = texts(nbformat.read(path, as_version=4))
        for number, (old, new) in enumerate(zip(committed, texts(fresh), strict=True), start=1):
            if old != new:
                failed += 1
                print(f"{path.name}: code cell {number} differs:\n--- committed\n{''.join(old)}\n--- now\n{''.join(new)}")
        print(f"{path.name}: {'differs' if failed else 'as committed'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
