"""The browser reaches nothing the address rules refuse: each request kind aimed at a canary port counts 0 hits.

The site is in FETCH_ALLOWED_HOSTS; the canary (another loopback port) is not, so the filtering proxy
must refuse every connection Chromium is asked to make to it, whatever the kind of request. A control
test allows the canary too and sees hits, so a canary that could not count would fail it.
"""

from __future__ import annotations

import time

import pytest

from tests.support.chromium import browser_tool_marks
from tests.support.js_sites import BrowserHarness, Canary
from tests.support.web_server import LocalWebServer, Reply

pytestmark = browser_tool_marks()


def _page(body: str, script: str = "") -> Reply:
    return Reply(200, f"<!doctype html><html><head><title>t</title></head><body><h1>Page</h1>{body}"
                      f"<script>{script}</script></body></html>")


def attack_pages(port: int) -> dict[str, Reply]:
    """One page per request kind, each aimed at 127.0.0.1:`port` (and its other spellings)."""
    canary = f"http://127.0.0.1:{port}"
    return {
        "/http-redirect": Reply(302, "", headers={"Location": f"{canary}/after-redirect"}),
        "/js-redirect": _page("", f"location.href = '{canary}/js';"),
        "/img": _page(f"<img src='{canary}/a.png'><img src='http://localhost:{port}/b.png'>"
                      f"<img src='http://2130706433:{port}/c.png'><img src='http://0x7f.1:{port}/d.png'>"
                      f"<img src='https://127.0.0.1:{port}/e.png'>"),
        "/iframe": _page(f"<iframe src='{canary}/frame'></iframe>"),
        "/fetch": _page("", f"fetch('{canary}/api').catch(() => {{}});"
                            f"const x = new XMLHttpRequest(); x.open('GET', '{canary}/xhr'); x.send();"),
        "/websocket": _page("", f"try {{ new WebSocket('ws://127.0.0.1:{port}/ws'); }} catch (e) {{}}"
                                f"try {{ new WebSocket('wss://127.0.0.1:{port}/ws'); }} catch (e) {{}}"),
        "/service-worker": _page("", "navigator.serviceWorker && navigator.serviceWorker.register('/sw.js')"
                                     ".catch(() => {});"),
        "/sw.js": Reply(200, f"self.addEventListener('install', () => fetch('{canary}/sw'));",
                        "application/javascript"),
        "/preconnect": _page(f"<link rel='preconnect' href='{canary}'><link rel='dns-prefetch' href='{canary}'>"
                             f"<link rel='prefetch' href='{canary}/prefetch'><a href='{canary}/link'>a link</a>"),
        "/mirror": _page("<a href='https://huggingface.co/datasets/gaia-benchmark/GAIA/raw/main/x.json'>answers</a>"
                         "<img src='https://www.huggingface.co/datasets/gaia-benchmark/GAIA/logo.png'>"),
        "/click-out": _page(f"<a href='{canary}/clicked'>Go out</a>"),
        "/own-image": _page("<img src='/own.png'>"),
        "/own.png": Reply(200, b"\x89PNG\r\n\x1a\n", "image/png"),
    }


@pytest.fixture(scope="module")
def canary():
    with Canary() as trap:
        yield trap


@pytest.fixture(scope="module")
def site(canary):
    with LocalWebServer(attack_pages(canary.port)) as server:
        yield server


@pytest.mark.parametrize("path", ["/http-redirect", "/js-redirect", "/img", "/iframe", "/fetch", "/websocket",
                                  "/service-worker", "/preconnect"])
def test_request_kind_reaches_nothing(browser, site, canary, path):
    work = browser.workspace()
    try:
        before = canary.hits
        outcome = browser.call(work, "browser_open", url=site.url(path))
        assert outcome.ok, outcome.output
        time.sleep(0.5)  # anything late (a retry, a deferred request) would arrive now
        assert canary.hits == before
        assert site.hits(path) >= 1  # the page itself did load
    finally:
        work.close()


def test_http_redirect_to_a_refused_address_is_an_observation_saying_why(browser, site, canary):
    work = browser.workspace()
    try:
        outcome = browser.call(work, "browser_open", url=site.url("/http-redirect"))
        assert "local or private address" in outcome.output
        assert canary.hits == 0
    finally:
        work.close()


def test_a_clicked_link_to_a_refused_address_loads_nothing_and_says_so(browser, site, canary):
    from tests.support.js_sites import ref_of

    work = browser.workspace()
    try:
        page = browser.call(work, "browser_open", url=site.url("/click-out")).output
        after = browser.call(work, "browser_click", ref=ref_of(page, 'link "Go out"'))
        assert "local or private address" in after.output  # the proxy's refusal, as the page or a note
        assert canary.hits == 0
    finally:
        work.close()


@pytest.mark.parametrize("url", ["file:///etc/passwd", "view-source:http://example.org/", "chrome://settings",
                                 "data:text/html,<h1>x</h1>", "javascript:alert(1)"])
def test_non_http_schemes_are_refused(browser, url):
    work = browser.workspace()
    try:
        outcome = browser.call(work, "browser_open", url=url)
        assert not outcome.ok and outcome.error_kind == "bad_arguments"
        assert "http" in outcome.output
    finally:
        work.close()


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "10.0.0.8", "169.254.169.254", "[::1]", "0x7f.1",
                                  "2130706433", "192.168.1.1"])
def test_private_addresses_are_refused_before_any_connection(browser, canary, host):
    work = browser.workspace()
    try:
        port = canary.port if host in ("127.0.0.1", "localhost", "0x7f.1", "2130706433") else 80
        outcome = browser.call(work, "browser_open", url=f"http://{host}:{port}/")
        assert outcome.error_kind == "blocked", outcome.output
        assert "local or private address" in outcome.output
        assert canary.hits == 0
    finally:
        work.close()


def test_blocked_domains_are_refused(browser):
    work = browser.workspace()
    try:
        outcome = browser.call(work, "browser_open", url="https://huggingface.co/datasets/gaia-benchmark/GAIA")
        assert outcome.error_kind == "blocked" and "blocked domain" in outcome.output
    finally:
        work.close()


def test_the_browser_environment_carries_no_secret(browser, monkeypatch):
    from tools.browser.engine import clean_env

    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-value")
    env = clean_env(browser.settings.WORKSPACE_DIR or __import__("pathlib").Path("/tmp"))
    assert set(env) <= {"PATH", "HOME", "TMPDIR", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "LANG"}
    assert "sk-secret-value" not in repr(env)


def test_control_an_allowed_canary_is_reached(canary, site):
    """The same pages with the canary allowed do reach it: the canary counts, so 0 above means refused."""
    harness = BrowserHarness(f"{site.host_port},127.0.0.1:{canary.port}")
    work = harness.workspace()
    try:
        before = canary.hits
        harness.call(work, "browser_open", url=site.url("/img"))
        assert canary.hits > before
    finally:
        work.close()
        harness.close()


def test_a_link_to_a_blocked_domain_is_refused_in_the_browser(browser, site):
    from tests.support.js_sites import ref_of

    work = browser.workspace()
    try:
        page = browser.call(work, "browser_open", url=site.url("/mirror")).output
        after = browser.call(work, "browser_click", ref=ref_of(page, 'link "answers"')).output
        assert "is on a blocked domain" in after and after.startswith(f"URL: {site.url('/mirror')}")
    finally:
        work.close()
