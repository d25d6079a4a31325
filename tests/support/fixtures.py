"""Real files of every GAIA attachment type, generated in code (no binary blobs in the repo).

Each `make_*` writes one file into `directory` and returns its path; `make_all` writes them all.
The contents are fixed so tests can assert on exact values (see the constants below).
"""

from __future__ import annotations

import json
import math
import struct
import wave
import zipfile
from pathlib import Path

SALES_ROWS = [("Alice", 3, 2.5), ("Bob", 7, 1.25), ("Carol", 4, 10.0), ("Dan", 1, 99.99), ("Eve", 12, 0.5)]
YELLOW, GREEN, RED = "FFFF00", "00B050", "FF0000"
INVENTORY_ROWS = 300
PDF_TABLE = [["Item", "Count", "Price"], ["Apples", "12", "0.50"], ["Pears", "7", "0.75"], ["Plums", "30", "0.20"]]
ZIP_TEXTS = {"first.txt": "The first file says hello.\n", "notes/second.txt": "The second file holds the number 42.\n"}


def make_xlsx(directory: Path, name: str = "sales.xlsx") -> Path:
    """Two visible sheets + one hidden: coloured cells (rgb and theme fills), a formula, a date, a long sheet."""
    import datetime as dt

    from openpyxl import Workbook
    from openpyxl.styles import Color, Font, PatternFill

    wb = Workbook()
    ws = wb.active
    ws.title = "Sales"
    ws.append(["Name", "Qty", "Price", "Total", "Date"])
    for i, (n, q, p) in enumerate(SALES_ROWS, start=2):
        ws.append([n, q, p, f"=B{i}*C{i}", dt.date(2023, 1, i)])
    solid = lambda rgb: PatternFill(fill_type="solid", fgColor=rgb)  # noqa: E731
    ws["B3"].fill = solid(YELLOW)
    ws["A4"].fill = solid(GREEN)
    ws["A5"].fill = solid(GREEN)
    ws["C6"].fill = PatternFill(fill_type="solid", fgColor=Color(theme=4, tint=0.0))  # accent1 of the default theme
    ws["A2"].font = Font(color=RED)
    ws.merge_cells("G1:H1")
    ws["G1"] = "merged note"
    inv = wb.create_sheet("Inventory")
    inv.append(["SKU", "Stock"])
    for i in range(1, INVENTORY_ROWS + 1):
        inv.append([f"SKU-{i:04d}", i * 2])
    hidden = wb.create_sheet("Secret")
    hidden["A1"] = "hidden value"
    hidden.sheet_state = "hidden"
    path = directory / name
    wb.save(path)
    return path


def make_xlsx_colour_grid(directory: Path, name: str = "grid.xlsx") -> Path:
    """A sheet with no values at all, only coloured cells (like GAIA's coloured-map puzzles)."""
    from openpyxl import Workbook
    from openpyxl.styles import PatternFill

    wb = Workbook()
    ws = wb.active
    ws.title = "Map"
    for ref in ("A1", "B2", "C3"):
        ws[ref].fill = PatternFill(fill_type="solid", fgColor=GREEN)
    ws["D4"].fill = PatternFill(fill_type="solid", fgColor=RED)
    path = directory / name
    wb.save(path)
    return path


def make_xls(directory: Path, name: str = "legacy.xls") -> Path:
    """An Excel 97 workbook with two sheets and a yellow cell (xlwt)."""
    import xlwt

    book = xlwt.Workbook()
    sheet = book.add_sheet("Legacy")
    yellow = xlwt.easyxf("pattern: pattern solid, fore_colour yellow;")
    for c, label in enumerate(["City", "Population"]):
        sheet.write(0, c, label)
    for r, (city, pop) in enumerate([("Oslo", 709000), ("Bergen", 286000)], start=1):
        sheet.write(r, 0, city, yellow if city == "Bergen" else xlwt.Style.default_style)
        sheet.write(r, 1, pop)
    book.add_sheet("Empty")
    path = directory / name
    book.save(str(path))
    return path


def make_csv(directory: Path, name: str = "table.csv") -> Path:
    path = directory / name
    path.write_text("name,score\nann,91\nben,78\n\"smith, jo\",85\n", encoding="utf-8")
    return path


