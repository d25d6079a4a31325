"""Each browser action's trace thumbnail: rendered small by Chromium through the tab's CDP session.

The thumbnail is a JPEG data URL at most 320 pixels wide showing what the viewport shows (a red page
gives a red thumbnail, a page scrolled to its blue bottom a blue one, a resized viewport its own
proportions). One CDP session serves every action of a tab. Without CDP, or when a CDP command fails,
Playwright's full-size screenshot is taken and shrunk instead. A renderer kept busy by a script gets no
thumbnail within the capture's own limit (3 s), and the run's next action is ended by the engine's timeout
(its tab closed) without touching another run. `thumbnail_url` keeps a small JPEG as it is, shrinks
anything bigger, and refuses what is no image.
"""

from __future__ import annotations

import base64
import io
import threading
import time

import pytest
from PIL import Image

from tests.support.chromium import SPINNING_RENDERERS, browser_tool_marks
from tests.support.web_server import LocalWebServer, Reply
from tools.browser.run import thumbnail_url
from tools.browser.session import THUMBNAIL_WIDTH

pytestmark = [*browser_tool_marks(), SPINNING_RENDERERS]


def _page(style: str, body: str = "") -> Reply:
    return Reply(200, f"<!doctype html><html><head><title>t</title><style>html, body {{ margin: 0 }} {style}"
                      f"</style></head><body>{body}</body></html>")


PAGES = {
    "/red": _page("body { background: #e00000 }", "<h1>Red page</h1><button>Press</button>"),
    "/tall": _page("div { height: 3000px }", "<div style='background: #e00000'>Top</div>"
                                             "<div style='background: #0000e0'>Bottom</div>"),
    "/ok": _page("", "<h1>All fine here</h1>"),
}


@pytest.fixture(scope="module")
def site():
    with LocalWebServer(PAGES) as server:
        yield server


@pytest.fixture
def work(browser):
    work = browser.workspace("thumbnail")
    yield work
    work.close()


def _image(data_url: str | None) -> Image.Image:
    assert data_url and data_url.startswith("data:image/jpeg;base64,")
    image = Image.open(io.BytesIO(base64.b64decode(data_url.split(",", 1)[1])))
    assert image.format == "JPEG"
    return image


def _share(image: Image.Image, colour: tuple[int, int, int]) -> float:
    """The share of the image's pixels within 60 of `colour` on every channel."""
    pixels = list(image.convert("RGB").getdata())
    near = [p for p in pixels if all(abs(a - b) <= 60 for a, b in zip(p, colour, strict=True))]
    return len(near) / len(pixels)


def _run(browser, work):
    return browser.services(work).browser_run


def test_a_thumbnail_is_a_small_jpeg_of_what_the_page_shows(browser, work, site):
    outcome = browser.call(work, "browser_open", url=site.url("/red"))
    assert outcome.ok and "Red page" in outcome.output
    image = _image(outcome.thumbnail)
    assert image.size == (THUMBNAIL_WIDTH, 200)  # the 1280×800 viewport, a fourth of its size
    assert _share(image, (224, 0, 0)) > 0.8
    raw = Image.open(io.BytesIO(_run(browser, work).last.thumbnail))
    assert raw.format == "JPEG" and raw.width == THUMBNAIL_WIDTH  # rendered small, not shrunk in Python


def test_the_thumbnail_shows_where_the_page_is_scrolled_and_the_viewport_as_it_is(browser, work, site):
    top = browser.call(work, "browser_open", url=site.url("/tall"))
    assert _share(_image(top.thumbnail), (224, 0, 0)) > 0.8
    bottom = browser.call(work, "browser_scroll", direction="bottom")
    assert bottom.ok and _share(_image(bottom.thumbnail), (0, 0, 224)) > 0.8
    assert _image(bottom.thumbnail).width == THUMBNAIL_WIDTH  # the viewport less its scrollbar: 1265 pixels wide
    browser.call(work, "browser_open", url=site.url("/red"))  # no scrollbar
    _run(browser, work).run(lambda s: s.page.set_viewport_size({"width": 640, "height": 640}))
    square = _image(browser.call(work, "browser_snapshot").thumbnail)
    assert square.size == (THUMBNAIL_WIDTH, THUMBNAIL_WIDTH)  # the page's own viewport, not the usual 1280×800
    assert _share(square, (224, 0, 0)) > 0.8


def test_one_cdp_session_serves_every_action_of_the_tab(browser, work, site):
    made = []

    def counting(session):
        real = session.context.new_cdp_session

        def new_cdp_session(page):
            made.append(page)
            return real(page)

        session.context.new_cdp_session = new_cdp_session

    page = browser.call(work, "browser_open", url=site.url("/red")).output
    _run(browser, work).run(counting)
    from tests.support.js_sites import ref_of

    for _ in range(2):
        assert _image(browser.call(work, "browser_click", ref=ref_of(page, 'button "Press"')).thumbnail)
    assert _image(browser.call(work, "browser_scroll", direction="down").thumbnail)
    assert made == []  # the session made by browser_open is the one reused
    assert Image.open(io.BytesIO(_run(browser, work).last.thumbnail)).width == THUMBNAIL_WIDTH  # and it is used


