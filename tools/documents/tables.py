"""Markdown tables: the one table format every document tool emits (PDF, Word, PowerPoint, Excel)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def cell_text(value: Any) -> str:
    """A cell as one line of table text: None -> '', pipes escaped, line breaks as spaces."""
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        value = int(value)
    text = str(value).replace("\r\n", " ").replace("\n", " ").replace("\r", " ")
    return text.replace("|", "\\|").strip()


def markdown_table(header: Sequence[Any], rows: Sequence[Sequence[Any]]) -> str:
    """Render `header` and `rows` as a markdown table, padding short rows to the widest one."""
    width = max([len(header)] + [len(r) for r in rows]) if (header or rows) else 0
    if width == 0:
        return "(empty table)"

    def line(cells: Sequence[Any]) -> str:
        padded = [cell_text(c) for c in cells] + [""] * (width - len(cells))
        return "| " + " | ".join(padded) + " |"

    out = [line(header), "|" + "|".join(["---"] * width) + "|"]
    out.extend(line(r) for r in rows)
    return "\n".join(out)
