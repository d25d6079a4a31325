"""scholarly_search, paper_lookup and orcid_works against loopback doubles in the real services' shapes."""

from __future__ import annotations

import pytest
from pydantic import SecretStr

from config import load_settings
from tests.support.scholarly_doubles import (
    COMMA_DOI,
    COMMA_TITLE,
    ORCID_ID,
    PLOS_ABSTRACT,
    PLOS_DOI,
    PLOS_ONE_MESSAGE,
    OpenAlexDouble,
    PrefixRoutes,
    comma_title_message,
    openalex_entity,
    orcid_summary,
    sample_works,
    scholarly_servers,
    unpaywall_location,
)
from tests.support.web_server import LocalWebServer
from tools.core.context import ToolContext
from tools.core.errors import ToolFailure
from tools.core.executor import run_tool
from tools.core.registry import build_registry
from tools.core.services import RunServices
from tools.core.workspace import Workspace
from tools.web import make_orcid_tools, make_scholarly_tools
from tools.web.crossref import strip_jats
from tools.web.openalex import rebuild_abstract
from tools.web.orcid import normalise_orcid


@pytest.fixture(scope="module")
def servers():
    alex = OpenAlexDouble(sample_works(), authors=[openalex_entity("A9", "Ada Lovelace-Byron"),
                                             openalex_entity("A7", "Ada Lovelace", ("A. Lovelace",))],
                          sources=[openalex_entity("S3", "Journal of Fish Biology Letters"),
                                   openalex_entity("S2", "Journal of Fish Biology")])
    jats = comma_title_message("<jats:title>Abstract</jats:title><jats:p>Catches peak "
                               "<jats:italic>two hours</jats:italic> after high tide &amp; fall at ebb.</jats:p>",
                               **{"container-title": ["Journal of Fish Biology"],
                                  "published": {"date-parts": [[2017, 8]]}})
    groups = [[orcid_summary(11, "Old paper", "2009", "journal-article", "Journal A", "10.1/a", "Crossref")],
              [orcid_summary(12, "Newest paper", "2021", "journal-article", "Journal B", "10.1/b", "Crossref"),
               orcid_summary(13, "Newest paper", "2021", "journal-article", "Journal B", "10.1/b", "Scopus")],
              [orcid_summary(14, "Middle book", "2015", "book", None, "", "Josiah Carberry", month="04")]]
    with scholarly_servers(alex, {PLOS_DOI: PLOS_ONE_MESSAGE, COMMA_DOI: jats}, groups, unpaywall={
            PLOS_DOI: unpaywall_location("https://journals.plos.org/plosone/article/file?id=0033693&type=printable",
                                         "https://journals.plos.org/plosone/article?id=0033693")}) as served:
        yield {"alex": alex, "oa": served["openalex"], "cr": served["crossref"], "up": served["unpaywall"],
               "orcid": served["orcid"]}


@pytest.fixture()
def services(servers):
    """The module's doubles with their request logs emptied."""
    for name in ("oa", "cr", "up", "orcid"):
        servers[name].requests.clear()
    servers["alex"].seen_filters.clear()
    return servers


def _tools(services, **overrides):
    values = {"OPENALEX_API_URL": services["oa"].base, "CROSSREF_API_URL": services["cr"].base,
              "UNPAYWALL_API_URL": services["up"].base, "ORCID_API_URL": services["orcid"].base,
              "HTTP_USER_AGENT": "test-agent/1.0 (mailto:ops@example.org)"}
    settings = load_settings(**{**values, **overrides})
    return {t.name: t for t in make_scholarly_tools(settings) + make_orcid_tools(settings)}


def test_inverted_index_is_rebuilt_in_position_order():
    assert rebuild_abstract({"tides": [1, 4], "The": [0], "follow": [2], "the": [3]}) == "The tides follow the tides"
    assert rebuild_abstract(None) == ""


def test_jats_tags_are_stripped_and_entities_decoded():
    assert strip_jats("<jats:title>Abstract</jats:title><jats:p>A &amp; <jats:italic>B</jats:italic></jats:p>"
                      "<jats:p>C.</jats:p>") == "A & B\nC."


def test_search_resolves_author_and_venue_exactly_and_says_so(services):
    tools = _tools(services, CONTACT_EMAIL="ops@example.org")
    out = tools["scholarly_search"].invoke({"query": "tides", "author": "ada lovelace", "year": "2015-2019",
                                            "venue": "Journal of Fish Biology"})
    assert "Author 'ada lovelace' resolved to Ada Lovelace (OpenAlex A7; exact name match)" in out
    assert "Venue 'Journal of Fish Biology' resolved to Journal of Fish Biology (OpenAlex S2" in out
    assert COMMA_TITLE in out and "DOI: 10.1111/jfb.99999" in out and "OpenAlex: W777" in out
    assert ": part " not in out  # the other Ada's works are filtered out
    works_request = next(r for r in services["oa"].requests if r.path == "/works")
    assert "mailto" not in works_request.query  # OpenAlex retired its polite pool for api_key (2026-02-13)
    assert works_request.headers["User-Agent"] == "test-agent/1.0 (mailto:ops@example.org)"
    assert services["alex"].seen_filters[-1] == ["from_publication_date:2015-01-01", "to_publication_date:2019-12-31",
                                                 "authorships.author.id:A7", "primary_location.source.id:S2"]


