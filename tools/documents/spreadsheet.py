"""A loaded sheet and how it is shown to the model: Excel row numbers, column letters, fill colours.

Row numbers in the output are the sheet's own (1-based), so "row 7" means the same thing to the
model, to the question and to `pandas.read_excel` users. Fill colours are listed per colour
because GAIA asks things like "how many green cells".
"""

from __future__ import annotations

import colorsys
import datetime as dt
from dataclasses import dataclass, field
from typing import Any

from tools.documents.tables import cell_text, markdown_table


def column_letter(index: int) -> str:
    """0 -> 'A', 25 -> 'Z', 26 -> 'AA'."""
    letters = ""
    index += 1
    while index:
        index, rem = divmod(index - 1, 26)
        letters = chr(65 + rem) + letters
    return letters


def colour_name(rgb: str) -> str:
    """A plain-words name of an RRGGBB colour from its hue and lightness (a hint; the hex value is exact)."""
    try:
        r, g, b = (int(rgb[i:i + 2], 16) / 255 for i in (0, 2, 4))
    except ValueError:
        return "unknown"
    hue, light, sat = colorsys.rgb_to_hls(r, g, b)
    if light >= 0.96:
        return "white"
    if light <= 0.08:
        return "black"
    shade = "light " if light >= 0.75 else "dark " if light <= 0.3 else ""
    if sat < 0.15:
        return f"{shade}gray"
    degrees = hue * 360
    for limit, name in ((15, "red"), (48, "orange"), (70, "yellow"), (165, "green"), (195, "cyan"),
                        (255, "blue"), (290, "purple"), (335, "pink"), (361, "red")):
        if degrees < limit:
            return shade + name
    return "unknown"


@dataclass
class Sheet:
    """One sheet's values (rows[0] is sheet row 1) and formatting worth telling the model about."""

    name: str
    rows: list[list[Any]]
    fills: dict[str, str] = field(default_factory=dict)
    """Cell reference ('B3') -> fill colour 'RRGGBB'."""
    font_colours: dict[str, str] = field(default_factory=dict)
    """Cell reference -> non-default font colour 'RRGGBB'."""
    merged: list[str] = field(default_factory=list)
    hidden: bool = False
    unscanned_rows: int = 0
    """Rows past the part that was read (very long sheets); counted, not shown."""


def format_value(value: Any) -> Any:
    """Dates without a time part as YYYY-MM-DD, datetimes as ISO, other values unchanged."""
    if isinstance(value, dt.datetime):
        return value.date().isoformat() if value.time() == dt.time(0) else value.isoformat(sep=" ")
    if isinstance(value, (dt.date, dt.time)):
        return value.isoformat()
    return value


def _trim(rows: list[list[Any]], keep_rows: int, keep_cols: int) -> list[list[Any]]:
    """Drop trailing empty rows/columns, keeping at least the extent that carries colours."""
    def empty(v: Any) -> bool:
        return v is None or (isinstance(v, str) and not v.strip())

    last_row = max([i + 1 for i, r in enumerate(rows) if any(not empty(v) for v in r)] + [keep_rows])
    rows = rows[:last_row]
    last_col = max([j + 1 for r in rows for j, v in enumerate(r) if not empty(v)] + [keep_cols])
    return [(r + [None] * last_col)[:last_col] for r in rows]


