"""Downloads the code can use: files saved in the run's workspace, MAX_DOWNLOAD_MB, Content-Disposition, long PDFs."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from config import load_settings
from tests.support.downloads import ChunkedServer, large_pdf, roster_csv
from tests.support.web_server import LocalWebServer, Reply
from tools.core.context import ToolContext
from tools.core.errors import ToolFailure
from tools.core.executor import run_tool
from tools.core.paging import find
from tools.core.services import RunServices
from tools.core.workspace import Workspace
from tools.documents.pdf import make_pdf_tools
from tools.documents.pdf_parse import pdf_document, pdf_parse
from tools.web import make_web_tools
from tools.web.download import disposition_name

LATE_FACT = "The parish of Wendlebury paid 412 shillings in tithes."


def _tools(server_host_port: str, **overrides):
    settings = load_settings(TOOL_TIMEOUT=30, MAX_FILE_SIZE=4000, FETCH_ALLOWED_HOSTS=server_host_port, **overrides)
    return settings, {t.name: t for t in make_web_tools(settings) + make_pdf_tools(settings)}


@pytest.fixture()
def run(tmp_path):
    with Workspace(tmp_path / "work", 200 * 2**20) as work:
        yield ToolContext(run_services=RunServices(work)).to_config()


def _saved(reply: str) -> Path:
    return Path(reply.split("Saved to ")[1].split(" (")[0])


@pytest.mark.parametrize("name,content_type,body", [
    ("/data/roster.csv", "text/csv; charset=utf-8", roster_csv(50)),
    ("/data/table.tsv", "text/tab-separated-values", "a\tb\n1\t2\n"),
    ("/api/items", "application/json", '{"items": [1, 2, 3]}'),
    ("/feed.xml", "application/xml", "<?xml version='1.0'?><root><n>7</n></root>"),
    ("/words.txt", "text/plain", "apple\nbanana\ncherry\n"),
])
def test_text_downloads_are_shown_and_saved_for_the_code(run, name, content_type, body):
    with LocalWebServer({name: Reply(200, body, content_type)}) as server:
        _, tools = _tools(server.host_port)
        reply = tools["fetch_webpage"].invoke({"url": server.url(name)}, config=run)
    saved = _saved(reply)
    assert saved.read_text() == body and ToolContext.of(run).work.contains(saved)
    assert "open it with run_python" in reply and body.splitlines()[0] in reply
    assert saved.suffix in (".csv", ".tsv", ".json", ".xml", ".txt")


def test_an_export_url_is_named_from_content_disposition(run):
    headers = {"Content-Disposition": "attachment; filename=\"roster 2023.csv\"; "
                                      "filename*=UTF-8''Stations%20%C3%A9t%C3%A9.csv"}
    with LocalWebServer({"/spreadsheets/d/abc/export": Reply(200, roster_csv(5), "text/csv", headers)}) as server:
        _, tools = _tools(server.host_port)
        reply = tools["fetch_webpage"].invoke({"url": server.url("/spreadsheets/d/abc/export")}, config=run)
    assert _saved(reply).name == "Stations été.csv"


def test_content_disposition_names_are_made_safe():
    assert disposition_name('attachment; filename="../../etc/passwd"') == "passwd"
    assert disposition_name("attachment; filename=report.pdf") == "report.pdf"
    assert disposition_name('inline; filename="a\\\\b;c.txt"') == "b_c.txt"
    assert disposition_name("attachment") == ""


def test_a_content_length_past_the_limit_is_refused_before_reading(run):
    with LocalWebServer({"/big.zip": Reply(200, b"PK" + bytes(3 * 2**20), "application/zip")}) as server:
        settings, tools = _tools(server.host_port, MAX_DOWNLOAD_MB=2)
        outcome = run_tool(tools["fetch_webpage"], {"url": server.url("/big.zip")}, settings, run)
    assert not outcome.ok and outcome.error_kind == "size_limit"
    assert "3.0 MB (its Content-Length), over the download limit of 2.0 MB" in outcome.output
    work = ToolContext.of(run).work
    assert not [p for p in work.root.rglob("*") if p.is_file()]  # nothing was read into the workspace


def test_a_stream_passing_the_limit_is_cut_and_says_so(run):
    text = ("line of the endless export\n" * 80_000).encode()  # 2.1 MB, sent without Content-Length
    with ChunkedServer(text, "text/plain") as server:
        settings, tools = _tools(server.host_port, MAX_DOWNLOAD_MB=1)
        url = server.url("/export.txt")
        first = run_tool(tools["fetch_webpage"], {"url": url}, settings, run).output
        pages = int(first.split("[page 1 of ")[1].split("]")[0])
        last = tools["fetch_webpage"].invoke({"url": url, "page": pages}, config=run)
    with ChunkedServer(b"\x89PNG\r\n\x1a\n" + bytes(2 * 2**20), "image/png") as images:
        _, image_tools = _tools(images.host_port, MAX_DOWNLOAD_MB=1)
        refused = run_tool(image_tools["fetch_webpage"], {"url": images.url("/x.png")}, settings, run)
    assert _saved(first).stat().st_size == 2**20
    assert "download cut at 1.0 MB, the download limit (MAX_DOWNLOAD_MB)" in last
    assert not refused.ok and refused.error_kind == "size_limit" and "1.0 MB, MAX_DOWNLOAD_MB" in refused.output


@pytest.fixture(scope="module")
def big_pdf():
    return large_pdf(60, {37: LATE_FACT})


def test_a_pdf_past_five_mb_is_read_and_found_in_with_its_pdf_page(run, big_pdf):
    assert len(big_pdf) > 5 * 2**20
    with LocalWebServer({"/archive/tithes.pdf": Reply(200, big_pdf, "application/pdf")}) as server:
        _, tools = _tools(server.host_port)
        url = server.url("/archive/tithes.pdf")
        first = tools["fetch_webpage"].invoke({"url": url}, config=run)
        found = tools["find_in_page"].invoke({"source": url, "query": "Wendlebury"}, config=run)
        again = tools["find_in_page"].invoke({"source": str(_saved(first)), "query": "tithes"}, config=run)
        assert server.hits("/archive/tithes.pdf") == 1  # finding does not download it again
    assert "60 pages" in first and "MB; parse_pdf and find_in_page open it" in first
    assert "(PDF p. 37):" in found and "412 shillings" in found
    assert "(PDF p. 37)" in again


def test_a_long_pdf_is_parsed_across_calls_without_losing_pages(tmp_path, big_pdf):
    path = tmp_path / "tithes.pdf"
    path.write_bytes(big_pdf)
    with Workspace(tmp_path / "work", 2**26) as work:
        run = RunServices(work)
        early = pdf_document(run, path, "tithes.pdf", f'parse_pdf(path="{path}", page={{page}})', 4000,
                             deadline=time.monotonic())  # this call may not wait at all
        assert early.provisional and "still being parsed" in early.head
        assert pdf_parse(run, path, "tithes.pdf").wait(time.monotonic() + 120)
        full = pdf_document(run, path, "tithes.pdf", f'parse_pdf(path="{path}", page={{page}})', 4000,
                            deadline=time.monotonic())
        assert not full.provisional and "--- Page 60 ---" in full.text
        assert "(PDF p. 37)" in find(full, "Wendlebury")


def test_parse_pdf_failures_stay_clear(tmp_path, run):
    bad = tmp_path / "broken.pdf"
    bad.write_bytes(b"%PDF-1.4\n garbage")
    settings = load_settings(TOOL_TIMEOUT=10)
    tool = {t.name: t for t in make_pdf_tools(settings)}["parse_pdf"]
    outcome = run_tool(tool, {"path": str(bad)}, settings, run)
    assert not outcome.ok and outcome.error_kind == "corrupt_file"
    with pytest.raises(ToolFailure):
        tool.func(path=str(tmp_path / "missing.pdf"), config=run)


@pytest.mark.integration
def test_parse_pdf_on_a_long_pdf_answers_within_tool_timeout_every_call(tmp_path, run):
    path = tmp_path / "survey.pdf"
    path.write_bytes(large_pdf(100, {96: LATE_FACT}, pad_mb=0.1))
    settings = load_settings(TOOL_TIMEOUT=3, MAX_FILE_SIZE=4000)
    tools = {t.name: t for t in make_pdf_tools(settings) + make_web_tools(settings)}
    replies = []
    for _ in range(120):  # each call waits at most its own budget; the parse goes on between calls
        outcome = run_tool(tools["parse_pdf"], {"path": str(path)}, settings, run)
        assert outcome.ok, outcome.output  # the executor's TOOL_TIMEOUT was never reached
        replies.append(outcome.output)
        if "still being parsed" not in outcome.output:
            break
    assert "still being parsed" in replies[0] and "still being parsed" not in replies[-1]
    found = run_tool(tools["find_in_page"], {"source": str(path), "query": "Wendlebury"}, settings, run)
    assert found.ok and "(PDF p. 96)" in found.output
