"""parse_pdf and parse_excel on real generated files: pages, tables, sheets, row numbers, colours, failures."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from config import load_settings
from tests.support import fixtures as fx
from tools.core.executor import run_tool
from tools.core.registry import build_registry
from tools.documents.excel import make_excel_tools
from tools.documents.excel_reader import read_spreadsheet
from tools.documents.files import make_file_tools
from tools.documents.pdf import make_pdf_tools
from tools.documents.spreadsheet import colour_name, column_letter
from tools.web import make_web_tools


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Path]:
    directory = tmp_path_factory.mktemp("docs")
    made = fx.make_all(directory)
    made["scan.pdf"] = fx.make_scanned_pdf(directory)
    made["locked.pdf"] = fx.make_pdf(directory, "locked.pdf", password="s3cret")
    return made


@pytest.fixture()
def settings():
    return load_settings()


@pytest.fixture()
def parse_pdf(settings):
    return make_pdf_tools(settings)[0]


@pytest.fixture()
def parse_excel(settings):
    return make_excel_tools(settings)[0]


def test_registry_builds_the_document_tools(settings):
    registry = build_registry(settings, [("extension", make_pdf_tools), ("extension", make_excel_tools),
                                         ("base", make_file_tools), ("base", make_web_tools)])
    assert registry.names == ["parse_pdf", "parse_excel", "read_file", "web_search", "fetch_webpage", "find_in_page"]
    assert registry.missing == {}
    for tool in registry.tools:
        assert "Args:" in tool.description, tool.name


# --- parse_pdf -------------------------------------------------------------------------------------

def test_pdf_pages_are_headed_and_table_is_markdown(parse_pdf, files):
    out = parse_pdf.invoke({"path": str(files["report.pdf"])})
    assert out.startswith("report.pdf (") and ": 3 pages" in out.splitlines()[0]
    p1, p2, p3 = (out.index(f"--- Page {n} ---") for n in (1, 2, 3))
    assert p1 < out.index("Revenue grew by 10 percent") < p2 < out.index("Revenue grew by 20 percent") < p3
    table = out[out.index("Table 1 on page 3:"):]
    assert out.index("Table 1 on page 3:") > p3
    assert ("| Item | Count | Price |\n|---|---|---|\n| Apples | 12 | 0.50 |\n| Pears | 7 | 0.75 |\n"
            "| Plums | 30 | 0.20 |") in table


def test_long_pdf_is_paged_with_pdf_page_numbers_to_the_last_page(tmp_path):
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_font("Helvetica", size=11)
    for number in range(1, 41):
        pdf.add_page()
        pdf.multi_cell(0, 6, f"Page marker {number}. " + "Lorem ipsum dolor sit amet. " * 40)
    path = tmp_path / "long.pdf"
    pdf.output(str(path))
    settings = load_settings(MAX_FILE_SIZE=3000)
    tool = make_pdf_tools(settings)[0]
    out = tool.invoke({"path": str(path)})
    assert ": 40 pages" in out and "Page marker 1." in out and "Page marker 40." not in out
    pages = int(out.split("[page 1 of ")[1].split("]")[0])
    assert f'Next: parse_pdf(path="{path}", page=2)' in out and len(out) <= 3000
    last = tool.invoke({"path": str(path), "page": pages})
    assert "--- Page 40 ---" in last and "Page marker 40." in last


def test_encrypted_pdf(parse_pdf, settings, files):
    outcome = run_tool(parse_pdf, {"path": str(files["locked.pdf"])}, settings)
    assert not outcome.ok and outcome.error_kind == "encrypted" and "password-protected" in outcome.output


def test_scanned_pdf_pages_are_rendered_for_ocr(parse_pdf, files):
    out = parse_pdf.invoke({"path": str(files["scan.pdf"])})
    assert "no text layer" in out and "image_ocr" in out
    page = Path(out.split("Pages rendered to images: ")[1].split(". Call")[0])
    assert page.read_bytes()[:4] == b"\x89PNG"


@pytest.mark.integration
@pytest.mark.skipif(shutil.which("tesseract") is None, reason="tesseract not installed")
def test_rendered_scan_page_is_readable_by_tesseract(parse_pdf, files):
    out = parse_pdf.invoke({"path": str(files["scan.pdf"])})
    page = out.split("Pages rendered to images: ")[1].split(". Call")[0]
    text = subprocess.run(["tesseract", page, "-"], capture_output=True, text=True, timeout=60).stdout
    assert "HELLO 42" in text


@pytest.mark.parametrize("maker, fragment, kind", [
    (lambda d: fx.make_corrupt(d, ".pdf"), "corrupt or not a valid PDF", "corrupt_file"),
    (lambda d: fx.make_empty(d, ".pdf"), "is empty (0 bytes)", "empty_file"),
    (lambda d: fx.make_csv(d, "table.pdf"), "is not a PDF", "corrupt_file"),
])
def test_bad_pdfs(parse_pdf, settings, tmp_path, maker, fragment, kind):
    outcome = run_tool(parse_pdf, {"path": str(maker(tmp_path))}, settings)
    assert not outcome.ok and outcome.error_kind == kind and fragment in outcome.output


def test_missing_pdf(parse_pdf, settings):
    outcome = run_tool(parse_pdf, {"path": "/no/such/file.pdf"}, settings)
    assert not outcome.ok and outcome.error_kind == "missing_file"


# --- parse_excel ------------------------------------------------------------------------------------

def test_every_sheet_is_named_with_sheet_row_numbers_and_column_labels(parse_excel, files):
    out = parse_excel.invoke({"path": str(files["sales.xlsx"])})
    assert 'Excel workbook with 3 sheets: "Sales", "Inventory", "Secret"' in out
    assert '=== Sheet 1 of 3: "Sales"' in out and '=== Sheet 2 of 3: "Inventory"' in out
    assert '=== Sheet 3 of 3: "Secret" (hidden)' in out and "| 1 | hidden value |" in out
    assert "| Row | A: Name | B: Qty | C: Price | D: Total | E: Date |" in out
    assert "| 4 | Carol | 4 | 10 | =B4*C4 (formula; no cached value) | 2023-01-04 |" in out  # sheet row 4
    assert "Merged cells: G1:H1" in out


def test_fill_colours_are_listed_per_colour(parse_excel, files):
    out = parse_excel.invoke({"path": str(files["sales.xlsx"])})
    assert f"- #{fx.GREEN} (≈green), 2 cells: A4, A5" in out
    assert f"- #{fx.YELLOW} (≈yellow), 1 cell: B3" in out
    assert "- #4F81BD (≈blue), 1 cell: C6" in out  # theme colour accent1 resolved from the theme
    assert "Fill colour map" not in out  # four coloured cells read fine as a list
    assert "Font colours (non-default) (1 cell, 1 colour):\n- #FF0000 (≈red), 1 cell: A2" in out


def test_colour_only_sheet_keeps_its_grid(parse_excel, files):
    out = parse_excel.invoke({"path": str(files["grid.xlsx"])})
    assert '"Map" — 4 rows × 4 columns (A1:D4)' in out
    assert "no cell holds a value" in out and "| 4 |  |  |  |  |" not in out
    assert f"- #{fx.GREEN} (≈green), 3 cells: A1, B2, C3" in out and f"- #{fx.RED} (≈red), 1 cell: D4" in out
    assert f"a = #{fx.GREEN} (≈green), b = #{fx.RED} (≈red); . = no fill" in out
    assert "| Row | A | B | C | D |\n|---|---|---|---|---|\n| 1 | a | . | . | . |\n| 2 | . | a | . | . |" in out
    assert "| 4 | . | . | . | b |" in out


def test_long_sheets_are_cut_with_a_note(files):
    out = read_spreadsheet(files["sales.xlsx"], max_rows=50)
    inventory = out[out.index('"Inventory"'):]
    assert "| 51 | SKU-0050 | 100 |" in inventory and "SKU-0051" not in inventory
    assert f"…[{fx.INVENTORY_ROWS - 50} rows not shown (rows 52–{fx.INVENTORY_ROWS + 1})" in inventory
    assert "pandas.read_excel(path, sheet_name='Inventory')" in inventory


def test_xls_workbook_with_fill(parse_excel, files):
    out = parse_excel.invoke({"path": str(files["legacy.xls"])})
    assert 'Excel 97-2003 workbook (.xls) with 2 sheets: "Legacy", "Empty"' in out
    assert "| Row | A: City | B: Population |" in out and "| 3 | Bergen | 286000 |" in out
    assert "- #FFFF00 (≈yellow), 1 cell: A3" in out
    assert '"Empty" — 0 rows × 0 columns (empty) ===\n(this sheet is empty)' in out


def test_csv_as_a_table(parse_excel, files):
    out = parse_excel.invoke({"path": str(files["table.csv"])})
    assert "CSV with 1 sheet" in out and "| Row | A: name | B: score |" in out and "| 4 | smith, jo | 85 |" in out


def test_semicolon_csv_is_sniffed(parse_excel, tmp_path):
    path = tmp_path / "euro.csv"
    path.write_text("city;temp\nRome;31\nOslo;18\n")
    assert "| 3 | Oslo | 18 |" in parse_excel.invoke({"path": str(path)})


@pytest.mark.parametrize("suffix", [".xlsx", ".xls", ".csv"])
def test_corrupt_and_empty_spreadsheets(parse_excel, settings, tmp_path, suffix):
    corrupt = run_tool(parse_excel, {"path": str(fx.make_corrupt(tmp_path, suffix))}, settings)
    empty = run_tool(parse_excel, {"path": str(fx.make_empty(tmp_path, suffix))}, settings)
    assert not corrupt.ok and corrupt.error_kind == "corrupt_file" and len(corrupt.output) < 400
    assert corrupt.output.startswith(f"Error: corrupt{suffix} is not a readable ")
    assert not empty.ok and empty.error_kind == "empty_file"


def test_text_named_xlsx_is_refused_with_a_pointer(parse_excel, settings, tmp_path):
    fake = tmp_path / "report.xlsx"
    fake.write_text("<html>Access denied</html>")
    outcome = run_tool(parse_excel, {"path": str(fake)}, settings)
    assert not outcome.ok and "neither an Excel workbook nor a CSV" in outcome.output and "read_file" in outcome.output


def test_parse_excel_output_is_paged(files):
    settings = load_settings(MAX_FILE_SIZE=1000)
    outcome = run_tool(make_excel_tools(settings)[0], {"path": str(files["sales.xlsx"])}, settings)
    assert outcome.ok and outcome.truncated_chars == 0 and len(outcome.output) <= 1000
    assert f'Next: parse_excel(path="{files["sales.xlsx"]}", page=2)' in outcome.output


@pytest.mark.parametrize("index, letters", [(0, "A"), (25, "Z"), (26, "AA"), (701, "ZZ"), (702, "AAA")])
def test_column_letters(index, letters):
    assert column_letter(index) == letters


@pytest.mark.parametrize("rgb, name", [("FFFF00", "yellow"), ("00B050", "green"), ("FF0000", "red"), ("0070C0", "blue"),
                                       ("FFFFFF", "white"), ("000000", "black"), ("D9D9D9", "light gray"),
                                       ("FFC000", "orange"), ("7030A0", "purple"), ("C6EFCE", "light green")])
def test_colour_names(rgb, name):
    assert colour_name(rgb) == name


def test_very_long_sheets_are_only_scanned_in_part(files, monkeypatch):
    import tools.documents.excel_reader as excel

    monkeypatch.setattr(excel, "SCAN_ROWS", 100)
    out = read_spreadsheet(files["sales.xlsx"], max_rows=50)
    inventory = out[out.index('"Inventory"'):]
    assert f"…[250 rows not shown (rows 52–{fx.INVENTORY_ROWS + 1})" in inventory


def test_streamed_reading_of_large_workbooks_gives_the_same_values_and_colours(files, monkeypatch):
    import tools.documents.excel_reader as excel

    normal = read_spreadsheet(files["sales.xlsx"])
    monkeypatch.setattr(excel, "STREAM_ABOVE_BYTES", 0)
    streamed = read_spreadsheet(files["sales.xlsx"])
    assert "| 4 | Carol | 4 | 10 | =B4*C4 (formula; no cached value) | 2023-01-04 |" in streamed
    assert f"- #{fx.GREEN} (≈green), 2 cells: A4, A5" in streamed and "- #4F81BD (≈blue), 1 cell: C6" in streamed
    assert '"Secret" (hidden)' in streamed
    assert normal.replace("Merged cells: G1:H1\n", "") == streamed