def _header_is_labels(rows: list[list[Any]]) -> bool:
    """Row 1 looks like column labels: at least two rows, and row 1's filled cells are all non-numeric text."""
    if len(rows) < 2:
        return False
    filled = [v for v in rows[0] if v not in (None, "")]
    return len(filled) >= max(1, len(rows[0]) // 2) and all(isinstance(v, str) for v in filled)


def _cell_lists(cells: dict[str, str], title: str, limit: int = 300) -> list[str]:
    by_colour: dict[str, list[str]] = {}
    for ref, rgb in cells.items():
        by_colour.setdefault(rgb, []).append(ref)
    lines = [f"{title} ({len(cells)} cell{'s' if len(cells) != 1 else ''}, "
             f"{len(by_colour)} colour{'s' if len(by_colour) != 1 else ''}):"]
    for rgb, refs in sorted(by_colour.items(), key=lambda kv: -len(kv[1])):
        shown = ", ".join(refs[:limit]) + (f", …(+{len(refs) - limit} more)" if len(refs) > limit else "")
        lines.append(f"- #{rgb} (≈{colour_name(rgb)}), {len(refs)} cell{'s' if len(refs) != 1 else ''}: {shown}")
    return lines


def render_sheet(sheet: Sheet, position: int, count: int, max_rows: int) -> str:
    """The sheet as a markdown table with row numbers and column letters, then its colours."""
    coloured = list(sheet.fills) + list(sheet.font_colours)
    keep_rows = max((_row_of(ref) for ref in coloured), default=0)
    keep_cols = max((_col_of(ref) for ref in coloured), default=0)
    rows = _trim([[format_value(v) for v in r] for r in sheet.rows], keep_rows, keep_cols)
    n_rows, n_cols = len(rows), (len(rows[0]) if rows else 0)
    all_rows = n_rows + sheet.unscanned_rows
    extent = f"A1:{column_letter(n_cols - 1)}{all_rows}" if n_rows and n_cols else "empty"
    title = f'=== Sheet {position} of {count}: "{sheet.name}"{" (hidden)" if sheet.hidden else ""} — ' \
            f"{all_rows} rows × {n_cols} columns ({extent}) ==="
    if not n_rows or not n_cols:
        return title + "\n(this sheet is empty)"
    letters = [column_letter(j) for j in range(n_cols)]
    out = [title]
    valueless = all(v is None or (isinstance(v, str) and not v.strip()) for r in rows for v in r)
    if valueless:
        out.append("(no cell holds a value; the sheet carries only formatting, listed below)")
        rows = []
    if not rows:
        header, first = ["Row"] + letters, 1
    elif _header_is_labels(rows):
        header = ["Row"] + [f"{L}: {cell_text(v)}" if v not in (None, "") else L
                            for L, v in zip(letters, rows[0], strict=True)]
        first = 2
        out.append("Row 1 holds the column labels (shown in the table header); data rows keep their sheet row numbers.")
    else:
        header, first = ["Row"] + letters, 1
    body_rows = rows[first - 1:]
    shown = body_rows[:max_rows]
    if shown:
        out.append(markdown_table(header, [[first + i] + r for i, r in enumerate(shown)]))
    hidden_rows = len(body_rows) - len(shown) + sheet.unscanned_rows
    if hidden_rows > 0:
        cut_from = first + len(shown)
        out.append(f"…[{hidden_rows} rows not shown (rows {cut_from}–{n_rows + sheet.unscanned_rows}); "
                   f"compute over all rows with run_python, e.g. pandas.read_excel(path, sheet_name={sheet.name!r})]")
    if sheet.unscanned_rows and (sheet.fills or sheet.font_colours):
        out.append(f"(colours below are listed for rows 1–{len(sheet.rows)} only)")
    if sheet.merged:
        out.append("Merged cells: " + ", ".join(sheet.merged[:50]))
    if sheet.fills:
        out.extend(_cell_lists(sheet.fills, "Cell fill colours"))
        # The map helps spatial questions (paths over coloured cells); a handful of cells reads fine as a list.
        grid = _fill_grid(sheet.fills) if valueless or len(sheet.fills) >= 10 else None
        if grid:
            out.append(grid)
    if sheet.font_colours:
        out.extend(_cell_lists(sheet.font_colours, "Font colours (non-default)"))
    return "\n".join(out)


def _fill_grid(fills: dict[str, str], max_rows: int = 60, max_cols: int = 40) -> str | None:
    """A compact map of fill colours (one code letter per colour) for spatial questions; None if too large."""
    rows = max(_row_of(ref) for ref in fills)
    cols = max(_col_of(ref) for ref in fills)
    if rows > max_rows or cols > max_cols:
        return None
    counts: dict[str, int] = {}
    for rgb in fills.values():
        counts[rgb] = counts.get(rgb, 0) + 1
    codes = {rgb: "abcdefghijklmnopqrstuvwxyz"[i] if i < 26 else "?" for i, rgb in
             enumerate(sorted(counts, key=lambda c: -counts[c]))}
    legend = ", ".join(f"{code} = #{rgb} (≈{colour_name(rgb)})" for rgb, code in codes.items())
    table = [[r] + [codes.get(fills.get(f"{column_letter(c)}{r}", ""), ".") for c in range(cols)]
             for r in range(1, rows + 1)]
    return (f"Fill colour map ({legend}; . = no fill):\n"
            + markdown_table(["Row"] + [column_letter(c) for c in range(cols)], table))


def _row_of(ref: str) -> int:
    return int("".join(c for c in ref if c.isdigit()) or 0)


def _col_of(ref: str) -> int:
    number = 0
    for c in ref:
        if c.isalpha():
            number = number * 26 + (ord(c.upper()) - 64)
    return number
