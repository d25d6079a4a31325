"""Header checks before parsing (tools/documents/bounded.py): each bomb is refused with its limit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from config import load_settings
from tests.support import bombs
from tests.support.gaia_fixture import make_gaia_folder
from tools.documents.bounded import Caps, file_problem, split_problem

CAPS = Caps.of(load_settings())


@pytest.mark.parametrize(("make", "name", "words"), [
    (bombs.huge_page_pdf, "page.pdf", ("14,400 x 14,400 pt", "VISITOR_MAX_PIXELS")),
    (lambda p: bombs.silent_flac(p, seconds=3600), "silence.flac", ("60 minutes", "VISITOR_MAX_MEDIA_MINUTES")),
    (lambda p: bombs.huge_xml_docx(p, megabytes=100), "huge.docx", ("word/document.xml", "VISITOR_MAX_UNPACKED_MB")),
    (lambda p: bombs.many_rows_xlsx(p, rows=3_000_000), "rows.xlsx", ("sheet1.xml", "VISITOR_MAX_UNPACKED_MB")),
])
def test_each_bomb_is_refused_from_its_header(tmp_path, make, name, words):
    path = make(tmp_path / name)
    assert path.stat().st_size < 3 * 2**20  # small on disk
    problem = file_problem(path, CAPS)
    assert problem is not None and all(w in problem for w in words), problem


def test_a_huge_image_is_refused_from_its_header(tmp_path):
    from PIL import Image

    path = tmp_path / "wide.png"
    Image.new("1", (20_000, 4_000)).save(path)  # 80 megapixels, a few KB
    assert "VISITOR_MAX_PIXELS" in (file_problem(path, CAPS) or "")


def test_ordinary_files_pass(tmp_path):
    gaia = make_gaia_folder(tmp_path / "gaia")
    split = gaia / "2023" / "validation"
    ordinary = [bombs.huge_page_pdf(tmp_path / "letter.pdf", points=800), bombs.silent_flac(tmp_path / "s.flac", 5),
                split / "sales.xlsx", split / "fruits.txt", split / "program.py"]
    assert [file_problem(p, CAPS) for p in ordinary] == [None] * len(ordinary)
    assert split_problem(gaia, CAPS) is None


def test_a_corrupt_header_is_left_to_the_parser_but_an_unknown_duration_is_refused(tmp_path):
    for name in ("broken.pdf", "broken.docx", "broken.png", "broken.flac"):
        (tmp_path / name).write_bytes(b"not what the name says")
    assert [file_problem(tmp_path / n, CAPS) for n in ("broken.pdf", "broken.docx", "broken.png")] == [None] * 3
    assert "duration is not stated" in (file_problem(tmp_path / "broken.flac", CAPS) or "")


def test_split_rows_are_counted_before_loading(tmp_path):
    assert "3,000,000 rows" in (split_problem(bombs.many_rows_split(tmp_path / "parquet"), CAPS) or "")
    split = tmp_path / "jsonl" / "2023" / "validation"
    split.mkdir(parents=True)
    row = json.dumps({"task_id": "t", "Question": "q", "Level": 1, "Final answer": "a", "file_name": ""})
    (split / "metadata.jsonl").write_text((row + "\n") * 2_500)
    assert "VISITOR_MAX_SPLIT_ROWS" in (split_problem(Path(tmp_path / "jsonl"), CAPS) or "")
