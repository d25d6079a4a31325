"""Archived captures, service error bodies, interwiki titles, the User-Agent, PDF word gaps (issue 19, defects 7-16).

The doubles answer in the real services' shapes: Wayback's replayed statuses and redirects, arXiv's
error feed, YouTube's bot check, MediaWiki's interwiki answer.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from config import load_settings
from tests.support.research_site import MediaWikiDouble, WikiRevision, arxiv_double, wayback_double
from tests.support.web_server import LocalWebServer, Reply
from tools.core.context import ToolContext
from tools.core.executor import run_tool
from tools.core.services import RunServices
from tools.core.workspace import Workspace
from tools.web import make_arxiv_tools, make_wayback_tools, make_web_tools, make_wikipedia_tools

REAL = Path(__file__).parent.parent / "fixtures" / "real"
ORIGINAL = "http://parish.example/registers/index.html"
CAPTURE = "/web/20010415093000id_/" + ORIGINAL
MEMENTO = {"Memento-Datetime": "Sun, 15 Apr 2001 09:30:00 GMT", "Link": f'<{ORIGINAL}>; rel="original"'}
PAGE_2001 = ("<html><body><h1>Registers</h1><p>" + "Transcribed parish registers of Little Hadham. " * 12 +
             "</p><p><a href='scans/b1559.html'>Baptisms</a> <a href='/about.html'>About</a> "
             "<a href='http://other.example/census.html'>Census</a></p></body></html>")


@pytest.fixture()
def run(tmp_path):
    with Workspace(tmp_path / "work", 2**24) as work:
        yield ToolContext(run_services=RunServices(work)).to_config()


@pytest.fixture(autouse=True)
def no_pause(monkeypatch):
    monkeypatch.setattr("tools.web.wayback.RETRY_PAUSE_S", 0.0)
    monkeypatch.setattr("tools.web.arxiv.RETRY_PAUSE_S", 0.0)


def _wayback(server, **double):
    snaps = {ORIGINAL: [("20010415093000", server.url("/web/20010415093000/" + ORIGINAL))]}
    server.routes["/wayback/available"] = wayback_double(snaps, **double)
    settings = load_settings(WAYBACK_API_URL=server.url("/wayback/available"), FETCH_ALLOWED_HOSTS=server.host_port,
                             HTTP_USER_AGENT="h19-test/1.0 (+mailto:ops@example.org)")
    return make_wayback_tools(settings)[0], settings


def test_capture_links_resolve_against_the_original_and_stay_in_the_archive(run):
    with LocalWebServer({CAPTURE: Reply(200, PAGE_2001, headers=MEMENTO)}) as server:
        tool, _ = _wayback(server)
        out = tool.invoke({"url": ORIGINAL, "date": "2001-04"}, config=run)
    web = server.url("/web/20010415093000/")
    assert f"[Baptisms]({web}http://parish.example/registers/scans/b1559.html)" in out
    assert f"[About]({web}http://parish.example/about.html)" in out
    assert f"[Census]({web}http://other.example/census.html)" in out


def test_an_archived_404_is_an_archived_error_not_a_live_one(run):
    with LocalWebServer({CAPTURE: Reply(404, "<html><body>Not Found</body></html>", headers=MEMENTO)}) as server:
        tool, settings = _wayback(server)
        outcome = run_tool(tool, {"url": ORIGINAL, "date": "2001-04"}, settings, run)
    assert not outcome.ok and "archived error page" in outcome.output and "Try another date" in outcome.output
    assert "check the URL" not in outcome.output


def test_an_availability_status_of_429_is_reported_without_reading_the_capture(run):
    with LocalWebServer({CAPTURE: Reply(200, PAGE_2001, headers=MEMENTO)}) as server:
        tool, settings = _wayback(server, statuses={"20010415093000": "429"})
        outcome = run_tool(tool, {"url": ORIGINAL, "date": "2001-04"}, settings, run)
        assert server.hits(CAPTURE) == 0
    assert not outcome.ok and "HTTP 429 when it was archived" in outcome.output and "another" in outcome.output
    assert "rate limiting" not in outcome.output


def test_the_header_names_the_capture_the_archive_redirected_to(run):
    later = "/web/20010502120000id_/" + ORIGINAL
    routes = {CAPTURE: Reply(302, "", headers={"Location": later}), later: Reply(200, PAGE_2001, headers=MEMENTO)}
    with LocalWebServer(routes) as server:
        tool, _ = _wayback(server)
        out = tool.invoke({"url": ORIGINAL, "date": "2001-04"}, config=run)
    assert ("taken 2001-05-02 12:00:00 UTC" in out
            and f"Snapshot: {server.url('/web/20010502120000/' + ORIGINAL)}" in out)
    assert f"{server.url('/web/20010502120000/')}http://parish.example/registers/scans/b1559.html" in out


def test_a_transiently_empty_availability_answer_is_asked_again(run):
    with LocalWebServer({CAPTURE: Reply(200, PAGE_2001, headers=MEMENTO)}) as server:
        tool, _ = _wayback(server, empty_answers=1)
        out = tool.invoke({"url": ORIGINAL, "date": "2001-04"}, config=run)
        assert server.hits("/wayback/available") == 2
    assert "Transcribed parish registers" in out


def test_arxiv_400_error_feed_is_the_message(tmp_path):
    feed = (REAL / "arxiv_error_400.xml").read_text()
    with LocalWebServer({"/api/query": Reply(400, feed, "application/atom+xml; charset=utf-8")}) as server:
        settings = load_settings(ARXIV_API_URL=server.url("/api/query"))
        outcome = run_tool(make_arxiv_tools(settings)[0], {"query": "1234.12345"}, settings)
    assert not outcome.ok and outcome.error_kind == "bad_arguments"
    assert "incorrect id format for 1234.12345" in outcome.output and "Try again later" not in outcome.output


def test_an_empty_arxiv_feed_is_asked_again(tmp_path):
    from tests.support.research_site import ArxivPaper

    paper = ArxivPaper("2106.01234v2", "Tidal Heating of Icy Moons", ("R. Okafor",), "2021-06-02T17:00:00Z",
                       "astro-ph.EP", "Tidal heating.")
    real = arxiv_double([paper])
    calls = []

    def flaky(request):
        calls.append(request)
        return real(request) if len(calls) > 1 else arxiv_double([])(request)

    with LocalWebServer({"/q": flaky}) as server:
        out = make_arxiv_tools(load_settings(ARXIV_API_URL=server.url("/q")))[0].invoke({"query": "tidal heating"})
    assert len(calls) == 2 and "Tidal Heating of Icy Moons" in out


@pytest.mark.parametrize(("name", "reason"), [
    ("TranscriptsDisabled", "Subtitles are disabled for this video"),
    ("RequestBlocked", "YouTube is blocking requests from your IP"),
    ("IpBlocked", "YouTube is blocking requests from your IP"),
    ("AgeRestricted", "This video is age-restricted"),
    ("PoTokenRequired", "The requested video cannot be retrieved without a PO Token"),
])
def test_youtube_caption_failures_give_the_librarys_cause(name, reason):
    from youtube_transcript_api import _errors

    from tools.media.video.youtube import blocked_advice, caption_failure

    note = caption_failure(getattr(_errors, name)("Xa7ZpQ3mT9k"))
    assert note.startswith(f"no captions ({name}: {reason}") and "most likely caused by" not in note
    assert (blocked_advice([note]) is not None) == (name in ("RequestBlocked", "IpBlocked"))


def test_a_blocked_youtube_host_is_not_told_to_check_the_url(monkeypatch, tmp_path):
    from tests.support.youtube import RecordedYouTube
    from tools.media.video.youtube import fetch_captions

    yt = RecordedYouTube(bot_check=True)
    yt.install(monkeypatch)
    segments, label = fetch_captions(yt.video_id, 5.0, "h19-test/1.0")
    assert not segments and label.startswith("no captions (RequestBlocked: YouTube is blocking requests")
    assert yt.user_agents and set(yt.user_agents) == {"h19-test/1.0"}


def test_interwiki_and_language_prefixes_are_explained(run):
    wiki = MediaWikiDouble({"Paris": [WikiRevision(1, "2020-01-01T00:00:00Z", "Ann", "<p>Paris.</p>")]},
                           interwiki={"fr": "https://fr.wikipedia.org/wiki/$1",
                                      "wikt": "https://en.wiktionary.org/wiki/$1",
                                      "mw": "https://www.mediawiki.org/wiki/$1"})
    with LocalWebServer({"/w/api.php": wiki}) as server:
        settings = load_settings(WIKIPEDIA_API_URL=server.url("/w/api.php"))
        page = {t.name: t for t in make_wikipedia_tools(settings)}["wikipedia_page"]
        french = run_tool(page, {"title": "fr:Paris"}, settings, run)
        word = run_tool(page, {"title": "wikt:lapwing"}, settings, run)
    assert not french.ok and "points to another wiki" in french.output
    assert "https://fr.wikipedia.org/wiki/Paris" in french.output and "no article titled" not in french.output
    assert "https://en.wiktionary.org/wiki/lapwing" in word.output


def test_a_language_link_is_followed_to_that_language_s_wiki(run):
    french = MediaWikiDouble({"Paris": [WikiRevision(7, "2021-05-01T00:00:00Z", "Zoé",
                                                     "<p>Paris est la capitale de la France.</p>")]})
    with LocalWebServer({"/fr/w/api.php": french}) as server:
        english = MediaWikiDouble({}, interwiki={"fr": server.url("/fr/wiki/$1"),
                                                 "mw": "https://www.mediawiki.org/wiki/$1"})
        server.routes["/w/api.php"] = english
        settings = load_settings(WIKIPEDIA_API_URL=server.url("/w/api.php"))
        page = {t.name: t for t in make_wikipedia_tools(settings)}["wikipedia_page"]
        out = page.invoke({"title": "fr:Paris"}, config=run)
        help_page = run_tool(page, {"title": "mw:Help:Links"}, settings, run)
    assert "Paris est la capitale" in out and "Revision 7" in out and "language link 'fr:Paris'" in out
    assert not help_page.ok and "points to another wiki" in help_page.output
    assert {c.get("titles") for c in french.calls if c.get("titles")} == {"Paris"}


def test_apis_get_the_contact_user_agent_and_web_pages_a_browser_s(run):
    agent = "h19-test/1.0 (+mailto:ops@example.org)"
    wiki = MediaWikiDouble({"Paris": [WikiRevision(1, "2020-01-01T00:00:00Z", "Ann", "<p>Paris is a city.</p>")]})
    routes = {CAPTURE: Reply(200, PAGE_2001, headers=MEMENTO), "/page": Reply(200, PAGE_2001), "/w/api.php": wiki,
              "/img.png": Reply(200, _png(), "image/png")}
    with LocalWebServer(routes) as server:
        routes["/q"] = arxiv_double([])
        routes["/wayback/available"] = wayback_double(
            {ORIGINAL: [("20010415093000", server.url("/web/20010415093000/" + ORIGINAL))]})
        settings = load_settings(WAYBACK_API_URL=server.url("/wayback/available"), FETCH_ALLOWED_HOSTS=server.host_port,
                                 WIKIPEDIA_API_URL=server.url("/w/api.php"), ARXIV_API_URL=server.url("/q"),
                                 HTTP_USER_AGENT=agent)
        tools = {t.name: t for t in make_web_tools(settings) + make_wayback_tools(settings)
                 + make_wikipedia_tools(settings) + make_arxiv_tools(settings)}
        tools["fetch_webpage"].invoke({"url": server.url("/page")}, config=run)
        tools["wayback"].invoke({"url": ORIGINAL, "date": "2001"}, config=run)
        tools["wikipedia_page"].invoke({"title": "Paris"}, config=run)
        run_tool(tools["arxiv_search"], {"query": "zeppelin"}, settings)
        from tools.media.images import open_image

        open_image(server.url("/img.png"), ToolContext.of(run), settings)
        from tools.search.searxng import from_settings

        routes["/search"] = Reply.json({"query": "Paris", "number_of_results": 0, "results": [
            {"url": "https://en.wikipedia.org/wiki/Paris", "title": "Paris", "content": "Capital.",
             "engine": "wikipedia"}],
            "answers": [], "corrections": [], "infoboxes": [], "suggestions": [], "unresponsive_engines": []})
        from_settings(settings.model_copy(update={"SEARXNG_URL": server.base})).search("Paris", 3, 5.0)
        seen = {(r.path, r.headers.get("User-Agent")) for r in server.requests}
    assert {path for path, _ in seen} >= {"/page", CAPTURE, "/wayback/available", "/w/api.php", "/q", "/img.png",
                                          "/search"}
    pages = {"/page", CAPTURE, "/img.png", "/wayback/available"}  # sites (and archive.org): a browser's UA
    assert {ua for path, ua in seen if path in pages} == {settings.FETCH_USER_AGENT}
    assert {ua for path, ua in seen if path not in pages} == {agent}  # the APIs that ask for a contact
    assert "mailto" not in settings.FETCH_USER_AGENT


def _png() -> bytes:
    import io

    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (4, 4), "white").save(buffer, "PNG")
    return buffer.getvalue()


def test_pdf_words_of_tightly_set_text_are_not_glued(tmp_path):
    from fpdf import FPDF

    from tools.documents.pdf import pdf_to_text

    pdf = FPDF(unit="pt")
    pdf.add_page()
    pdf.set_font("Times", size=10)
    words = "Theoretical description of anisotropic systems in the presence of disorder".split()
    x = 72.0
    for word in words:  # justified LaTeX lines: inter-word gaps of about 2 pt at 10 pt
        pdf.text(x, 100, word)
        x += pdf.get_string_width(word) + 2.2
    text = pdf_to_text(bytes(pdf.output()))
    assert " ".join(words) in text


LATEX_PDF = Path("/usr/share/doc/shared-mime-info/shared-mime-info-spec.pdf")  # pdfTeX output, Debian's package


@pytest.mark.skipif(not LATEX_PDF.exists(), reason="the Debian shared-mime-info documentation is not installed")
def test_a_real_latex_pdf_reads_without_glued_words():
    import re

    from tools.documents.pdf import pdf_to_text

    text = pdf_to_text(LATEX_PDF)
    glued = [w for w in re.findall(r"[A-Za-z]{25,}", text) if sum(c.isupper() for c in w) < 3]  # not CamelCase names
    assert not glued and 'The key words "MUST", "MUST NOT"' in text
