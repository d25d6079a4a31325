"""wikipedia_page (an article as of a date) and wikipedia_revisions (edit counts) against a MediaWiki API double."""

from __future__ import annotations

import pytest

from config import load_settings
from tests.support.research_site import MediaWikiDouble, WikiRevision, long_article
from tests.support.web_server import LocalWebServer
from tools.core.context import ToolContext
from tools.core.errors import MissingDependency
from tools.core.executor import run_tool
from tools.core.services import RunServices
from tools.core.workspace import Workspace
from tools.web import make_wikipedia_tools

REVISIONS = [
    WikiRevision(101, "2019-03-01T10:00:00Z", "Ann", "<p>The island had 300 inhabitants.</p>", "created"),
    WikiRevision(102, "2020-06-30T23:30:00Z", "Bob", "<p>The island had 412 inhabitants.</p>", "census"),
    WikiRevision(103, "2020-07-01T00:10:00Z", "Cid", "<p>The island had 415 inhabitants.</p>", "typo"),
    WikiRevision(104, "2022-12-31T12:00:00Z", "Dee", "<p>The island had 500 inhabitants. See "
                 "<a href='/wiki/Lighthouse'>Lighthouse</a>.</p>", "update"),
]


@pytest.fixture()
def wiki():
    many = [WikiRevision(1000 + i, f"2021-{1 + i // 28:02d}-{1 + i % 28:02d}T08:00:00Z", f"bot{i % 3}", "<p>x</p>",
                         f"edit {i}") for i in range(300)]
    double = MediaWikiDouble({"Isle of Test": REVISIONS, "Busy page": many,
                              "Long article": [WikiRevision(7, "2020-01-01T00:00:00Z", "Eve",
                                                            long_article("Long", 40, {39: "The final count is 91."}))]},
                             redirects={"Test Isle": "Isle of Test"}, page_size=50)
    with LocalWebServer({"/w/api.php": double}) as server:
        settings = load_settings(WIKIPEDIA_API_URL=server.url("/w/api.php"), MAX_FILE_SIZE=3000)
        tools = {t.name: t for t in make_wikipedia_tools(settings)}
        yield tools, double, settings, server


@pytest.fixture()
def run(tmp_path):
    with Workspace(tmp_path / "work", 2**24) as work:
        yield ToolContext(run_services=RunServices(work)).to_config()


def test_page_as_of_a_day_is_the_last_revision_at_or_before_its_end(wiki, run):
    tools, double, _, server = wiki
    out = tools["wikipedia_page"].invoke({"title": "Isle of Test", "as_of": "2020-06-30"}, config=run)
    assert "Revision 102 of 2020-06-30T23:30:00Z by Bob" in out and "412 inhabitants" in out
    assert f"Permalink: {server.url('/w/index.php')}?title=Isle_of_Test&oldid=102" in out
    query = double.calls[0]
    assert query["rvstart"] == "2020-06-30T23:59:59Z" and query["rvdir"] == "older" and query["rvlimit"] == "1"
    assert double.calls[1] == {"action": "parse", "oldid": "102", "prop": "text", "disableeditsection": "1",
                               "format": "json", "formatversion": "2"}


def test_current_page_follows_redirects_and_keeps_links(wiki, run):
    tools, _, _, server = wiki
    out = tools["wikipedia_page"].invoke({"title": "test Isle"}, config=run)
    assert "Wikipedia: Isle of Test — current revision ('Test Isle' redirects to 'Isle of Test')" in out
    assert "Revision 104" in out and f"[Lighthouse]({server.url('/wiki/Lighthouse')})" in out


def test_year_means_its_end_and_before_creation_is_not_found(wiki, run):
    tools, _, settings, _ = wiki
    assert "415 inhabitants" in tools["wikipedia_page"].invoke({"title": "Isle of Test", "as_of": "2021"}, config=run)
    early = run_tool(tools["wikipedia_page"], {"title": "Isle of Test", "as_of": "2018-01-01"}, settings, run)
    assert not early.ok and early.error_kind == "not_found" and "did not exist yet" in early.output