def make_pdf(directory: Path, name: str = "report.pdf", password: str | None = None) -> Path:
    """Three pages; page 3 carries a bordered table (PDF_TABLE)."""
    from fpdf import FPDF

    pdf = FPDF()
    if password:
        pdf.set_encryption(owner_password="owner-" + password, user_password=password)
    pdf.set_font("Helvetica", size=12)
    for number in (1, 2):
        pdf.add_page()
        pdf.multi_cell(0, 8, f"This is page {number} of the quarterly report. Revenue grew by {number * 10} percent.")
    pdf.add_page()
    pdf.multi_cell(0, 8, "Page 3 lists the fruit inventory.")
    with pdf.table() as table:
        for row in PDF_TABLE:
            cells = table.row()
            for value in row:
                cells.cell(value)
    path = directory / name
    pdf.output(str(path))
    return path


def make_scanned_pdf(directory: Path, name: str = "scan.pdf") -> Path:
    """A one-page PDF holding only an image of text (no text layer), like a scanned document."""
    from fpdf import FPDF

    pdf = FPDF()
    pdf.add_page()
    pdf.image(str(make_png(directory, f".{name}.png")), x=10, y=10, w=120)
    path = directory / name
    pdf.output(str(path))
    return path


def make_docx(directory: Path, name: str = "memo.docx") -> Path:
    """A heading, a paragraph, a 3x2 table, then a closing paragraph (order matters)."""
    from docx import Document

    doc = Document()
    doc.add_heading("Project Memo", level=1)
    doc.add_paragraph("The budget table follows.")
    table = doc.add_table(rows=3, cols=2)
    for r, (k, v) in enumerate([("Item", "Cost"), ("Paint", "120"), ("Brushes", "35")]):
        table.cell(r, 0).text, table.cell(r, 1).text = k, v
    doc.add_paragraph("Closing remark after the table.")
    path = directory / name
    doc.save(str(path))
    return path


def make_pptx(directory: Path, name: str = "deck.pptx") -> Path:
    """Three slides: title slide, bullet slide with speaker notes, a slide with a table."""
    from pptx import Presentation
    from pptx.util import Inches

    prs = Presentation()
    s1 = prs.slides.add_slide(prs.slide_layouts[0])
    s1.shapes.title.text = "Ocean Survey"
    s1.placeholders[1].text = "Results of 2023"
    s2 = prs.slides.add_slide(prs.slide_layouts[1])
    s2.shapes.title.text = "Findings"
    s2.placeholders[1].text = "Whales counted: 14\nDolphins counted: 52"
    s2.notes_slide.notes_text_frame.text = "Mention the storm delay."
    s3 = prs.slides.add_slide(prs.slide_layouts[5])
    s3.shapes.title.text = "Budget"
    shape = s3.shapes.add_table(2, 2, Inches(1), Inches(2), Inches(4), Inches(1))
    for r, (k, v) in enumerate([("Boat", "5000"), ("Fuel", "800")]):
        shape.table.cell(r, 0).text, shape.table.cell(r, 1).text = k, v
    path = directory / name
    prs.save(str(path))
    return path


def make_png(directory: Path, name: str = "label.png", text: str = "HELLO 42") -> Path:
    """A white PNG with large black text (readable by tesseract)."""
    from PIL import Image, ImageDraw, ImageFont

    image = Image.new("RGB", (480, 120), "white")
    try:
        font = ImageFont.load_default(size=48)
    except TypeError:  # Pillow without scalable default font
        font = ImageFont.load_default()
    ImageDraw.Draw(image).text((20, 30), text, fill="black", font=font)
    path = directory / name
    image.save(path)
    return path