class _Refusing:
    """A CDP session whose every command fails, as one of a browser without that command would."""

    def __init__(self) -> None:
        self.sent: list[str] = []

    def send(self, method, params=None, *, timeout=None):
        from playwright.sync_api import Error

        self.sent.append(method)
        raise Error(f"Protocol error ({method}): method not found")


@pytest.mark.parametrize("cdp", ["absent", "refusing"])
def test_without_cdp_the_thumbnail_is_playwright_s_screenshot_shrunk(browser, site, cdp):
    from tools.browser.session import BrowserSession
    from tools.browser.tools import engine_for

    refusing = _Refusing()

    def new_cdp_session(_page):
        if cdp == "absent":
            raise NotImplementedError("CDP sessions are only supported on Chromium")
        return refusing

    def two_captures(handle):
        session = BrowserSession(handle, action_timeout_s=5, settle_s=1, max_pages=10, refusal_for=lambda _url: None)
        try:
            session.context.new_cdp_session = new_cdp_session  # before its first capture makes one
            return session.open(site.url("/red")), session.capture()
        finally:
            session.close()

    first, again = engine_for(browser.settings, browser.browsers).call(two_captures, 30)
    for capture in (first, again):
        raw = Image.open(io.BytesIO(capture.thumbnail))
        assert raw.format == "JPEG" and raw.width == 1280  # Playwright's full-size screenshot
    image = _image(thumbnail_url(first.thumbnail))
    assert image.size == (THUMBNAIL_WIDTH, 200) and _share(image, (224, 0, 0)) > 0.8
    assert refusing.sent == (["Page.getLayoutMetrics"] if cdp == "refusing" else [])  # tried once, not again


def test_a_busy_renderer_bounds_the_capture_and_costs_only_its_own_run(site):
    from tests.support.js_sites import BrowserHarness

    with BrowserHarness(site.host_port, TOOL_TIMEOUT=8) as browser:  # an action's whole call ends after 7 s
        _busy_beside_another(browser, site)


def _busy_beside_another(browser, site):
    busy, other = browser.workspace("busy"), browser.workspace("other")
    try:
        assert "All fine here" in browser.call(other, "browser_open", url=site.url("/ok")).output
        assert browser.call(busy, "browser_open", url=site.url("/red")).ok  # its CDP session is made

        def thumbnail_while_spinning(session):
            session.page.evaluate("() => { setTimeout(() => { while (true) {} }, 50); }")
            time.sleep(0.3)
            return session.thumbnail()

        # CDP's own limit ends the capture: it returns, before the engine's limit would end the whole action
        assert _run(browser, busy).run(thumbnail_while_spinning) is None
        replies: list[str] = []

        def beside() -> None:
            for _ in range(3):
                replies.append(browser.call(other, "browser_open", url=site.url("/ok")).output)

        thread = threading.Thread(target=beside)
        thread.start()
        told = browser.call(busy, "browser_snapshot")  # the page still spins: the engine's limit ends it
        thread.join(timeout=60)
        assert not told.ok and "tab was closed" in told.output
        assert len(replies) == 3 and all("All fine here" in r for r in replies)
        after = browser.call(busy, "browser_open", url=site.url("/red"))
        assert after.ok and _share(_image(after.thumbnail), (224, 0, 0)) > 0.8
    finally:
        busy.close()
        other.close()


def _encoded(size: tuple[int, int], form: str) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", size, (0, 160, 0)).save(out, format=form)
    return out.getvalue()


def test_thumbnail_url_keeps_a_small_jpeg_shrinks_the_rest_and_refuses_what_is_no_image():
    small = _encoded((320, 200), "JPEG")
    assert thumbnail_url(small) == "data:image/jpeg;base64," + base64.b64encode(small).decode("ascii")
    for form in ("JPEG", "PNG"):
        shrunk = _image(thumbnail_url(_encoded((1280, 800), form)))
        assert shrunk.size == (320, 200) and _share(shrunk, (0, 160, 0)) > 0.95
    assert _image(thumbnail_url(_encoded((1280, 800), "PNG"), 640)).size == (640, 400)  # browser_screenshot's
    assert _image(thumbnail_url(_encoded((200, 900), "JPEG"))).size == (142, 640)  # too tall: shrunk to fit
    for junk in (None, b"", b"not an image", b"\xff\xd8\xff\xe0" + b"\0" * 40, b"<svg></svg>", small[:20]):
        assert thumbnail_url(junk) is None
