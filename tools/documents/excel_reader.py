"""Every sheet of an .xlsx/.xlsm (openpyxl), .xls (xlrd) or .csv as text, with fill colours: parse_excel's reader.

openpyxl is read twice for .xlsx: cached values (what Excel showed) and formulas (shown where a
file written by a library has no cached value), so no cell silently reads as empty. This runs inside
the document worker (`tools.documents.readers`); the tool (`tools.documents.excel`) never calls it directly.
"""

from __future__ import annotations

import colorsys
import contextlib
import csv
import io
import zipfile
from pathlib import Path
from typing import Any, cast

from tools.core.errors import ToolFailure
from tools.documents.filetypes import looks_binary
from tools.documents.spreadsheet import Sheet, column_letter, render_sheet
from tools.documents.textio import decode_text

DEFAULT_MAX_ROWS = 200
SCAN_ROWS = 5000  # rows read for values and colours; beyond, only the row count is reported
STREAM_ABOVE_BYTES = 1024 * 1024


def read_spreadsheet(path: Path, max_rows: int = DEFAULT_MAX_ROWS) -> str:
    """All sheets of the workbook/CSV at `path`, rendered for the model; ToolFailure when unreadable."""
    data = path.read_bytes()
    if not data:
        raise ToolFailure(f"{path.name} is empty (0 bytes). Check that the right file was given.", "empty_file")
    suffix = path.suffix.lower()
    if suffix in (".csv", ".tsv"):
        if looks_binary(data[:4096]):
            raise ToolFailure(f"{path.name} is not a readable CSV file: its content is binary, not text. It may be "
                              "corrupt or another format; try read_file on it to see what it is.", "corrupt_file")
        sheets, kind = [_load_csv(data, path.name)], "CSV"
    elif data[:8] == b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1":
        if suffix in (".xlsx", ".xlsm") and b"E\x00n\x00c\x00r\x00y\x00p\x00t\x00i\x00o\x00n\x00" in data:
            raise ToolFailure(f"{path.name} is a password-protected (encrypted) workbook; "
                              "it cannot be read without the password. Look for the data elsewhere.", "encrypted")
        sheets, kind = _load_xls(path), "Excel 97-2003 workbook (.xls)"
    elif data[:2] == b"PK":
        sheets, kind = _load_xlsx(path, data, max(SCAN_ROWS, max_rows + 1)), "Excel workbook"
    else:
        raise ToolFailure(f"{path.name} is neither an Excel workbook nor a CSV file (unrecognised content). "
                          "Try read_file on it to see what it is.", "unsupported_type")
    header = (f"{kind} with {len(sheets)} sheet{'s' if len(sheets) != 1 else ''}: "
              + ", ".join(f'"{s.name}"' for s in sheets))
    body = [render_sheet(s, i, len(sheets), max_rows) for i, s in enumerate(sheets, start=1)]
    return "\n\n".join([header] + body)


def _load_xlsx(path: Path, data: bytes, scan_rows: int) -> list[Sheet]:
    import openpyxl
    from openpyxl.utils.exceptions import InvalidFileException

    # Large workbooks are streamed (read-only mode: far faster, but no merged-cell information).
    streamed = len(data) > STREAM_ABOVE_BYTES
    try:
        # A file object, not the path: openpyxl refuses paths whose extension it does not know.
        values_wb = openpyxl.load_workbook(io.BytesIO(data), data_only=True, read_only=streamed)
        # Formulas are only needed for cells without a cached value; skip the second parse when there are none.
        formulas_wb = (openpyxl.load_workbook(io.BytesIO(data), data_only=False, read_only=streamed)
                       if _has_formulas(path) else None)
        theme = _theme_colours(values_wb)
        return [_read_worksheet(ws, formulas_wb[ws.title] if formulas_wb is not None else None, theme, scan_rows)
                for ws in values_wb.worksheets]
    except (zipfile.BadZipFile, InvalidFileException, KeyError, OSError, ValueError, TypeError, SyntaxError) as exc:
        raise ToolFailure(f"{path.name} is not a readable .xlsx workbook ({type(exc).__name__}: {str(exc)[:120]}); "
                          "it may be corrupt or another format. Try read_file on it.", "corrupt_file") from None


