"""Word and PowerPoint files as text: .docx paragraphs and tables in document order, .pptx per slide."""

from __future__ import annotations

import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from tools.core.errors import ToolFailure
from tools.documents.tables import markdown_table

T = TypeVar("T")


def _open_package(path: Path, kind: str, open_file: Callable[[str], T], package_error: type[Exception]) -> T:
    """`open_file(path)` once the zip directory passed the caps; ToolFailure when it is too big or unreadable.

    The caps come first: a 1 MB docx can hold 300 MB of XML. `package_error` is the library's own "not a package".
    """
    from tools.documents.bounded import document_problem

    if (problem := document_problem(path)) is not None:
        raise ToolFailure(f"{path.name} is not parsed: {problem}.", "size_limit")
    try:
        return open_file(str(path))
    except (package_error, zipfile.BadZipFile, KeyError, ValueError) as exc:
        raise ToolFailure(f"{path.name} is not a readable {kind} file ({type(exc).__name__}: {str(exc)[:120]}); "
                          "it may be corrupt or mislabelled. Check the file, or try a different copy.",
                          "corrupt_file") from None


def docx_to_text(path: Path) -> str:
    """Paragraphs (headings marked with #) and tables (markdown), in the order they appear."""
    from docx import Document
    from docx.opc.exceptions import PackageNotFoundError
    from docx.table import Table

    document = _open_package(path, "Word (.docx)", Document, PackageNotFoundError)
    parts: list[str] = []
    tables = 0
    for block in document.iter_inner_content():
        if isinstance(block, Table):
            tables += 1
            rows = [_unique_cells(row.cells) for row in block.rows]
            if rows:
                parts.append(f"Table {tables}:\n" + markdown_table(rows[0], rows[1:]))
            continue
        text = block.text.strip()
        if not text:
            continue
        style = (block.style.name if block.style is not None else "") or ""
        if style.startswith("Heading") and style[-1:].isdigit():
            text = "#" * int(style[-1]) + " " + text
        elif style == "Title":
            text = "# " + text
        elif style.startswith("List"):
            text = "- " + text
        parts.append(text)
    for section in document.sections[:1]:
        header = "\n".join(p.text for p in section.header.paragraphs if p.text.strip())
        footer = "\n".join(p.text for p in section.footer.paragraphs if p.text.strip())
        if header:
            parts.insert(0, f"[page header] {header}")
        if footer:
            parts.append(f"[page footer] {footer}")
    return "\n\n".join(parts) if parts else "(the document has no text)"


def _unique_cells(cells: list[Any]) -> list[str]:
    """Cell texts of a row; a merged cell repeats in python-docx, so consecutive duplicates of one cell are dropped."""
    out, previous = [], None
    for cell in cells:
        if cell._tc is previous:
            continue
        previous = cell._tc
        out.append(cell.text.strip())
    return out


def pptx_to_text(path: Path) -> str:
    """Each slide as '--- Slide N ---' with its title, text boxes, tables and speaker notes."""
    from pptx import Presentation
    from pptx.exc import PackageNotFoundError

    presentation = _open_package(path, "PowerPoint (.pptx)", Presentation, PackageNotFoundError)
    slides = list(presentation.slides)
    parts = [f"{len(slides)} slide{'s' if len(slides) != 1 else ''}"]
    for number, slide in enumerate(slides, start=1):
        parts.append(f"--- Slide {number} ---")
        lines = _shape_texts(slide.shapes)
        parts.append("\n".join(lines) if lines else "(no text on this slide)")
        if slide.has_notes_slide:
            notes = slide.notes_slide.notes_text_frame.text.strip() if slide.notes_slide.notes_text_frame else ""
            if notes:
                parts.append(f"Speaker notes: {notes}")
    return "\n".join(parts)


def _shape_texts(shapes: Any) -> list[str]:
    lines: list[str] = []
    # Reading order: top to bottom, then left to right (shapes are stored in z-order).
    ordered = sorted(shapes, key=lambda s: ((s.top or 0), (s.left or 0)))
    for shape in ordered:
        if shape.shape_type is not None and shape.shape_type == 6:  # MSO_SHAPE_TYPE.GROUP
            lines.extend(_shape_texts(shape.shapes))
        elif getattr(shape, "has_table", False) and shape.has_table:
            rows = [[cell.text.strip() for cell in row.cells] for row in shape.table.rows]
            if rows:
                lines.append(markdown_table(rows[0], rows[1:]))
        elif getattr(shape, "has_text_frame", False) and shape.has_text_frame:
            text = shape.text_frame.text.strip()
            if text:
                is_title = shape.is_placeholder and shape.placeholder_format.type in (1, 3)  # TITLE, CENTER_TITLE
                lines.append(f"Title: {text}" if is_title else text)
    return lines