def test_search_lists_at_most_ten_with_counts_and_open_access(services):
    out = _tools(services)["scholarly_search"].invoke({"query": "rivers tides"})
    assert out.startswith("OpenAlex: 31 works match; the first 10:") and out.count("\n   DOI:") == 10
    assert "mailto" not in services["oa"].requests[-1].query and "api_key" not in services["oa"].requests[-1].query
    bad = _tools(services)["scholarly_search"]
    with pytest.raises(ToolFailure, match="2015-2019"):
        bad.func(query="x", year="around 2015", config={})


def test_doi_lookup_reads_crossref_and_rebuilds_the_missing_abstract_from_openalex(services):
    out = _tools(services)["paper_lookup"].invoke({"doi_or_title": f"https://doi.org/{PLOS_DOI}"})
    assert "Title: Methylphenidate Exposure Induces Dopamine Neuron Loss" in out
    assert "Journal: PLoS ONE, vol. 7, no. 3, pp. e33693" in out and "Published: 2012-03-21" in out
    assert "Authors: Shankar Sadasivan, Brooks B. Pond, Amar K. Pani" in out and "References: 70" in out
    assert "License: http://creativecommons.org/licenses/by/4.0/" in out and "Type: journal-article" in out
    assert f"Abstract: {PLOS_ABSTRACT}" in out and "abstract: OpenAlex abstract_inverted_index" in out
    # UNPAYWALL_EMAIL empty: Unpaywall is skipped and OpenAlex's best_oa_location is used
    assert "Open-access PDF: https://journals.plos.org/plosone/article/file?id=10.1371" in out
    assert "open-access copy: OpenAlex best_oa_location" in out and not services["up"].requests


def test_unpaywall_gives_the_copy_when_an_email_is_set(services):
    out = _tools(services, UNPAYWALL_EMAIL="me@example.org")["paper_lookup"].invoke({"doi_or_title": PLOS_DOI})
    assert "Open-access PDF: https://journals.plos.org/plosone/article/file?id=0033693&type=printable" in out
    assert "open-access copy: Unpaywall" in out
    assert services["up"].requests[0].query["email"] == ["me@example.org"]
    assert services["cr"].requests[0].query["mailto"] == ["me@example.org"]


def test_title_lookup_pages_with_cursor_and_never_puts_the_title_in_a_filter(services):
    out = _tools(services)["paper_lookup"].invoke({"doi_or_title": COMMA_TITLE.upper()})
    assert f"Title: {COMMA_TITLE}" in out and "metadata: Crossref (found by title on OpenAlex)" in out
    assert "Abstract: Catches peak two hours after high tide & fall at ebb." in out  # JATS stripped
    assert "Published: 2017-08" in out and "Journal: Journal of Fish Biology" in out
    cursors = [r.query.get("cursor", [""])[0] for r in services["oa"].requests if r.path == "/works"]
    assert cursors[:2] == ["*", "c25"]  # the exact title sits on the second page of hits
    assert all(not clauses for clauses in services["alex"].seen_filters)


def test_unknown_doi_and_title_say_what_to_try(services):
    tools = _tools(services)
    with pytest.raises(ToolFailure, match="no record of the DOI 10.9999/nothing.*pass the paper's title"):
        tools["paper_lookup"].func(doi_or_title="10.9999/nothing", config={})
    with pytest.raises(ToolFailure, match="no work titled exactly .*Closest hits"):
        tools["paper_lookup"].func(doi_or_title="Rivers and tides", config={})


def test_orcid_counts_groups_not_summaries_newest_first(services):
    out = _tools(services)["orcid_works"].invoke({"orcid": f"https://orcid.org/{ORCID_ID}"})
    lines = out.splitlines()
    assert lines[0] == "3 works" and lines[1] == f"ORCID {ORCID_ID}: Josiah Carberry"
    assert lines[2].startswith("1. Newest paper — journal-article · 2021 · Journal B · DOI 10.1/b")
    assert lines[3].startswith("2. Middle book — book · 2015-04") and lines[4].startswith("3. Old paper")


def test_orcid_ids_are_checked():
    assert normalise_orcid("orcid.org/0000000218250097") == ORCID_ID
    with pytest.raises(ToolFailure, match="check digit"):
        normalise_orcid("0000-0002-1825-0098")
    with pytest.raises(ToolFailure, match="not an ORCID iD"):
        normalise_orcid("Josiah Carberry")


def test_unknown_orcid_record_is_not_found(services):
    with pytest.raises(ToolFailure, match="no public record"):
        _tools(services)["orcid_works"].func(orcid="0000-0001-5109-3700")