def make_wav(directory: Path, name: str = "tone.wav", seconds: float = 0.5) -> Path:
    """A 440 Hz sine tone, 16 kHz mono 16-bit."""
    path = directory / name
    rate = 16000
    frames = b"".join(struct.pack("<h", int(8000 * math.sin(2 * math.pi * 440 * i / rate)))
                      for i in range(int(rate * seconds)))
    with wave.open(str(path), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes(frames)
    return path


def make_zip(directory: Path, name: str = "texts.zip") -> Path:
    """A zip of two text files (one in a subfolder)."""
    path = directory / name
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for member, text in ZIP_TEXTS.items():
            zf.writestr(member, text)
    return path


def make_mixed_zip(directory: Path, name: str = "bundle.zip") -> Path:
    """A zip holding a docx, an xlsx, a PNG, a WAV, a CSV and a nested zip: members read by type."""
    scratch = directory / f".{name}-parts"
    scratch.mkdir(exist_ok=True)
    parts = [make_docx(scratch), make_xlsx(scratch), make_png(scratch), make_wav(scratch), make_csv(scratch),
             make_zip(scratch, "inner.zip")]
    path = directory / name
    with zipfile.ZipFile(path, "w") as zf:
        for part in parts:
            zf.write(part, f"data/{part.name}")
    return path


def make_text_files(directory: Path) -> dict[str, Path]:
    """json, jsonld, xml, html, py, pdb, txt, md files with known contents."""
    files = {
        "data.json": json.dumps({"name": "widget", "sizes": [1, 2, 3], "price": 9.5}),
        "person.jsonld": json.dumps({"@context": "https://schema.org", "@type": "Person", "name": "Ada Lovelace"}),
        "catalog.xml": "<?xml version='1.0'?>\n<catalog><book id='b1'><title>Dune</title></book></catalog>\n",
        "page.html": "<html><head><title>Test Page</title><style>p{color:red}</style></head><body>"
                     "<h1>Main Heading</h1><p>First paragraph with <b>bold</b> text.</p>"
                     "<table><tr><th>k</th><th>v</th></tr><tr><td>alpha</td><td>1</td></tr></table>"
                     "<script>var hidden = 'SCRIPT_SHOULD_NOT_APPEAR';</script></body></html>",
        "script.py": "def area(r):\n    return 3.14159 * r * r\n\nprint(area(2))\n",
        "protein.pdb": "HEADER    TEST PROTEIN\n"
                       "ATOM      1  N   MET A   1      38.198  19.582  28.766  1.00 50.00           N\n"
                       "ATOM      2  CA  MET A   1      37.510  18.556  29.551  1.00 50.00           C\n"
                       "END\n",
        "notes.txt": "Line one.\nCafé crème — naïve façade.\n",
        "readme.md": "# Title\n\n- item one\n- item two\n",
    }
    out = {}
    for name, content in files.items():
        out[name] = directory / name
        out[name].write_text(content, encoding="utf-8")
    return out


CORRUPTIBLE = (".xlsx", ".xls", ".csv", ".pdf", ".docx", ".pptx", ".zip", ".json", ".txt", ".png", ".wav")


def make_corrupt(directory: Path, suffix: str) -> Path:
    """A file named *.suffix whose content is not that format (random bytes / truncated container)."""
    path = directory / f"corrupt{suffix}"
    if suffix in (".xlsx", ".docx", ".pptx", ".zip"):
        # A zip header followed by garbage: looks like the container, fails to open.
        path.write_bytes(b"PK\x03\x04" + bytes(range(256)) * 4)
    elif suffix == ".pdf":
        path.write_bytes(b"%PDF-1.4\n" + bytes(range(256)) * 4)
    elif suffix == ".xls":
        path.write_bytes(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(range(256)) * 4)
    elif suffix == ".json":
        path.write_text('{"unterminated": [1, 2,', encoding="utf-8")
    elif suffix == ".csv":
        path.write_bytes(b"\x00\x01\x02\xff\xfe garbage \x00" * 50)
    else:
        path.write_bytes(bytes(range(256)) * 4)
    return path


def make_empty(directory: Path, suffix: str) -> Path:
    """A 0-byte file named empty.suffix."""
    path = directory / f"empty{suffix}"
    path.write_bytes(b"")
    return path


def make_all(directory: Path) -> dict[str, Path]:
    """Every fixture above in `directory`, keyed by file name."""
    directory.mkdir(parents=True, exist_ok=True)
    made = [make_xlsx(directory), make_xlsx_colour_grid(directory), make_xls(directory), make_csv(directory),
            make_pdf(directory), make_docx(directory), make_pptx(directory), make_png(directory), make_wav(directory),
            make_zip(directory), make_mixed_zip(directory)]
    out = {p.name: p for p in made}
    out.update(make_text_files(directory))
    return out


def pdf_bytes() -> bytes:
    """The 3-page report PDF as bytes (for serving over HTTP)."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        return make_pdf(Path(tmp)).read_bytes()

