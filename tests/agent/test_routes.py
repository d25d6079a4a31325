"""The router's file-type table (tools.core.routes): every GAIA attachment type has a route."""

from __future__ import annotations

from pathlib import Path

import pytest

from tools.core.routes import route_for

ALL_TOOLS = ["web_search", "fetch_webpage", "read_file", "calculator", "run_python", "parse_pdf", "parse_excel",
             "image_ocr", "analyze_image", "transcribe_audio", "watch_video"]

EXPECTED = {
    ".xlsx": "parse_excel", ".xls": "parse_excel", ".csv": "parse_excel", ".pdf": "parse_pdf",
    ".png": "analyze_image", ".jpg": "analyze_image", ".jpeg": "analyze_image", ".gif": "watch_video",
    ".webp": "analyze_image", ".mp3": "transcribe_audio", ".wav": "transcribe_audio", ".m4a": "transcribe_audio",
    ".flac": "transcribe_audio", ".docx": "read_file", ".pptx": "read_file", ".txt": "read_file", ".md": "read_file",
    ".json": "read_file", ".jsonld": "read_file", ".xml": "read_file", ".html": "read_file", ".py": "read_file",
    ".pdb": "read_file", ".zip": "read_file", ".unknownext": "read_file", "": "read_file",
}


@pytest.mark.parametrize(("ext", "tool"), sorted(EXPECTED.items()))
def test_every_type_routes_to_its_tool(tmp_path: Path, ext: str, tool: str) -> None:
    path = tmp_path / f"attachment{ext}"
    path.write_bytes(b"x")
    route = route_for(path, ALL_TOOLS)
    assert route.tool == tool
    assert route.tools[0] == tool
    assert str(path.resolve()) in route.instruction  # the absolute path, for the model to pass on
    assert f"{tool}(" in route.instruction
    assert "does not exist" not in route.instruction


def test_images_also_name_ocr(tmp_path: Path) -> None:
    assert "image_ocr" in route_for(tmp_path / "a.png", ALL_TOOLS).instruction


def test_uppercase_extension(tmp_path: Path) -> None:
    assert route_for(tmp_path / "REPORT.XLSX", ALL_TOOLS).tool == "parse_excel"


def test_relative_path_becomes_absolute(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("hi")
    route = route_for("notes.txt", ALL_TOOLS)  # conftest chdirs into tmp_path
    assert Path(route.path).is_absolute() and route.path == str((tmp_path / "notes.txt").resolve())


@pytest.mark.parametrize(("name", "active", "fallback"), [
    ("data.xlsx", ["read_file", "run_python"], "run_python"),
    ("data.csv", ["read_file"], "read_file"),
    ("paper.pdf", ["run_python"], "run_python"),
    ("photo.png", ["image_ocr"], "image_ocr"),
    ("script.py", ["run_python"], "run_python"),
    ("doc.docx", ["run_python"], "run_python"),
])
def test_fallback_when_preferred_tool_is_inactive(tmp_path: Path, name: str, active: list[str], fallback: str) -> None:
    route = route_for(tmp_path / name, active)
    assert route.tool == fallback
    assert f"{route.tools[0]} is not available" in route.instruction
    assert fallback in route.instruction


def test_no_active_tool_says_so(tmp_path: Path) -> None:
    route = route_for(tmp_path / "clip.mp3", ["calculator"])
    assert route.tool is None
    assert "No tool able to read it is active" in route.instruction and "transcribe_audio" in route.instruction


def test_missing_file_is_flagged(tmp_path: Path) -> None:
    assert "does not exist" in route_for(tmp_path / "gone.pdf", ALL_TOOLS).instruction


def test_without_registry_the_preferred_tool_is_named(tmp_path: Path) -> None:
    assert route_for(tmp_path / "a.flac").tool == "transcribe_audio"


def test_second_way_in_is_named_only_when_active(tmp_path: Path) -> None:
    with_python = route_for(tmp_path / "a.xlsx", ["parse_excel", "run_python"]).instruction
    without = route_for(tmp_path / "a.xlsx", ["parse_excel"]).instruction
    assert "run_python" in with_python and "pandas" in with_python
    assert "run_python" not in without
    assert "image_ocr" not in route_for(tmp_path / "a.png", ["analyze_image"]).instruction


def test_odd_characters_in_the_path(tmp_path: Path) -> None:
    path = tmp_path / "a {b} 'c'.txt"
    path.write_text("x")
    assert str(path) in route_for(path, ALL_TOOLS).instruction
