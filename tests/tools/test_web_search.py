"""web_search against local SearXNG-, MediaWiki- and Tavily-style servers on 127.0.0.1 (no network)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable

import pytest

from config import load_settings
from tests.support.web_server import LocalWebServer, Reply, Request
from tools.core.errors import ToolFailure
from tools.core.executor import run_tool
from tools.search import blocked_by, blocked_prefixes, configured_providers, normalise_url
from tools.search.tavily import TavilyProvider
from tools.search.wikipedia import WikipediaProvider
from tools.web import make_web_tools

SEARX_RESULTS = {"results": [
    {"url": "https://example.org/mercedes", "title": "Mercedes Sosa - Example",
     "content": "Argentine singer, 40 albums."},
    {"url": "https://example.org/discography", "title": "Discography", "content": "Studio albums 1959-2009."},
]}
WIKI_RESULTS = {"batchcomplete": True, "query": {"search": [
    {"ns": 0, "title": "Mercedes Sosa", "pageid": 1,
     "snippet": "<span class=\"searchmatch\">Mercedes</span> Sosa was an Argentine singer &amp; activist"},
]}}


def _settings(**overrides):
    return load_settings(**overrides)


def _web_search(settings):
    return next(t for t in make_web_tools(settings) if t.name == "web_search")


def test_searxng_results_have_title_url_snippet_and_provider_line():
    with LocalWebServer({"/search": Reply.json(SEARX_RESULTS)}) as server:
        settings = _settings(SEARCH_PROVIDERS="searxng", SEARXNG_URL=server.base)
        out = _web_search(settings).invoke({"query": "mercedes sosa albums"})
        request = server.requests[0]
    assert request.query["q"] == ["mercedes sosa albums"] and request.query["format"] == ["json"]
    assert "1. Mercedes Sosa - Example" in out
    assert "URL: https://example.org/mercedes" in out
    assert "Argentine singer, 40 albums." in out
    assert "2. Discography" in out
    assert out.strip().splitlines()[-1].startswith("(answered by searxng")


def test_failover_from_500_provider_to_wikipedia():
    routes = {"/search": Reply(500, "boom", "text/plain"), "/w/api.php": Reply.json(WIKI_RESULTS)}
    with LocalWebServer(routes) as server:
        settings = _settings(SEARCH_PROVIDERS="searxng,wikipedia", SEARXNG_URL=server.base,
                             WIKIPEDIA_API_URL=server.url("/w/api.php"))
        out = _web_search(settings).invoke({"query": "Mercedes Sosa"})
        assert server.hits("/search") == 1 and server.hits("/w/api.php") == 1
        wiki_query = next(r for r in server.requests if r.path == "/w/api.php").query
    assert wiki_query["list"] == ["search"] and wiki_query["srsearch"] == ["Mercedes Sosa"]
    assert "1. Mercedes Sosa" in out
    assert f"URL: {server.base}/wiki/Mercedes_Sosa" in out
    assert "Mercedes Sosa was an Argentine singer & activist" in out  # HTML stripped, entity decoded
    assert "answered by wikipedia" in out and "searxng failed (HTTP 500" in out


def test_failover_on_429_and_on_empty_results():
    routes = {"/search": Reply(429, "slow down", "text/plain"), "/w/api.php": Reply.json({"query": {"search": []}}),
              "/other/search": Reply.json(SEARX_RESULTS)}
    with LocalWebServer(routes) as server:
        settings = _settings(SEARCH_PROVIDERS="searxng,wikipedia", SEARXNG_URL=server.base,
                             WIKIPEDIA_API_URL=server.url("/w/api.php"))
        with pytest.raises(ToolFailure) as failure:
            _web_search(settings).invoke({"query": "anything"})
    message = str(failure.value)
    assert "searxng: rate_limited (rate limited (HTTP 429))" in message
    assert "wikipedia: empty (no results)" in message
    assert "Try a shorter or differently worded query" in message
    assert failure.value.kind == "no_results"


def test_empty_provider_fails_over_to_next():
    routes = {"/empty/search": Reply.json({"results": []}), "/w/api.php": Reply.json(WIKI_RESULTS)}
    with LocalWebServer(routes) as server:
        settings = _settings(SEARCH_PROVIDERS="searxng,wikipedia", SEARXNG_URL=server.url("/empty"),
                             WIKIPEDIA_API_URL=server.url("/w/api.php"))
        out = _web_search(settings).invoke({"query": "q"})
    assert "answered by wikipedia" in out and "searxng empty (no results)" in out


def test_unconfigured_providers_are_skipped_without_a_call():
    with LocalWebServer({"/w/api.php": Reply.json(WIKI_RESULTS)}) as server:
        settings = _settings(SEARCH_PROVIDERS="tavily,searxng,bogus,wikipedia",
                             WIKIPEDIA_API_URL=server.url("/w/api.php"))
        providers, skipped = configured_providers(settings)
        out = _web_search(settings).invoke({"query": "Mercedes Sosa"})
        assert [r.path for r in server.requests] == ["/w/api.php"]
    assert [p.name for p in providers] == ["wikipedia"]
    assert {a.provider: a.detail for a in skipped}["tavily"] == "no TAVILY_API_KEY set"
    assert "tavily skipped (no TAVILY_API_KEY set)" in out
    assert "searxng skipped (no SEARXNG_URL set)" in out
    assert "bogus skipped (unknown provider" in out


def test_keyed_and_keyless_providers_are_built_when_configured(monkeypatch):
    monkeypatch.setenv("TAVILY_API_KEY", "tvly-test-key")
    settings = _settings(SEARCH_PROVIDERS="duckduckgo,tavily")
    providers, skipped = configured_providers(settings)  # building makes no request
    assert [p.name for p in providers] == ["duckduckgo", "tavily"] and skipped == []


def test_tavily_provider_sends_bearer_key_and_parses_results():
    def tavily(request: Request) -> Reply:
        body = json.loads(request.body)
        assert body["query"] == "capital of peru"
        return Reply.json({"results": [{"title": "Lima", "url": "https://example.org/lima",
                                        "content": "Lima is the capital."}]})

    with LocalWebServer({"/search": tavily}) as server:
        hits = TavilyProvider("tvly-secret", api_base=server.base).search("capital of peru", 3, timeout=5)
        auth = server.requests[0].headers.get("Authorization")
    assert auth == "Bearer tvly-secret"
    assert [(h.title, h.url, h.snippet) for h in hits] == [("Lima", "https://example.org/lima", "Lima is the capital.")]


def test_blocked_domains_are_filtered_and_all_blocked_counts_as_empty():
    leaked = {"results": [
        {"url": "https://huggingface.co/datasets/gaia-benchmark/GAIA/blob/main/2023/validation/metadata.jsonl",
         "title": "GAIA answers", "content": "Final answer: 42"},
        {"url": "https://www.example.org/ok", "title": "Fine", "content": "a real source"},
    ]}
    only_leaks = {"results": leaked["results"][:1]}
    routes = {"/mixed/search": Reply.json(leaked), "/leaky/search": Reply.json(only_leaks),
              "/w/api.php": Reply.json(WIKI_RESULTS)}
    with LocalWebServer(routes) as server:
        mixed = _web_search(_settings(SEARCH_PROVIDERS="searxng",
                                      SEARXNG_URL=server.url("/mixed"))).invoke({"query": "gaia"})
        leaky = _web_search(_settings(SEARCH_PROVIDERS="searxng,wikipedia", SEARXNG_URL=server.url("/leaky"),
                                      WIKIPEDIA_API_URL=server.url("/w/api.php"))).invoke({"query": "gaia"})
    assert "huggingface.co" not in mixed and "Final answer" not in mixed
    assert "https://www.example.org/ok" in mixed and "1 result(s) from blocked domains removed" in mixed
    assert "huggingface.co" not in leaky and "answered by wikipedia" in leaky
    assert "searxng empty (only results from blocked domains (1))" in leaky


def test_slow_provider_times_out_and_fails_over():
    def slow(request: Request) -> Reply:
        time.sleep(3)
        return Reply.json(SEARX_RESULTS)

    with LocalWebServer({"/search": slow, "/w/api.php": Reply.json(WIKI_RESULTS)}) as server:
        settings = _settings(SEARCH_PROVIDERS="searxng,wikipedia", SEARXNG_URL=server.base,
                             WIKIPEDIA_API_URL=server.url("/w/api.php"), TOOL_TIMEOUT=6)
        outcome = run_tool(_web_search(settings), {"query": "q"}, settings)
    assert outcome.ok  # the per-provider limit (2 s of TOOL_TIMEOUT=6) let wikipedia answer in time
    assert "searxng failed (timed out after 2s)" in outcome.output and "answered by wikipedia" in outcome.output


def test_through_executor_failure_and_truncation():
    routes = {"/search": Reply(503, "down", "text/plain"), "/w/api.php": Reply(200, "<html>not json</html>")}
    with LocalWebServer(routes) as server:
        settings = _settings(SEARCH_PROVIDERS="searxng,wikipedia", SEARXNG_URL=server.base,
                             WIKIPEDIA_API_URL=server.url("/w/api.php"))
        failed = run_tool(_web_search(settings), {"query": "q"}, settings)
    assert not failed.ok and failed.error_kind == "no_results"
    assert failed.output.startswith("Error: web_search found no results for 'q'.")
    assert ("searxng: failed (HTTP 503" in failed.output
            and "wikipedia: failed (answered with non-JSON content" in failed.output)

    many = {"results": [{"url": f"https://example.org/{i}", "title": f"Result {i}", "content": "x" * 200}
                        for i in range(20)]}
    with LocalWebServer({"/search": Reply.json(many)}) as server:
        settings = _settings(SEARCH_PROVIDERS="searxng", SEARXNG_URL=server.base, MAX_FILE_SIZE=300,
                             SEARCH_MAX_RESULTS=5)
        outcome = run_tool(_web_search(settings), {"query": "q"}, settings)
    assert outcome.ok and outcome.truncated_chars > 0 and "Next: read_file(path=" in outcome.output
    assert "5. Result 4" not in outcome.output  # paged by the executor, whose marker says how to read on


def test_empty_query_is_refused():
    settings = _settings(SEARCH_PROVIDERS="wikipedia")
    outcome = run_tool(_web_search(settings), {"query": "  "}, settings)
    assert not outcome.ok and "query is empty" in outcome.output


def test_wikipedia_article_urls_follow_the_api_site():
    provider = WikipediaProvider("https://fr.wikipedia.org/w/api.php")
    assert provider.article_url("Mercedes Sosa") == "https://fr.wikipedia.org/wiki/Mercedes_Sosa"


@pytest.mark.parametrize("url, blocked", [
    ("https://huggingface.co/datasets/gaia-benchmark/GAIA", True),
    ("http://www.huggingface.co/datasets/gaia-benchmark/GAIA/tree/main", True),
    ("HTTPS://HuggingFace.co/Datasets/GAIA-benchmark/x", True),
    ("hf.co/datasets/gaia-benchmark/GAIA", True),
    ("https://huggingface.co/datasets/other/GAIA", False),
    ("https://huggingface.co/papers/2311.12983", False),
    ("https://example.org/huggingface.co/datasets/gaia-benchmark", False),
])
def test_blocked_by_compares_scheme_less_host_and_path(url, blocked):
    prefixes = blocked_prefixes(load_settings().BLOCKED_DOMAINS)
    assert (blocked_by(url, prefixes) is not None) is blocked


def test_normalise_url():
    assert normalise_url("https://www.Example.org:8443/A/b?q=1") == "example.org/a/b"


def test_every_provider_module_is_listed_and_every_listed_one_is_a_setting_choice() -> None:
    import pkgutil

    import tools.search
    from tools.search import PROVIDERS

    modules = {m.name for m in pkgutil.iter_modules(tools.search.__path__)} - {"base", "failover", "fanout"}
    assert set(PROVIDERS) == modules  # a provider module nobody listed would never be asked
    assert set(load_settings().SEARCH_PROVIDERS.split(",")) == set(PROVIDERS)


def test_the_keyed_http_base_sends_the_key_only_when_there_is_one_and_names_a_bad_answer() -> None:
    from tools.search import KeyedHTTPProvider, ProviderError

    with LocalWebServer({"/api": Reply.json({"items": [{"a": 1}, "not an object"]}),
                         "/bad": Reply.json({"other": []})}) as server:
        keyed = KeyedHTTPProvider(server.base + "/", api_key="k-secret", user_agent="probe/1.0")
        assert keyed.result_list(keyed.call_json("GET", "/api", 5), "items") == [{"a": 1}]
        keyless = KeyedHTTPProvider(server.base)
        with pytest.raises(ProviderError, match="no 'items' list"):
            keyless.result_list(keyless.call_json("GET", "/bad", 5), "items")
        headers = [r.headers for r in server.requests]
    assert headers[0].get("Authorization") == "Bearer k-secret" and headers[0].get("User-Agent") == "probe/1.0"
    assert "Authorization" not in headers[1]


def test_every_http_provider_sends_the_configured_user_agent(monkeypatch: pytest.MonkeyPatch) -> None:
    from tools.search import KeyedHTTPProvider, configured_providers

    monkeypatch.setenv("TAVILY_API_KEY", "tvly-test-key")
    settings = _settings(SEARCH_PROVIDERS="tavily,searxng,wikipedia", SEARXNG_URL="http://127.0.0.1:9",
                         HTTP_USER_AGENT="gaia-test/9 (+mailto:ops@example.org)")
    providers, skipped = configured_providers(settings)  # building makes no request
    assert skipped == [] and [p.name for p in providers] == ["tavily", "searxng", "wikipedia"]
    assert all(isinstance(p, KeyedHTTPProvider) and p.user_agent == settings.HTTP_USER_AGENT for p in providers)


def test_fanout_asks_every_provider_at_once_and_fuses_by_url():
    windows: dict[str, tuple[float, float]] = {}

    def slow(name: str, body: dict) -> Callable[[Request], Reply]:
        def answer(request: Request) -> Reply:
            began = time.monotonic()
            time.sleep(1.0)
            windows[name] = (began, time.monotonic())
            return Reply.json(body)
        return answer

    with LocalWebServer({}) as server:
        shared = {"url": f"{server.base}/wiki/Mercedes_Sosa", "title": "Mercedes Sosa (SearXNG copy)",
                  "content": "Argentine singer."}
        server.routes.update({"/search": slow("searxng", {"results": [SEARX_RESULTS["results"][0], shared]}),
                              "/w/api.php": slow("wikipedia", WIKI_RESULTS)})
        settings = _settings(SEARCH_PROVIDERS="searxng,wikipedia", SEARXNG_URL=server.base,
                             WIKIPEDIA_API_URL=server.url("/w/api.php"), SEARCH_FANOUT="all")
        out = _web_search(settings).invoke({"query": "Mercedes Sosa"})
    (a_start, a_end), (b_start, b_end) = windows["searxng"], windows["wikipedia"]
    assert a_start < b_end and b_start < a_end  # both requests were open at the same time
    assert out.count(f"URL: {server.base}/wiki/Mercedes_Sosa") == 1  # one URL from two providers, merged
    assert out.index("Mercedes_Sosa") < out.index("example.org/mercedes")  # two providers' votes rank it first
    assert "answered by searxng, wikipedia" in out


def test_fanout_first_keeps_the_failover():
    with LocalWebServer({"/search": Reply.json(SEARX_RESULTS), "/w/api.php": Reply.json(WIKI_RESULTS)}) as server:
        settings = _settings(SEARCH_PROVIDERS="searxng,wikipedia", SEARXNG_URL=server.base,
                             WIKIPEDIA_API_URL=server.url("/w/api.php"), SEARCH_FANOUT="first")
        out = _web_search(settings).invoke({"query": "Mercedes Sosa"})
        assert server.hits("/w/api.php") == 0
    assert "answered by searxng)" in out
