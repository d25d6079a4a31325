"""wayback (availability API double + snapshots on loopback) and arxiv_search (Atom double)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from config import load_settings
from tests.support.research_site import ArxivPaper, arxiv_double, long_article, wayback_double
from tests.support.web_server import LocalWebServer, Reply
from tools.core.context import ToolContext
from tools.core.errors import MissingDependency
from tools.core.executor import run_tool
from tools.core.services import RunServices
from tools.core.workspace import Workspace
from tools.web import make_arxiv_tools, make_wayback_tools, make_web_tools
from tools.web.arxiv import search_params

MENU_2019 = ("<html><body><h1>Menu</h1><p>Today's soup: lentil with smoked paprika, served with rye bread.</p>"
             "</body></html>")
MENU_2021 = ("<html><body><h1>Menu</h1><p>Today's soup: chilled beetroot with dill, served with rye bread.</p>"
             "</body></html>")


@pytest.fixture()
def run(tmp_path):
    with Workspace(tmp_path / "work", 2**24) as work:
        yield ToolContext(run_services=RunServices(work)).to_config()


@pytest.fixture()
def archive():
    routes = {"/web/20190314080000id_/http://diner.example/menu": Reply(200, MENU_2019),
              "/web/20210601120000id_/http://diner.example/menu": Reply(200, MENU_2021)}
    with LocalWebServer(routes) as server:
        snaps = {"http://diner.example/menu": [
            ("20190314080000", server.url("/web/20190314080000/http://diner.example/menu")),
            ("20210601120000", server.url("/web/20210601120000/http://diner.example/menu"))]}
        server.routes["/wayback/available"] = wayback_double(snaps)
        settings = load_settings(WAYBACK_API_URL=server.url("/wayback/available"), FETCH_ALLOWED_HOSTS=server.host_port)
        yield make_wayback_tools(settings)[0], settings, server


def test_closest_snapshot_is_read_and_named(archive, run):
    wayback, _, server = archive
    out = wayback.invoke({"url": "http://diner.example/menu", "date": "2019-05-01"}, config=run)
    assert "taken 2019-03-14 08:00:00 UTC" in out and "lentil with smoked paprika" in out
    assert f"Snapshot: {server.url('/web/20190314080000/http://diner.example/menu')}" in out
    api = next(r for r in server.requests if r.path == "/wayback/available")
    assert api.query == {"url": ["http://diner.example/menu"], "timestamp": ["20190501"]}
    later = wayback.invoke({"url": "http://diner.example/menu", "date": "2022"}, config=run)
    assert "chilled beetroot" in later


def test_snapshot_is_one_cached_page_for_fetch_and_find(archive, run):
    wayback, settings, server = archive
    wayback.invoke({"url": "http://diner.example/menu", "date": "2019-05-01"}, config=run)
    tools = {t.name: t for t in make_web_tools(settings)}
    raw = server.url("/web/20190314080000id_/http://diner.example/menu")
    assert "paprika" in tools["find_in_page"].invoke({"source": raw, "query": "smoked paprika"}, config=run)
    assert server.hits("/web/20190314080000id_/http://diner.example/menu") == 1


def test_no_snapshot_and_blocked_urls_are_clear_failures(archive, run):
    wayback, settings, _ = archive
    none = run_tool(wayback, {"url": "http://never.example/", "date": "2019-01-01"}, settings, run)
    blocked = run_tool(wayback, {"url": "https://huggingface.co/datasets/gaia-benchmark/GAIA", "date": "2023"},
                       settings, run)
    assert not none.ok and none.error_kind == "not_found" and "no snapshot" in none.output
    assert not blocked.ok and blocked.error_kind == "blocked"


def test_snapshot_on_a_private_address_is_refused(run):
    # The API is trusted, the snapshot URL it returns is not: it goes through the address checks.
    with LocalWebServer({}) as server:
        server.routes["/available"] = wayback_double({"http://a.example/": [("20200101000000",
                                                                               "http://127.0.0.1:9/x")]})
        settings = load_settings(WAYBACK_API_URL=server.url("/available"))
        outcome = run_tool(make_wayback_tools(settings)[0], {"url": "http://a.example/", "date": "2020"}, settings, run)
    assert not outcome.ok and outcome.error_kind == "blocked" and "local or private address" in outcome.output


PAPERS = [
    ArxivPaper("2106.01234v2", "Tidal Heating of Icy Moons", ("R. Okafor", "L. Brandt"), "2021-06-02T17:00:00Z",
               "astro-ph.EP", "We model tidal heating in Europa and Enceladus."),
    ArxivPaper("1905.00001v1", "Graph Networks for Lighthouse Logistics", ("M. Keeper",), "2019-05-01T00:00:00Z",
               "cs.LG", "Scheduling lamp maintenance with graph neural networks."),
]


def test_arxiv_results_carry_id_authors_date_category_and_links(tmp_path):
    with LocalWebServer({"/api/query": arxiv_double(PAPERS)}) as server:
        tool = make_arxiv_tools(load_settings(ARXIV_API_URL=server.url("/api/query")))[0]
        out = tool.invoke({"query": "tidal heating moons"})
        by_id = tool.invoke({"query": "arXiv:1905.00001v1"})
        request = server.requests[0]
    assert request.query["search_query"] == ["all:tidal AND all:heating AND all:moons"]
    assert "1. Tidal Heating of Icy Moons" in out and "arXiv:2106.01234v2 · astro-ph.EP · published 2021-06-02" in out
    assert "Authors: R. Okafor, L. Brandt" in out and "PDF: http://arxiv.org/pdf/2106.01234v2" in out
    assert "Abstract page: http://arxiv.org/abs/2106.01234v2" in out and "Lighthouse" not in out
    assert "Graph Networks for Lighthouse Logistics" in by_id


def test_arxiv_query_forms_and_no_results():
    assert search_params("au:Keeper AND ti:graph")["search_query"] == "au:Keeper AND ti:graph"
    assert search_params("2106.01234")["id_list"] == "2106.01234"
    with LocalWebServer({"/q": arxiv_double(PAPERS)}) as server:
        settings = load_settings(ARXIV_API_URL=server.url("/q"))
        outcome = run_tool(make_arxiv_tools(settings)[0], {"query": "zeppelin"}, settings)
    assert not outcome.ok and outcome.error_kind == "no_results"


def test_paper_pdf_reads_with_fetch_webpage(run):
    from tests.support.research_site import multipage_pdf

    with LocalWebServer({}) as server:
        server.routes["/pdf/2106.01234v2"] = Reply(200, multipage_pdf(["Intro.", "Results: Enceladus 27 GW."]),
                                                   "application/pdf")
        server.routes["/api"] = arxiv_double([replace(PAPERS[0], pdf_url=server.url("/pdf/2106.01234v2"))])
        settings = load_settings(ARXIV_API_URL=server.url("/api"), FETCH_ALLOWED_HOSTS=server.host_port)
        listing = make_arxiv_tools(settings)[0].invoke({"query": "tidal heating"})
        pdf_url = listing.split("PDF: ")[1].split("\n")[0]
        find = {t.name: t for t in make_web_tools(settings)}["find_in_page"]
        out = find.invoke({"source": pdf_url, "query": "Enceladus"}, config=run)
    assert "27 GW" in out and "page 1 of 1" in out


def test_empty_api_urls_remove_the_tools_with_a_reason():
    for factory, setting, name in ((make_wayback_tools, "WAYBACK_API_URL", "wayback"),
                                   (make_arxiv_tools, "ARXIV_API_URL", "arxiv_search")):
        with pytest.raises(MissingDependency) as caught:
            factory(load_settings(**{setting: ""}))
        assert caught.value.tools == [name] and setting in caught.value.reason


def test_long_snapshot_is_paged_with_the_wayback_call(run):
    with LocalWebServer({}) as server:
        server.routes["/web/20200101000000id_/http://b.example/"] = Reply(200, long_article("B", 30, {29: "Last: 8."}))
        server.routes["/av"] = wayback_double({"http://b.example/": [
            ("20200101000000", server.url("/web/20200101000000/http://b.example/"))]})
        settings = load_settings(WAYBACK_API_URL=server.url("/av"), FETCH_ALLOWED_HOSTS=server.host_port,
                                 MAX_FILE_SIZE=4000)
        tool = make_wayback_tools(settings)[0]
        first = tool.invoke({"url": "http://b.example/", "date": "2020-01-01"}, config=run)
        total = int(first.split("[page 1 of ")[1].split("]")[0])
        last = tool.invoke({"url": "http://b.example/", "date": "2020-01-01", "page": total}, config=run)
    assert "Next: fetch_webpage(url=" in first and "Last: 8." in last and "taken 2020-01-01" in last
