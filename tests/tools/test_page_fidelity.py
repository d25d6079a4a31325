"""Real pages read right (issue 19): links, infoboxes, math, table layouts, visible-text find, bounded conversion.

Fixtures are real recorded pages under tests/fixtures/real/ (their sources in SOURCES.md).
"""

from __future__ import annotations

import re
from pathlib import Path

from tests.support.web_server import LocalWebServer, Reply
from tools.core.paging import Document, find
from tools.documents.textio import html_to_markdown

REAL = Path(__file__).parent.parent / "fixtures" / "real"
NZ_URL = "https://en.wikipedia.org/wiki/New_Zealand"


def _real(name: str) -> str:
    return (REAL / name).read_text(encoding="utf-8")


def _targets(markdown: str) -> list[str]:
    return [t[1:-1] if t.startswith("<") else t for t in re.findall(r"\]\((<[^>]*>|[^)\s]*)", markdown)]


def test_document_relative_links_resolve_against_the_page_and_its_base_href():
    parish = html_to_markdown(_real("parish_1998.html"), url="http://host/parish/index.html", links=True)
    assert "[Baptisms 1559-1812](http://host/parish/scans/baptisms-1559.html)" in parish
    assert "(http://host/index.html)" in parish  # '../index.html'
    based = "<html><head><base href='http://cdn.example/docs/v2/'></head><body><p>" + "Intro text. " * 30 + \
            "<a href='guide/start.html'>Start</a> and <a href='/about'>About</a>.</p></body></html>"
    out = html_to_markdown(based, url="http://site.example/a/b.html", links=True)
    assert "[Start](http://cdn.example/docs/v2/guide/start.html)" in out and "[About](http://cdn.example/about)" in out


def test_the_final_url_after_redirects_is_the_base_of_fetch_webpage(tmp_path):
    from config import load_settings
    from tools.core.context import ToolContext
    from tools.core.services import RunServices
    from tools.core.workspace import Workspace
    from tools.web import make_web_tools

    page = Reply(200, "<html><body><p>" + "Scanned registers of the parish. " * 20 +
                 "<a href='scans/x.html'>Folio 1</a></p></body></html>")
    with LocalWebServer({"/old": Reply(301, "", headers={"Location": "/parish/index.html"}),
                         "/parish/index.html": page}) as server, Workspace(tmp_path / "w", 2**24) as work:
        settings = load_settings(FETCH_ALLOWED_HOSTS=server.host_port)
        fetch = {t.name: t for t in make_web_tools(settings)}["fetch_webpage"]
        out = fetch.invoke({"url": server.url("/old")}, config=ToolContext(run_services=RunServices(work)).to_config())
    assert f"[Folio 1]({server.url('/parish/scans/x.html')})" in out


def test_parenthesised_wikipedia_titles_keep_their_whole_url():
    out = html_to_markdown(_real("wikipedia_new_zealand.html"), url=NZ_URL, links=True)
    assert "[Kiwi](<https://en.wikipedia.org/wiki/Kiwi_(people)>)" in out
    assert not [t for t in _targets(out) if t.endswith(">") or "(" in t and ")" not in t]


def test_infobox_cells_that_hold_lists_keep_their_values():
    out = html_to_markdown(_real("wikipedia_new_zealand.html"), url=NZ_URL, links=True)
    row = next(line for line in out.splitlines() if line.startswith("| Official languages"))
    assert "English" in row and "Māori" in row and "Sign Language" in row
    ethnic = next(line for line in out.splitlines() if "Ethnic" in line and line.startswith("|"))
    assert "European" in ethnic and "Asian" in ethnic


def test_entities_in_link_urls_are_decoded_once():
    out = html_to_markdown(_real("wikipedia_new_zealand.html"), url=NZ_URL, links=True)
    geohack = [t for t in _targets(out) if "geohack" in t]
    assert geohack and all("&params=" in t for t in geohack) and "¶" not in out


def test_a_formula_is_read_once_as_tex():
    article = _real("wikipedia_hermitian_matrix.html")
    out = html_to_markdown(article, url="https://en.wikipedia.org/wiki/Hermitian_matrix", main_content_only=False,
                           links=True)
    assert out.count("A{\\text{ Hermitian}}") == article.count('alttext="{\\displaystyle A{\\text{ Hermitian}}')
    assert "displaystyle" not in out and "$A^{\\mathsf {H}}$" in out


def test_a_table_layout_page_keeps_its_links():
    out = html_to_markdown(_real("parish_1998.html"), url="http://host/parish/index.html", links=True)
    for name in ("baptisms-1559", "marriages-1559", "burials-1678", "banns-1754", "bishops-transcripts"):
        assert f"http://host/parish/scans/{name}.html" in out
    assert "volunteer transcriptions" in out


def test_800k_nested_divs_are_flattened_not_recursed_into():
    deep = ("<html><body><p>Top of the page.</p>" + "<div>" * 800_000 + "deep text" + "</div>" * 800_000
            + "</body></html>")
    whole = html_to_markdown(deep, url="http://h.example/", main_content_only=False, links=True)
    main = html_to_markdown(deep, url="http://h.example/", links=True)
    assert "deep text" in whole and "Top of the page." in whole and "Top of the page." in main


def _doc(text: str) -> Document:
    return Document("https://en.wikipedia.org/wiki/X", text, 'fetch_webpage(url="x", page={page})', 4000)


def test_find_matches_the_visible_text_not_link_targets():
    text = ("[Wellington](https://en.wikipedia.org/wiki/Wellington) is the capital. See "
            "[the harbour](https://en.wikipedia.org/wiki/Wellington_Harbour) and "
            "[Te Aro](https://en.wikipedia.org/wiki/Te_Aro,_Wellington).")
    out = find(_doc(text), "Wellington")
    assert out.startswith("1 match for 'Wellington'")


def test_find_matches_a_phrase_across_a_link_and_a_hyphen_joined_phrase():
    text = "In 1998 a [Grey-headed Lapwing](https://en.wikipedia.org/wiki/Grey-headed_lapwing) was seen near the lake."
    assert "1 match for 'a Grey-headed Lapwing was seen' (the phrase)" in find(_doc(text),
                                                                              "a Grey-headed Lapwing was seen")
    assert "(the phrase)" in find(_doc(text), "Grey-headed Lapwing")


def test_find_names_the_page_of_a_visible_match():
    long_target = "[a](https://x.example/" + "y" * 3000 + ") "  # 3,000 characters not searched, still counted
    text = long_target + "word " * 1500 + "[target](https://x.example/a) here"
    doc = _doc(text)
    out = find(doc, "target here")
    assert f"1. page {doc.page_of(text.index('[target]'))} of {doc.pages}" in out and doc.pages == 3