def test_an_empty_setting_removes_its_tools_with_the_reason():
    registry = build_registry(load_settings(OPENALEX_API_URL="", ORCID_API_URL=""))
    assert "scholarly_search" not in registry.names and "orcid_works" not in registry.names
    assert "OPENALEX_API_URL is empty" in registry.missing["paper_lookup"]
    assert "ORCID_API_URL is empty" in registry.missing["orcid_works"]


def test_a_failing_service_is_named_with_what_to_try(services):
    from tests.support.web_server import Reply

    busy = {"/works/": Reply(503, "<html><body>Service Temporarily Unavailable</body></html>", "text/html")}
    with LocalWebServer(PrefixRoutes(busy)) as down:
        tools = _tools(services, CROSSREF_API_URL=down.base)
        with pytest.raises(ToolFailure, match=r"Crossref \(http://127\.0\.0\.1:\d+\) answered HTTP 503 "
                                              r"\(Service Temporarily Unavailable\)\. "
                                              r"Try again later, or use web_search"):
            tools["paper_lookup"].func(doi_or_title=PLOS_DOI, config={})
    with pytest.raises(ToolFailure, match="year must be a year"):
        _tools(services)["scholarly_search"].func(query="x", year="19th century", config={})


KEY = "oa-test-key-5f1c9e"


def test_the_openalex_key_is_sent_as_api_key_and_never_shown(services, caplog):
    tools = _tools(services, OPENALEX_API_KEY=KEY, CONTACT_EMAIL="ops@example.org")
    with caplog.at_level("INFO", logger="httpx"):
        out = tools["scholarly_search"].invoke({"query": "rivers tides"})
        tools["paper_lookup"].invoke({"doi_or_title": PLOS_DOI})
    sent = [r for r in services["oa"].requests]
    assert sent and all(r.query.get("api_key") == [KEY] and "mailto" not in r.query for r in sent)
    assert services["cr"].requests[-1].query["mailto"] == ["ops@example.org"]  # Crossref keeps its polite pool
    logged = " ".join(r.getMessage() for r in caplog.records)
    assert "api_key=***" in logged and KEY not in logged and KEY not in out
    from tests.support.web_server import Reply

    with LocalWebServer(PrefixRoutes({"/works": Reply(503, "upstream down", "text/plain")})) as down:
        failing = _tools(services, OPENALEX_API_URL=down.base, OPENALEX_API_KEY=KEY)
        with pytest.raises(ToolFailure) as failure:
            failing["scholarly_search"].func(query="tides", config={})
    assert KEY not in str(failure.value) and KEY not in repr(failing["scholarly_search"])


def test_a_spent_daily_budget_stops_searches_for_the_run_and_doi_lookups_still_work(tmp_path, services):
    alex = OpenAlexDouble(sample_works(), daily_usd=0.01, keys=(KEY,))
    with LocalWebServer(PrefixRoutes(alex.routes())) as metered, Workspace(tmp_path / "a", 2**20) as work, \
            Workspace(tmp_path / "b", 2**20) as later, Workspace(tmp_path / "c", 2**20) as keyed_run:
        settings = load_settings(OPENALEX_API_URL=metered.base, CROSSREF_API_URL=services["cr"].base,
                                 UNPAYWALL_API_URL=services["up"].base, TOOL_TIMEOUT=20)
        tools = {t.name: t for t in make_scholarly_tools(settings)}
        run = ToolContext(run_services=RunServices(work)).to_config()
        replies = [run_tool(tools["scholarly_search"], {"query": f"tides {i}"}, settings, run) for i in range(11)]
        asked = len(metered.requests)
        again = run_tool(tools["scholarly_search"], {"query": "rivers"}, settings, run)
        by_title = run_tool(tools["paper_lookup"], {"doi_or_title": COMMA_TITLE}, settings, run)
        by_doi = run_tool(tools["paper_lookup"], {"doi_or_title": PLOS_DOI}, settings, run)
        searches_after = sum(1 for r in metered.requests[asked:] if r.query.get("search"))
        other_run = run_tool(tools["scholarly_search"], {"query": "rivers"}, settings,
                             ToolContext(run_services=RunServices(later)).to_config())
        keyed = {t.name: t for t in make_scholarly_tools(settings.model_copy(
            update={"OPENALEX_API_KEY": SecretStr(KEY)}))}
        with_key = run_tool(keyed["scholarly_search"], {"query": "rivers"}, settings,
                            ToolContext(run_services=RunServices(keyed_run)).to_config())
    assert all(r.ok for r in replies[:10]) and not replies[10].ok  # $0.01 a day: ten searches
    spent = replies[10].output
    assert "OpenAlex's daily budget is spent (HTTP 429" in spent and "renews the next day" in spent
    assert "paper_lookup with a DOI still works" in spent and "Set OPENALEX_API_KEY" in spent
    assert "wait a few seconds" not in spent
    assert not again.ok and not by_title.ok and "daily budget is spent" in by_title.output
    assert searches_after == 0  # the rest of the run spends nothing
    assert by_doi.ok and "Title: " in by_doi.output  # singletons are free
    assert not other_run.ok  # another run asks again (and OpenAlex says the same)
    assert with_key.ok and "OpenAlex:" in with_key.output