def test_missing_title_and_bad_date_say_what_to_do(wiki, run):
    tools, _, settings, _ = wiki
    missing = run_tool(tools["wikipedia_page"], {"title": "No such place"}, settings, run)
    bad = run_tool(tools["wikipedia_revisions"], {"title": "Isle of Test", "start": "last spring-ish"}, settings, run)
    assert (not missing.ok and missing.error_kind == "not_found"
            and "no article titled 'No such place'" in missing.output)
    assert not bad.ok and bad.error_kind == "bad_arguments" and "YYYY-MM-DD" in bad.output


def test_long_revision_is_paged_and_findable_by_permalink(wiki, run):
    from tools.web import make_web_tools

    tools, double, settings, _ = wiki
    first = tools["wikipedia_page"].invoke({"title": "Long article", "as_of": "2020-02-01"}, config=run)
    total = int(first.split("[page 1 of ")[1].split("]")[0])
    assert 'Next: wikipedia_page(title="Long article", as_of="2020-02-01", page=2)' in first
    last = tools["wikipedia_page"].invoke({"title": "Long article", "as_of": "2020-02-01", "page": total}, config=run)
    permalink = first.split("Permalink: ")[1].split("\n")[0]
    find = {t.name: t for t in make_web_tools(settings)}["find_in_page"]
    found = find.invoke({"source": permalink, "query": "final count"}, config=run)
    assert "The final count is 91." in last and f"page {total} of {total}" in found
    assert sum(c["action"] == "parse" for c in double.calls) == 1  # paging and finding reuse the one rendering


def test_revisions_count_between_days_inclusive_newest_first(wiki):
    tools, double, _, _ = wiki
    out = tools["wikipedia_revisions"].invoke({"title": "Isle of Test", "start": "2020-06-30", "end": "2022-12-31"})
    lines = out.splitlines()
    assert lines[0] == "3 revisions"
    assert lines[2].startswith("2022-12-31T12:00:00Z  rev 104  Dee") and lines[4].startswith("2020-06-30T23:30:00Z")
    assert double.calls[-1]["rvstart"] == "2022-12-31T23:59:59Z" and double.calls[-1]["rvend"] == "2020-06-30T00:00:00Z"
    assert tools["wikipedia_revisions"].invoke({"title": "Isle of Test"}).splitlines()[0] == "4 revisions"
    assert tools["wikipedia_revisions"].invoke({"title": "Isle of Test", "end": "2020-06"}).startswith("2 revisions\n")


def test_revisions_follow_continuation_and_cap_the_listing(wiki):
    tools, double, _, _ = wiki
    out = tools["wikipedia_revisions"].invoke({"title": "Busy page", "start": "2021-01-01", "end": "2021-12-31"})
    assert out.splitlines()[0] == "300 revisions" and "260 older revisions not listed" in out
    assert sum(c.get("titles") == "Busy page" for c in double.calls) == 6  # 300 revisions in answers of 50


def test_empty_api_url_removes_the_tools_with_a_reason():
    with pytest.raises(MissingDependency) as caught:
        make_wikipedia_tools(load_settings(WIKIPEDIA_API_URL=""))
    assert (caught.value.tools == ["wikipedia_page", "wikipedia_revisions"]
            and "WIKIPEDIA_API_URL" in caught.value.reason)


def test_suppressed_users_and_comments_are_shown_as_hidden():
    # The real API's answer for a suppressed field: `userhidden: true` / `commenthidden: true`, no value.
    revisions = [WikiRevision(201, "2020-01-02T00:00:00Z", "Vandal", "<p>x</p>", "abuse",
                              hidden=frozenset({"user", "comment"})),
                 WikiRevision(200, "2020-01-01T00:00:00Z", "Ann", "<p>x</p>", "created")]
    with LocalWebServer({"/w/api.php": MediaWikiDouble({"Quiet page": revisions}, page_size=1)}) as server:
        tools = {t.name: t for t in make_wikipedia_tools(load_settings(WIKIPEDIA_API_URL=server.url("/w/api.php")))}
        out = tools["wikipedia_revisions"].invoke({"title": "Quiet page"})
    lines = out.splitlines()
    assert lines[0] == "2 revisions" and "Vandal" not in out and "abuse" not in out
    assert lines[2] == "2020-01-02T00:00:00Z  rev 201  (hidden)  8 bytes" and "Ann" in lines[3]
