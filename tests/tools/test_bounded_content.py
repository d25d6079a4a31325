"""`file_problem` judges a file by its content (issue 36): a bomb under another name is refused like the original."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support import bombs
from tools.documents.bounded import Caps, file_problem

CAPS = Caps(pixels=40_000_000, media_seconds=1200, unpacked_bytes=64 * 2**20, split_rows=2000)


@pytest.mark.parametrize("name", ["notes.txt", "data.csv", "no_extension", "picture.png"])
def test_a_renamed_docx_bomb_is_refused_by_its_zip_structure(tmp_path: Path, name):
    bomb = bombs.huge_xml_docx(tmp_path / "huge.docx", megabytes=80)
    renamed = bomb.rename(tmp_path / name)
    problem = file_problem(renamed, CAPS)
    assert problem is not None and "VISITOR_MAX_UNPACKED_MB" in problem, problem


@pytest.mark.parametrize("name", ["page.txt", "page.docx", "page"])
def test_a_renamed_huge_page_pdf_is_refused_by_its_header(tmp_path: Path, name):
    pdf = bombs.huge_page_pdf(tmp_path / name)
    assert len(pdf.read_bytes()) < 1024
    problem = file_problem(pdf, CAPS)
    assert problem is not None and "VISITOR_MAX_PIXELS" in problem, problem


def test_a_small_text_file_and_a_small_docx_pass(tmp_path: Path):
    note = tmp_path / "note.pdf"
    note.write_text("just text under a pdf name")
    assert file_problem(note, CAPS) is None
    small = bombs.huge_xml_docx(tmp_path / "small.txt", megabytes=1)
    assert file_problem(small, CAPS) is None


def test_a_runs_readers_refuse_the_bombs_before_parsing(tmp_path: Path):
    """parse_pdf's and read_file's entry points (documents/pdf.py, documents/office.py) check headers first."""
    from tools.core.errors import ToolFailure
    from tools.documents.office import docx_to_text
    from tools.documents.pdf import pdf_to_text

    pdf = bombs.huge_page_pdf(tmp_path / "page.pdf")
    with pytest.raises(ToolFailure, match="megapixels") as refused:
        pdf_to_text(pdf.read_bytes(), label="page.pdf")
    assert refused.value.kind == "size_limit"
    docx = bombs.huge_xml_docx(tmp_path / "huge.docx", megabytes=80)
    with pytest.raises(ToolFailure, match="unpacked"):
        docx_to_text(docx)
