"""read_file on real files of every GAIA type, corrupt and empty ones, and zips (members read by type)."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from config import load_settings
from tests.support import fixtures as fx
from tools.core.errors import ToolFailure
from tools.core.executor import run_tool
from tools.documents import archive
from tools.documents.files import make_file_tools, read_path


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Path]:
    return fx.make_all(tmp_path_factory.mktemp("fixtures"))


@pytest.fixture()
def settings():
    return load_settings()


@pytest.fixture()
def read_file(settings):
    (tool,) = make_file_tools(settings)
    return tool


def test_tool_schema_is_for_the_model(read_file):
    assert read_file.name == "read_file"
    assert set(read_file.tool_call_schema.model_json_schema()["properties"]) == {"path", "page"}
    assert "Args:" in read_file.description and "path:" in read_file.description


@pytest.mark.parametrize("name, expected", [
    ("data.json", '"price": 9.5'),
    ("person.jsonld", '"name": "Ada Lovelace"'),
    ("catalog.xml", "<title>Dune</title>"),
    ("script.py", "return 3.14159 * r * r"),
    ("protein.pdb", "ATOM      2  CA  MET A   1      37.510  18.556  29.551"),
    ("notes.txt", "Café crème — naïve façade."),
    ("readme.md", "- item two"),
    ("table.csv", '"smith, jo",85'),
])
def test_text_like_files(read_file, files, name, expected):
    out = read_file.invoke({"path": str(files[name])})
    assert out.startswith(f"File: {name} (") and expected in out


def test_header_gives_type_and_size(read_file, files):
    first = read_file.invoke({"path": str(files["memo.docx"])}).splitlines()[0]
    assert first.startswith("File: memo.docx (Word document, ") and first.endswith(" KB)")


def test_html_file_is_converted_without_scripts(read_file, files):
    out = read_file.invoke({"path": str(files["page.html"])})
    assert "# Main Heading" in out and "**bold**" in out and "| alpha | 1 |" in out
    assert "SCRIPT_SHOULD_NOT_APPEAR" not in out and "color:red" not in out


def test_docx_paragraphs_and_tables_in_document_order(read_file, files):
    out = read_file.invoke({"path": str(files["memo.docx"])})
    heading, intro = out.index("# Project Memo"), out.index("The budget table follows.")
    table, closing = out.index("| Paint | 120 |"), out.index("Closing remark after the table.")
    assert heading < intro < table < closing
    assert "| Item | Cost |" in out


def test_pptx_text_per_numbered_slide(read_file, files):
    out = read_file.invoke({"path": str(files["deck.pptx"])})
    assert "3 slides" in out
    s1, s2, s3 = (out.index(f"--- Slide {n} ---") for n in (1, 2, 3))
    assert s1 < out.index("Title: Ocean Survey") < s2 < out.index("Whales counted: 14") < s3
    assert "Speaker notes: Mention the storm delay." in out
    assert out.index("| Fuel | 800 |") > s3


def test_pdf_and_spreadsheets_are_readable_too(read_file, files):
    assert "--- Page 3 ---" in read_file.invoke({"path": str(files["report.pdf"])})
    sheet = read_file.invoke({"path": str(files["sales.xlsx"])})
    assert '"Sales"' in sheet and "| 4 | Carol |" in sheet


def test_zip_of_two_text_files(read_file, files):
    out = read_file.invoke({"path": str(files["texts.zip"])})
    assert "Archive texts.zip: 2 files" in out
    assert "- first.txt (27 bytes)" in out and "- notes/second.txt (37 bytes)" in out
    assert "The first file says hello." in out and "The second file holds the number 42." in out
    extracted = Path(out.split("extracted to ")[1].splitlines()[0])
    assert (extracted / "notes" / "second.txt").read_text() == fx.ZIP_TEXTS["notes/second.txt"]


def test_zip_members_are_read_by_type(read_file, files):
    out = read_file.invoke({"path": str(files["bundle.zip"])})
    assert "=== data/memo.docx ===" in out and "| Paint | 120 |" in out
    assert "=== data/sales.xlsx ===" in out and '"Sales"' in out
    assert "name,score" in out  # the CSV member
    assert "The first file says hello." in out  # the nested zip, read too
    png_line = next(line for line in out.splitlines() if line.startswith("PNG image, extracted to "))
    wav_line = next(line for line in out.splitlines() if line.startswith("WAV audio, extracted to "))
    png = Path(png_line.split("extracted to ")[1].split(": call")[0])
    wav = Path(wav_line.split("extracted to ")[1].split(": call")[0])
    assert "image_ocr" in png_line and "transcribe_audio" in wav_line
    assert png.is_absolute() and png.read_bytes()[:4] == b"\x89PNG"
    assert wav.read_bytes()[:4] == b"RIFF"


def test_zip_member_output_is_budgeted_with_a_pointer(files):
    out = read_path(files["bundle.zip"], budget=3000)
    assert "…[member cut at" in out and "call read_file on /" in out


def test_zip_slip_members_stay_inside_the_extraction_dir(tmp_path):
    bad = tmp_path / "slip.zip"
    with zipfile.ZipFile(bad, "w") as zf:
        zf.writestr("../../escaped.txt", "outside?")
        zf.writestr("/abs/rooted.txt", "rooted?")
    out = read_path(bad)
    target = Path(out.split("extracted to ")[1].splitlines()[0])
    assert (target / "escaped.txt").read_text() == "outside?"
    assert (target / "abs" / "rooted.txt").read_text() == "rooted?"
    assert not (target.parent.parent / "escaped.txt").exists()


def test_zip_bomb_limit(tmp_path, monkeypatch):
    monkeypatch.setattr(archive, "MAX_TOTAL_BYTES", 10_000)
    bomb = tmp_path / "bomb.zip"
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("zeros.txt", b"\0" * 50_000)
    with pytest.raises(ToolFailure, match="would unpack to 48.8 KB"):
        read_path(bomb)


def test_empty_zip_archive(tmp_path):
    empty = tmp_path / "nothing.zip"
    zipfile.ZipFile(empty, "w").close()
    assert "is empty (no files inside)" in read_path(empty)


@pytest.mark.parametrize("name, tool", [("label.png", "image_ocr"), ("tone.wav", "transcribe_audio")])
def test_media_files_point_to_the_right_tool(read_file, settings, files, name, tool):
    outcome = run_tool(read_file, {"path": str(files[name])}, settings)
    assert not outcome.ok and outcome.error_kind == "wrong_tool"
    assert "looks like a binary file" in outcome.output and tool in outcome.output


def test_binary_garbage_is_named_not_mojibake(read_file, settings, tmp_path):
    elf = tmp_path / "program.txt"
    elf.write_bytes(b"\x7fELF\x02\x01\x01" + bytes(range(256)) * 8)
    outcome = run_tool(read_file, {"path": str(elf)}, settings)
    assert not outcome.ok and "looks like a binary file (ELF executable)" in outcome.output
    assert "\x00" not in outcome.output and "\ufffd" not in outcome.output


def test_other_encodings_are_decoded(tmp_path):
    latin = tmp_path / "latin.txt"
    latin.write_bytes("Ærø — señor".replace("—", "-").encode("latin-1"))
    utf16 = tmp_path / "wide.txt"
    utf16.write_text("wide ünïcode text", encoding="utf-16")
    assert "Ærø - señor" in read_path(latin)
    assert "wide ünïcode text" in read_path(utf16)
    french = tmp_path / "french.txt"
    french.write_bytes(("Le café était très agréable, et la crème brûlée délicieuse. " * 5).encode("latin-1"))
    russian = tmp_path / "russian.txt"
    russian.write_bytes(("Привет, мир! Это проверка кодировки текста. " * 6).encode("cp1251"))
    assert "la crème brûlée" in read_path(french)
    assert "Привет, мир!" in read_path(russian)


def test_unknown_extension_text_and_text_under_a_binary_extension(tmp_path):
    dat = tmp_path / "values.dat"
    dat.write_text("alpha 1\nbeta 2\n")
    fake = tmp_path / "download.xlsx"
    fake.write_text("<html><body>Access denied</body></html>")
    assert "beta 2" in read_path(dat)
    out = read_path(fake)
    assert "text (although the extension says .xlsx)" in out and "Access denied" in out


@pytest.mark.parametrize("suffix", fx.CORRUPTIBLE)
def test_corrupt_files_give_a_clear_message(read_file, settings, tmp_path, suffix):
    path = fx.make_corrupt(tmp_path, suffix)
    outcome = run_tool(read_file, {"path": str(path)}, settings)
    if suffix == ".json":  # still text: shown with a warning, not refused
        assert outcome.ok and "warning: not valid JSON" in outcome.output
        return
    assert not outcome.ok and outcome.output.startswith("Error: ")
    assert any(p in outcome.output
               for p in ("corrupt", "not a readable", "looks like a binary file", "not a valid PDF"))
    assert len(outcome.output) < 500


@pytest.mark.parametrize("suffix", fx.CORRUPTIBLE)
def test_empty_files_give_a_clear_message(read_file, settings, tmp_path, suffix):
    outcome = run_tool(read_file, {"path": str(fx.make_empty(tmp_path, suffix))}, settings)
    assert not outcome.ok and outcome.error_kind == "empty_file" and "is empty (0 bytes)" in outcome.output


def test_missing_file_lists_the_attachments(read_file, settings, files):
    config = {"configurable": {"attachments": [str(files["memo.docx"])]}}
    outcome = run_tool(read_file, {"path": "/nowhere/report.docx"}, settings, config=config)
    assert not outcome.ok and outcome.error_kind == "missing_file"
    assert "file not found: /nowhere/report.docx" in outcome.output and str(files["memo.docx"]) in outcome.output


def test_bare_attachment_name_resolves_through_the_run_config(read_file, settings, files):
    config = {"configurable": {"attachments": [str(files["memo.docx"])]}}
    outcome = run_tool(read_file, {"path": "memo.docx"}, settings, config=config)
    assert outcome.ok and "Project Memo" in outcome.output


@pytest.mark.parametrize("relative", [".env", ".ssh/id_rsa", "project/.env.local"])
def test_credential_files_are_refused(read_file, settings, tmp_path, relative):
    secret = tmp_path / relative
    secret.parent.mkdir(parents=True, exist_ok=True)
    secret.write_text("OPENAI_API_KEY=sk-not-for-the-model")
    outcome = run_tool(read_file, {"path": str(secret)}, settings)
    assert not outcome.ok and outcome.error_kind == "not_allowed" and "sk-not-for-the-model" not in outcome.output


def test_process_environment_is_refused(read_file, settings):
    outcome = run_tool(read_file, {"path": "/proc/self/environ"}, settings)
    assert not outcome.ok and outcome.error_kind == "not_allowed"


def test_url_is_not_a_file(read_file, settings):
    outcome = run_tool(read_file, {"path": "https://example.org/data.csv"}, settings)
    assert not outcome.ok and "Use fetch_webpage" in outcome.output


def test_directory_is_not_a_file(read_file, settings, tmp_path):
    outcome = run_tool(read_file, {"path": str(tmp_path)}, settings)
    assert not outcome.ok and "is a directory" in outcome.output


def test_large_text_is_paged_and_the_last_page_is_reachable(tmp_path):
    settings = load_settings(MAX_FILE_SIZE=500)
    (tool,) = make_file_tools(settings)
    big = tmp_path / "big.txt"
    big.write_text("0123456789\n" * 1000 + "THE LAST LINE\n")
    first = run_tool(tool, {"path": str(big)}, settings)
    assert first.ok and first.truncated_chars == 0 and len(first.output) <= 500
    pages = int(first.output.split("[page 1 of ")[1].split("]")[0])
    assert f'Next: read_file(path="{big}", page=2)' in first.output
    last = run_tool(tool, {"path": str(big), "page": pages}, settings)
    assert "THE LAST LINE" in last.output and f"[page {pages} of {pages}, the last]" in last.output
    beyond = run_tool(tool, {"path": str(big), "page": pages + 1}, settings)
    assert not beyond.ok and f"has only {pages} pages" in beyond.output


@pytest.mark.parametrize("name, fragment", [("old.doc", "legacy Microsoft Office file"),
                                            ("locked.docx", "password-protected (encrypted) Office file")])
def test_ole_containers_are_named(tmp_path, name, fragment):
    path = tmp_path / name
    path.write_bytes(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(600))
    with pytest.raises(ToolFailure, match="looks like a binary file") as failure:
        read_path(path)
    assert fragment in str(failure.value)


def test_office_file_with_a_wrong_extension_is_read_as_what_it_is(tmp_path, files):
    misnamed = tmp_path / "attachment.bin"
    misnamed.write_bytes(files["deck.pptx"].read_bytes())
    out = read_path(misnamed)
    assert "PowerPoint presentation (although named .bin)" in out and "Whales counted: 14" in out
    sheet = tmp_path / "sheet.dat"
    sheet.write_bytes(files["sales.xlsx"].read_bytes())
    assert "| 4 | Carol |" in read_path(sheet)