def _read_worksheet(ws: Any, fws: Any, theme: list[str], scan_rows: int) -> Sheet:
    """Values (formula text where no cached value exists), fills and font colours of one worksheet."""
    total_rows = ws.max_row or 0
    rows: list[list[Any]] = []
    fills: dict[str, str] = {}
    fonts: dict[str, str] = {}
    formula_rows = fws.iter_rows(max_row=scan_rows, values_only=True) if fws is not None else None
    for r, row in enumerate(ws.iter_rows(max_row=scan_rows), start=1):
        formulas = next(formula_rows, ()) if formula_rows is not None else ()
        values = []
        for c, cell in enumerate(row):
            value = cell.value
            formula = formulas[c] if c < len(formulas) else None
            if value is None and isinstance(formula, str) and formula.startswith("="):
                value = f"{formula} (formula; no cached value)"
            values.append(value)
            ref = f"{column_letter(c)}{r}"
            fill = _fill_rgb(cell, theme)
            if fill:
                fills[ref] = fill
            font = getattr(cell, "font", None)
            colour = _rgb(font.color, theme) if font is not None else None
            if colour and colour != "000000" and value is not None:
                fonts[ref] = colour
        rows.append(values)
    merged = [str(m) for m in ws.merged_cells.ranges] if hasattr(ws, "merged_cells") else []
    return Sheet(name=ws.title, rows=rows, fills=fills, font_colours=fonts, merged=merged,
                 hidden=getattr(ws, "sheet_state", "visible") != "visible",
                 unscanned_rows=max(0, total_rows - scan_rows))


def _has_formulas(path: Path) -> bool:
    """True when any worksheet XML of the .xlsx contains a formula element."""
    with zipfile.ZipFile(path) as archive:
        for name in archive.namelist():
            if name.startswith("xl/worksheets/") and name.endswith(".xml"):
                data = archive.read(name)
                if b"<f>" in data or b"<f " in data:
                    return True
    return False


def _fill_rgb(cell: Any, theme: list[str]) -> str | None:
    fill = getattr(cell, "fill", None)  # read-only mode's EmptyCell has none
    if fill is None:
        return None
    if getattr(fill, "fill_type", None) == "solid" or getattr(fill, "patternType", None) not in (None, "none"):
        colour = _rgb(fill.fgColor, theme)
        if colour is None or (colour == "000000" and fill.fgColor.type == "indexed" and fill.fgColor.indexed == 64):
            return None  # indexed 64 = "system foreground": Excel's placeholder, not a chosen colour
        return colour
    stops = getattr(fill, "stop", None)  # gradient fill: report its first stop
    return _rgb(stops[0].color, theme) if stops else None


def _rgb(colour: Any, theme: list[str]) -> str | None:
    """'RRGGBB' of an openpyxl Color (rgb, indexed or theme+tint), or None."""
    if colour is None:
        return None
    from openpyxl.styles.colors import COLOR_INDEX

    kind = getattr(colour, "type", None)
    if kind == "rgb" and isinstance(colour.rgb, str):
        return colour.rgb[-6:].upper()
    if kind == "indexed" and isinstance(colour.indexed, int) and colour.indexed < len(COLOR_INDEX):
        return cast(str, COLOR_INDEX[colour.indexed][-6:].upper())
    if kind == "theme" and isinstance(colour.theme, int) and colour.theme < len(theme):
        return _tint(theme[colour.theme], colour.tint or 0.0)
    return None


def _theme_colours(wb: Any) -> list[str]:
    """Theme colours in Excel's index order (lt1, dk1, lt2, dk2, accent1-6, hlink, folHlink)."""
    from lxml import etree

    if not wb.loaded_theme:
        return []
    try:
        root = etree.fromstring(wb.loaded_theme)
    except etree.XMLSyntaxError:
        return []
    ns = {"a": "http://schemas.openxmlformats.org/drawingml/2006/main"}
    scheme = root.find(".//a:clrScheme", ns)
    if scheme is None:
        return []
    found: dict[str, str] = {}
    for child in scheme:
        name = etree.QName(child).localname
        srgb = child.find("a:srgbClr", ns)
        sys_ = child.find("a:sysClr", ns)
        found[name] = (srgb.get("val") if srgb is not None
                       else (sys_.get("lastClr") if sys_ is not None else "000000")) or "000000"
    order = ["lt1", "dk1", "lt2", "dk2", "accent1", "accent2", "accent3", "accent4", "accent5", "accent6",
             "hlink", "folHlink"]
    return [found.get(n, "000000").upper() for n in order]


