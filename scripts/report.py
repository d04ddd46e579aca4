"""Tables the benchmark and acceptance scripts write: CSV for tools, Markdown for people."""

from __future__ import annotations

import csv
from pathlib import Path


def markdown_table(rows: list[dict]) -> str:
    """Rows with the same keys as a Markdown table (columns in the first row's key order)."""
    header = list(rows[0])
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(r[h]) for h in header) + " |" for r in rows]
    return "\n".join(lines)


def write_csv(path: Path, rows: list[dict]) -> None:
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def write_tables(rows: list[dict], out: Path, name: str, note: str = "") -> str:
    """Write ``out/name.csv`` and ``out/name.md`` (the table, then ``note``); returns the
    Markdown table."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    write_csv(out / f"{name}.csv", rows)
    table = markdown_table(rows)
    (out / f"{name}.md").write_text(table + "\n" + (f"\n{note}\n" if note else ""))
    return table
