"""A PDF's text in parts, page by page with page headers and tables as markdown (pdfplumber): parse_pdf's reader.

This is the in-process parse the document worker runs (`tools.documents.readers`); the tools reach it through
`tools.documents.isolated`, never directly. A scanned PDF's pages are rendered for image_ocr into `pages_folder()`.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tools.core.errors import ToolFailure
from tools.core.workspace import process_workspace
from tools.documents.tables import markdown_table

MAX_PAGES = 2000  # beyond this the rest is left to run_python; a long PDF is parsed between calls (PdfParse)
WORD_GAP_PT = 1.5
"""pdfplumber's x_tolerance: a gap wider than this between letters is a space. The default (3) glues the words
of justified LaTeX text ('Thekeywords"MUST"…', 204 glued tokens in 8 pages of a pdfTeX document); 1.5 has none."""


def _open(data: bytes, label: str) -> Any:
    """The pdfplumber document of `data`; ToolFailure naming what is wrong when it cannot be opened."""
    import pdfplumber
    from pdfminer.pdfdocument import PDFEncryptionError, PDFPasswordIncorrect
    from pdfminer.pdfparser import PDFSyntaxError

    if not data:
        raise ToolFailure(f"{label} is empty (0 bytes). Check that the right file was given or download it again.",
                          "empty_file")
    if not data.lstrip()[:5] == b"%PDF-":
        raise ToolFailure(f"{label} is not a PDF (it does not start with %PDF-). "
                          "Try read_file on it to see what it is.", "corrupt_file")
    from tools.documents.bounded import document_problem

    if (problem := document_problem(data)) is not None:  # by its header, before any page is parsed or rendered
        raise ToolFailure(f"{label} is not parsed: {problem}.", "size_limit")
    try:
        return pdfplumber.open(io.BytesIO(data))
    except Exception as exc:  # noqa: BLE001 - pdfminer raises assorted errors on damaged files
        # pdfplumber wraps pdfminer's exception as its first argument.
        inner = exc.args[0] if exc.args and isinstance(exc.args[0], Exception) else exc
        if isinstance(inner, (PDFPasswordIncorrect, PDFEncryptionError)):
            raise ToolFailure(f"{label} is encrypted/password-protected; its text cannot be read. "
                              "Look for another copy of the document (web_search).", "encrypted") from None
        exc = inner if isinstance(inner, PDFSyntaxError) else exc
        raise ToolFailure(f"{label} is corrupt or not a valid PDF ({type(exc).__name__}: {str(exc)[:120]}). "
                          "Try read_file to inspect it, or find another copy.", "corrupt_file") from None


def pdf_parts(source: Path | bytes, label: str = "PDF", char_budget: int | None = None,
              pages_dir: Path | None = None) -> Iterator[str]:
    """The text of `pdf.pdf_to_text` in parts: the header line, then each page's part, then any closing note.

    In this process, unbounded: the tools call it through `tools.documents.isolated` (the budgeted worker). A scanned
    PDF's pages are rendered into `pages_dir` (the process workspace when None).
    """
    data = source.read_bytes() if isinstance(source, Path) else source
    with _open(data, label) as pdf:
        try:
            pages = pdf.pages
        except Exception as exc:  # noqa: BLE001 - damaged page tree
            raise ToolFailure(f"{label}: cannot read its pages ({type(exc).__name__}); the file is damaged.",
                              "corrupt_file") from None
        total = len(pages)
        yield f"{label}: {total} page{'s' if total != 1 else ''}"
        empty_pages, produced, stopped_at = 0, 0, None
        for number, page in enumerate(pages[:MAX_PAGES], start=1):
            if char_budget is not None and produced > char_budget:
                stopped_at = number
                break
            part, empty = _page_part(page, number)
            empty_pages += empty
            produced += len(part) + 1
            yield part
        if stopped_at is not None:
            yield (f"…[pages {stopped_at}–{total} not shown here: call parse_pdf on this PDF's own path to read "
                   "every page, in reply pages]")
        elif total > MAX_PAGES:
            yield (f"…[{total - MAX_PAGES} more pages not parsed (over {MAX_PAGES}); read them with run_python: "
                   "pdfplumber.open(path).pages[N - 1].extract_text()]")
        if total and stopped_at is None and empty_pages == min(total, MAX_PAGES):
            yield _scanned_note(data, pages_dir)


def _page_part(page: Any, number: int) -> tuple[str, int]:
    """'--- Page N ---', its text and its tables as markdown; and 1 when the page has no text layer."""
    parts = [f"--- Page {number} ---"]
    try:
        text = (page.extract_text(x_tolerance=WORD_GAP_PT) or "").strip()
        tables = [t for t in page.extract_tables() if t and any(any(c for c in row) for row in t)]
    except Exception as exc:  # noqa: BLE001 - one bad page should not hide the others
        return "\n".join(parts + [f"(page could not be read: {type(exc).__name__})"]), 0
    finally:
        page.close()
    if not text and not tables:
        parts.append("(no text layer on this page; it may be a scanned image)")
    if text:
        parts.append(text)
    for index, table in enumerate(tables, start=1):
        parts.append(f"\nTable {index} on page {number}:\n" + markdown_table(table[0], table[1:]))
    return "\n".join(parts), int(not text and not tables)


def pages_folder() -> str:
    """Where a scanned PDF's pages are rendered for image_ocr (the process workspace's pdf-pages)."""
    return str(process_workspace().subdir("pdf-pages"))


def _scanned_note(data: bytes, pages_dir: Path | None = None, max_pages: int = 10) -> str:
    """Render the pages of a PDF without a text layer to PNGs so image_ocr can read them."""
    try:
        import pypdfium2 as pdfium

        directory = pages_dir or process_workspace().subdir("pdf-pages")
        document = pdfium.PdfDocument(data)
        paths = []
        for index in range(min(len(document), max_pages)):
            path = directory / f"page-{index + 1}.png"
            document[index].render(scale=2).to_pil().save(path)
            paths.append(str(path))
        document.close()
    except Exception as exc:  # noqa: BLE001 - rendering is a convenience; say what to do instead
        return (f"No page has a text layer: this is a scanned PDF (rendering pages failed: {type(exc).__name__}). "
                "Render pages with run_python (pypdfium2) and call image_ocr on them.")
    return ("No page has a text layer: this is a scanned PDF. Pages rendered to images: " + ", ".join(paths)
            + ". Call image_ocr on each to read the text.")
