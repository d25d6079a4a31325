"""fetch_webpage in pages, find_in_page, links and images, web PDFs, and the run's page cache (loopback, no network)."""

from __future__ import annotations

from pathlib import Path

import pytest

from config import load_settings
from tests.support.research_site import long_article, multipage_pdf
from tests.support.web_server import LocalWebServer, Reply
from tools.core.context import ToolContext
from tools.core.executor import run_tool
from tools.core.services import RunServices
from tools.core.workspace import Workspace
from tools.web import make_web_tools

LAST_FACT = "The lighthouse keeper's final logbook entry records 7,318 ships."
MIDDLE_FACT = "The society's treasurer in 1921 was Ottilie Brennan."


def _tools(settings, server):
    settings = settings.model_copy(update={"FETCH_ALLOWED_HOSTS": server.host_port})
    return {t.name: t for t in make_web_tools(settings)}


@pytest.fixture()
def settings():
    return load_settings(TOOL_TIMEOUT=20, MAX_FILE_SIZE=4000)


@pytest.fixture()
def run(tmp_path):
    """A run of its own: a fresh workspace, so its page cache starts empty."""
    with Workspace(tmp_path / "work", 50 * 2**20) as work:
        yield ToolContext(run_services=RunServices(work)).to_config()


@pytest.fixture()
def article():
    return long_article("Lighthouse Society", 60, {30: MIDDLE_FACT, 59: LAST_FACT})


def _pages(reply: str) -> int:
    return int(reply.split("[page 1 of ")[1].split("]")[0])


def test_every_page_says_n_of_m_and_the_last_page_holds_the_last_fact(settings, run, article):
    with LocalWebServer({"/article": Reply(200, article)}) as server:
        fetch = _tools(settings, server)["fetch_webpage"]
        url = server.url("/article")
        first = run_tool(fetch, {"url": url}, settings, run).output
        total = _pages(first)
        replies = [first] + [fetch.invoke({"url": url, "page": n}, config=run) for n in range(2, total + 1)]
        assert server.hits("/article") == 1
    assert total >= 8 and LAST_FACT not in first
    for number, reply in enumerate(replies, start=1):
        assert f"page {number} of {total}" in reply and len(reply) <= settings.MAX_FILE_SIZE
        if number < total:
            assert f'Next: fetch_webpage(url="{url}", page={number + 1})' in reply
    assert LAST_FACT in replies[-1] and "the last]" in replies[-1]
    assert sum(MIDDLE_FACT in r for r in replies) == 1


def test_a_page_past_the_end_says_how_many_there_are(settings, run, article):
    with LocalWebServer({"/article": Reply(200, article)}) as server:
        fetch = _tools(settings, server)["fetch_webpage"]
        total = _pages(fetch.invoke({"url": server.url("/article")}, config=run))
        outcome = run_tool(fetch, {"url": server.url("/article"), "page": total + 5}, settings, run)
        bad = run_tool(fetch, {"url": server.url("/article"), "page": 0}, settings, run)
    assert not outcome.ok and f"has only {total} pages" in outcome.output
    assert not bad.ok and "page must be 1 or more" in bad.output


def test_find_names_the_page_and_paging_plus_finding_download_once(settings, run, article):
    with LocalWebServer({"/article": Reply(200, article)}) as server:
        tools = _tools(settings, server)
        url = server.url("/article")
        found = tools["find_in_page"].invoke({"source": url, "query": "ottilie brennan"}, config=run)
        page = int(found.split("1. page ")[1].split(" of")[0])
        shown = tools["fetch_webpage"].invoke({"url": url, "page": page}, config=run)
        again = tools["find_in_page"].invoke({"source": url, "query": "logbook entry"}, config=run)
        assert server.hits("/article") == 1
    assert found.startswith("1 match for 'ottilie brennan'") and "Ottilie Brennan" in found
    assert MIDDLE_FACT in shown and "7,318 ships" in again


def test_find_caps_matches_and_counts_the_rest(settings, run, article):
    with LocalWebServer({"/article": Reply(200, article)}) as server:
        out = _tools(settings, server)["find_in_page"].invoke({"source": server.url("/article"), "query": "committee"},
                                                               config=run)
    assert out.startswith("290 matches for 'committee'") and "more matches on pages" in out
    assert len(out) <= settings.MAX_FILE_SIZE


def test_find_falls_back_to_words_near_each_other_and_says_when_nothing_matches(settings, run, article):
    with LocalWebServer({"/article": Reply(200, article)}) as server:
        find = _tools(settings, server)["find_in_page"]
        near = find.invoke({"source": server.url("/article"), "query": "treasurer Brennan"}, config=run)
        missing = run_tool(find, {"source": server.url("/article"), "query": "zeppelin"}, settings, run)
    assert "all the words within a few hundred characters" in near and "Ottilie Brennan" in near
    assert not missing.ok and missing.error_kind == "no_results" and "does not occur" in missing.output


