"""A run's documents are parsed in the budgeted worker (issue 36): a bomb is an observation, never the app's memory."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from config import load_settings
from tests.support import bombs
from tools.core.context import ToolContext
from tools.core.errors import ToolFailure
from tools.core.executor import run_tool
from tools.documents import isolated
from tools.documents.files import make_file_tools
from tools.documents.pdf import make_pdf_tools
from tools.isolation import limited_job as budgeted
from tools.isolation.limited_job import JobLimits


def _rss_mb() -> float:
    return int(Path("/proc/self/statm").read_text().split()[1]) * 4096 / 2**20


@pytest.fixture
def jobs(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The readers that ran in a worker process during the test."""
    ran: list[str] = []
    real = budgeted.run_worker

    def recording(module: str, request: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        ran.append(request["reader"])
        return real(module, request, *args, **kwargs)

    monkeypatch.setattr(budgeted, "run_worker", recording)
    return ran


def _call(tool: Any, path: Path, **settings: Any) -> Any:
    context = ToolContext(attachments=(path,), confined=True)
    return run_tool(tool, {"path": str(path)}, load_settings(**settings), config=context.to_config())


def test_a_532_byte_pdf_of_one_huge_page_is_an_observation_from_the_worker(tmp_path: Path, jobs):
    pdf = bombs.huge_page_pdf(tmp_path / "page.pdf")
    assert len(pdf.read_bytes()) < 600
    before = _rss_mb()
    (parse_pdf,) = make_pdf_tools(load_settings())
    (read_file,) = make_file_tools(load_settings())
    for tool in (parse_pdf, read_file):
        outcome = _call(tool, pdf)
        assert not outcome.ok and outcome.error_kind == "size_limit", outcome
        assert "14,400 x 14,400 pt" in outcome.output
    assert jobs == ["pdf", "pdf"]
    assert _rss_mb() - before < 100  # figure: the app's own memory; the bomb reached 5.6 GiB parsed in-process


def test_a_renamed_huge_page_pdf_is_still_parsed_as_a_pdf_in_the_worker(tmp_path: Path, jobs):
    pdf = bombs.huge_page_pdf(tmp_path / "page.docx")
    (read_file,) = make_file_tools(load_settings())
    outcome = _call(read_file, pdf)
    assert not outcome.ok and outcome.error_kind == "size_limit" and jobs == ["pdf"], outcome


def test_a_docx_that_parses_for_minutes_is_stopped_at_the_calls_limit(tmp_path: Path, jobs):
    """A valid 10 MB docx under the unpacked cap (27 s of CPU in full): read_file stops it at TOOL_TIMEOUT."""
    docx = bombs.parseable_docx(tmp_path / "long.docx", megabytes=10)
    (read_file,) = make_file_tools(load_settings(TOOL_TIMEOUT=3))
    before = _rss_mb()
    outcome = _call(read_file, docx, TOOL_TIMEOUT=3)
    assert not outcome.ok and jobs == ["docx"], outcome
    assert "TOOL_TIMEOUT" in outcome.output or "took longer" in outcome.output, outcome
    assert _rss_mb() - before < 100


def test_a_docx_bomb_stays_under_the_workers_memory_limit(tmp_path: Path):
    """20 MB of valid paragraphs need more than 400 MiB: the worker is stopped and the model told which limit held."""
    docx = bombs.parseable_docx(tmp_path / "big.docx", megabytes=20)
    before = _rss_mb()
    with pytest.raises(ToolFailure) as failure:
        isolated.parse_document("docx", docx, docx.name, limits=JobLimits(400, 60, 64))
    assert failure.value.kind == "size_limit" and "400 MiB of memory" in str(failure.value)
    assert _rss_mb() - before < 100


def test_a_docx_bomb_by_its_zip_directory_is_refused_in_the_worker(tmp_path: Path, jobs):
    bomb = bombs.huge_xml_docx(tmp_path / "huge.txt", megabytes=80)
    (read_file,) = make_file_tools(load_settings())
    outcome = _call(read_file, bomb)
    assert not outcome.ok and outcome.error_kind == "size_limit" and "word/document.xml" in outcome.output
    assert jobs == ["docx"]


def test_an_ordinary_pdf_reads_whole_through_the_worker(tmp_path: Path, jobs):
    pdf = bombs.huge_page_pdf(tmp_path / "letter.pdf", points=800)
    parts: list[str] = []
    text = isolated.parse_document("pdf", pdf, "letter.pdf", parts.append)
    assert parts[0] == "letter.pdf: 1 page" and "--- Page 1 ---" in text and jobs == ["pdf"]
