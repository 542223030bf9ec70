"""Print the markdown tables of docs/bgl_fault/README.md from the stored results.csv files.

Run from the repository root after the experiments (see the README there):

    python docs/bgl_fault/tables.py
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

HERE = Path(__file__).resolve().parent


def load(name: str) -> pd.DataFrame | None:
    path = HERE / name / "results.csv"
    if not path.exists():
        return None
    table = pd.read_csv(path)
    table["log"] = table["workload"].str.contains("SDSC").map({True: "SDSC", False: "NASA"})
    return table


def markdown(frame: pd.DataFrame, digits: int) -> str:
    frame = frame.round(digits)
    header = (
        "| "
        + " | ".join(
            [str(frame.index.name or "")] + [" ".join(map(str, c)) if isinstance(c, tuple) else str(c) for c in frame.columns]
        )
        + " |"
    )
    rule = "|" + "---|" * (len(frame.columns) + 1)
    rows = [
        "| " + " | ".join([str(index)] + [f"{v:,.{digits}f}" for v in row]) + " |"
        for index, row in zip(frame.index, frame.values, strict=True)
    ]
    return "\n".join([header, rule, *rows])


def main() -> None:
    for name in ("failures_sdsc", "failures_sdsc_bursty"):
        table = load(name)
        if table is None:
            continue
        print(f"### {name}: avg bounded slowdown (columns: c, a)\n")
        print(
            markdown(table.pivot_table(index="failures", columns=["load_scale", "confidence"], values="avg_bounded_slowdown"), 1)
        )
        print(f"\n### {name}: ω_util / ω_lost at a = 0.1\n")
        sub = table[table["confidence"] == 0.1].pivot_table(
            index="failures", columns="load_scale", values=["omega_util", "omega_unused", "omega_lost"]
        )
        print(markdown(sub, 3))
        print()
    for name, parameter in (
        ("confidence", "confidence"),
        ("confidence_rate1000", "confidence"),
        ("confidence_bursty", "confidence"),
        ("accuracy", "accuracy"),
        ("accuracy_rate1000", "accuracy"),
        ("accuracy_bursty", "accuracy"),
    ):
        table = load(name)
        if table is None:
            continue
        print(f"### {name}: avg bounded slowdown (columns: log, c)\n")
        print(markdown(table.pivot_table(index=parameter, columns=["log", "load_scale"], values="avg_bounded_slowdown"), 1))
        print(f"\n### {name}: ω_util (columns: log, c)\n")
        print(markdown(table.pivot_table(index=parameter, columns=["log", "load_scale"], values="omega_util"), 3))
        print()


if __name__ == "__main__":
    main()