def test_links_and_images_are_kept_with_absolute_urls(settings, run):
    extra = ("<p>The full roster is on <a href='/wiki/Roster_of_keepers'>the roster page</a> and at "
             "<a href='https://example.org/keepers?year=1921'>the county archive</a>.</p>"
             "<figure><img src='/media/tower.jpg' alt='The tower in 1921'></figure>"
             "<p>A map without alt text: <img src='img/coast-map.png'> and one with a title: "
             "<img src='/media/x.gif' title='Harbour chart'>.</p>")
    with LocalWebServer({"/wiki/Lighthouse": Reply(200, long_article("Lighthouse", 3, extra_html=extra))}) as server:
        out = _tools(settings, server)["fetch_webpage"].invoke({"url": server.url("/wiki/Lighthouse")}, config=run)
    assert f"[the roster page]({server.url('/wiki/Roster_of_keepers')})" in out
    assert "[the county archive](https://example.org/keepers?year=1921)" in out
    assert f"![The tower in 1921]({server.url('/media/tower.jpg')})" in out
    assert f"![coast-map.png]({server.url('/wiki/img/coast-map.png')})" in out
    assert f"![Harbour chart]({server.url('/media/x.gif')})" in out


def test_web_pdf_is_saved_and_paged_with_pdf_page_numbers(settings, run):
    texts = [f"Chapter {n}. " + "The tide tables were copied by hand. " * 40 for n in range(1, 13)]
    texts[10] = "Chapter 11. The secret harbour depth is 14 fathoms. " + "More tables. " * 60
    with LocalWebServer({"/papers/tides.pdf": Reply(200, multipage_pdf(texts), "application/pdf")}) as server:
        tools = _tools(settings, server)
        url = server.url("/papers/tides.pdf")
        first = tools["fetch_webpage"].invoke({"url": url}, config=run)
        found = tools["find_in_page"].invoke({"source": url, "query": "harbour depth"}, config=run)
        page = int(found.split("1. page ")[1].split(" of")[0])
        shown = tools["fetch_webpage"].invoke({"url": url, "page": page}, config=run)
        assert server.hits("/papers/tides.pdf") == 1
    saved = Path(first.split("Saved to ")[1].split(" (")[0])
    assert saved.is_file() and saved.read_bytes()[:5] == b"%PDF-" and saved.name == "tides.pdf"
    assert "PDF (" in first and ": 12 pages" in first and "--- Page 1 ---" in first and _pages(first) > 1
    assert "--- Page 11 ---" in shown and "14 fathoms" in shown
    by_path = tools["find_in_page"].invoke({"source": str(saved), "query": "14 fathoms"}, config=run)
    assert "14 fathoms" in by_path


def test_find_in_page_on_an_attachment(settings, tmp_path):
    notes = tmp_path / "notes.txt"
    notes.write_text("\n".join(f"line {i}: nothing here" for i in range(2000)) + "\nline 2000: the code is K-77\n")
    with Workspace(tmp_path / "work", 2**20) as work:
        config = ToolContext(attachments=(notes,), run_services=RunServices(work), confined=True).to_config()
        find = {t.name: t for t in make_web_tools(settings)}["find_in_page"]
        out = find.invoke({"source": str(notes), "query": "code is"}, config=config)
        refused = run_tool(find, {"source": "/etc/hostname", "query": "x"}, settings, config)
    assert "the code is K-77" in out and 'read_file(path="' in out
    assert not refused.ok and refused.error_kind in ("not_allowed", "missing_file")


def test_long_tool_output_in_general_is_kept_and_paged(settings, run):
    from langchain_core.tools import tool

    @tool
    def noisy() -> str:
        """Print a lot."""
        return "\n".join(f"row {i}" for i in range(3000)) + "\nTHE END"

    outcome = run_tool(noisy, {}, settings, run)
    assert outcome.ok and len(outcome.output) <= settings.MAX_FILE_SIZE + 400 and "row 0" in outcome.output
    saved = outcome.output.split("saved to ")[1].split(")")[0]
    assert f'Next: read_file(path="{saved}", page=2)' in outcome.output
    assert Path(saved).read_text().endswith("THE END")


def test_long_csv_from_the_web_reads_to_its_last_line(settings, run):
    csv = "id,value\n" + "".join(f"{i},{i * 3}\n" for i in range(1, 20001))
    with LocalWebServer({"/data.csv": Reply(200, csv, "text/csv")}) as server:
        fetch = _tools(settings, server)["fetch_webpage"]
        first = fetch.invoke({"url": server.url("/data.csv")}, config=run)
        last = fetch.invoke({"url": server.url("/data.csv"), "page": _pages(first)}, config=run)
        assert server.hits("/data.csv") == 1
    assert "1,3" in first and "20000,60000" in last