def _tint(rgb: str, tint: float) -> str:
    """Apply Excel's tint (lighten > 0, darken < 0) to an RRGGBB colour."""
    if not tint:
        return rgb
    r, g, b = (int(rgb[i:i + 2], 16) / 255 for i in (0, 2, 4))
    hue, light, sat = colorsys.rgb_to_hls(r, g, b)
    light = light * (1 + tint) if tint < 0 else light * (1 - tint) + tint
    r, g, b = colorsys.hls_to_rgb(hue, min(max(light, 0), 1), sat)
    return "".join(f"{round(v * 255):02X}" for v in (r, g, b))


def _load_xls(path: Path) -> list[Sheet]:
    import xlrd

    try:
        book = xlrd.open_workbook(str(path), formatting_info=True)
    except Exception as exc:  # noqa: BLE001 - xlrd raises XLRDError, AssertionError, struct errors...
        raise ToolFailure(f"{path.name} is not a readable .xls workbook ({type(exc).__name__}: {str(exc)[:120]}). "
                          "It may be corrupt, or a different Office format; try read_file on it.",
                          "corrupt_file") from None
    sheets = []
    for sh in book.sheets():
        rows, fills = [], {}
        for r in range(sh.nrows):
            values = []
            for c in range(sh.ncols):
                cell = sh.cell(r, c)
                value: Any = cell.value
                if cell.ctype == xlrd.XL_CELL_EMPTY or cell.ctype == xlrd.XL_CELL_BLANK:
                    value = None
                elif cell.ctype == xlrd.XL_CELL_DATE:
                    with contextlib.suppress(Exception):  # out-of-range date: keep the serial number
                        value = xlrd.xldate_as_datetime(cell.value, book.datemode)
                elif cell.ctype == xlrd.XL_CELL_BOOLEAN:
                    value = bool(value)
                elif cell.ctype == xlrd.XL_CELL_ERROR:
                    value = xlrd.error_text_from_code.get(cell.value, "#ERROR")
                values.append(value)
                background = book.xf_list[cell.xf_index].background
                if background.fill_pattern:
                    rgb = book.colour_map.get(background.pattern_colour_index)
                    if rgb:
                        fills[f"{column_letter(c)}{r + 1}"] = "".join(f"{v:02X}" for v in rgb)
            rows.append(values)
        merged = [f"{column_letter(c0)}{r0 + 1}:{column_letter(c1 - 1)}{r1}" for r0, r1, c0, c1 in sh.merged_cells]
        sheets.append(Sheet(name=sh.name, rows=rows, fills=fills, merged=merged, hidden=bool(sh.visibility)))
    return sheets


def _load_csv(data: bytes, name: str) -> Sheet:
    text, _ = decode_text(data)
    sample = text[:20_000]
    try:
        dialect: Any = csv.Sniffer().sniff(sample, delimiters=",;\t|")
    except csv.Error:
        dialect = csv.excel_tab if name.lower().endswith(".tsv") else csv.excel
    try:
        rows = [[_number(v) for v in row] for row in csv.reader(io.StringIO(text), dialect)]
    except csv.Error as exc:
        raise ToolFailure(f"{name} is not valid CSV ({exc}). Try read_file to see its raw text.",
                          "corrupt_file") from None
    return Sheet(name=Path(name).stem, rows=rows)


def _number(value: str) -> Any:
    """CSV cells stay strings except plain numbers, so a header row is recognised as labels."""
    try:
        return int(value) if value.strip().lstrip("-").isdigit() else float(value) if value.strip() else None
    except ValueError:
        return value
