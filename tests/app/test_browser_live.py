"""The UI tells the truth while it runs (issue 22, items 9–13), in headless Chromium.

- the header follows the model endpoint coming up, without a reload (item 9);
- Chat's Stop ends the turn at once with a note, and the model call in flight is abandoned (item 10);
- a long wait says what it waits for and for how long (item 11);
- Compare warns when two runs cover different tasks and compares the common ones (item 12);
- the polish of item 13: the Batch form adapts to its source, refuses a fraction instead of rounding it,
  shows errors under its Run button, keeps its downloads; the header is one line on a phone.
Times are printed for the closing note, not asserted (the machine may be loaded).
"""

from __future__ import annotations

import time

import pytest
from gradio_client import Client

from tests.app.conftest import scripted_reply
from tests.app.test_browser import _shot
from tests.support.app_page import start_batch
from tests.support.app_server import AppServer, free_port
from tests.support.chromium import BROWSER_MARKS
from tests.support.openai_server import ScriptedOpenAI

pytestmark = BROWSER_MARKS


@pytest.fixture()
def page(browser, app_server):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    tab = context.new_page()
    tab.set_default_timeout(30_000)
    tab.goto(app_server.url)
    tab.wait_for_function("document.querySelector('#status-line')?.innerText?.includes('Ready')", timeout=90_000)
    yield tab
    context.close()


def _text(page, selector: str) -> str:
    return page.inner_text(selector)


def test_the_header_follows_the_endpoint_coming_up(browser, tmp_path):
    port = free_port()
    env = {"OPENAI_BASE_URL": f"http://127.0.0.1:{port}/v1", "OPENAI_API_KEY": "sk-test", "MODEL_NAME": "scripted",
           "RAG_ENABLED": "false", "RAG_INDEX_DIR": str(tmp_path / "rag"), "OUTPUT_DIR": str(tmp_path / "runs"),
           "APP_STATUS_RECHECK_S": "1"}
    with AppServer(env, timeout=120) as app:
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(app.url)
        page.wait_for_function("document.querySelector('#status-line')?.innerText?.includes('unreachable')",
                               timeout=60_000)
        with ScriptedOpenAI(scripted_reply).start(port=port):
            came_up = time.monotonic()
            page.wait_for_function("!document.querySelector('#status-line')?.innerText?.includes('unreachable')",
                                   timeout=30_000)
            print(f"header turned from unreachable to ready {time.monotonic() - came_up:.1f}s after the server came up")
            assert "Ready" in _text(page, "#status-line")
            page.click("#status-line > button")  # the one line expands into one entry per part
            page.wait_for_function("document.querySelector('#status-details')?.innerText?.includes('ready (scripted)')")
        page.close()


def test_chat_stop_ends_the_turn_at_once_with_a_note(page, model_server):
    page.get_by_role("tab", name="💬 Chat").click()
    box = page.locator("#chat-input textarea")
    box.fill("Please take your time in the chat.")
    before = len(model_server.requests)
    box.press("Enter")
    # The wait is explained while the model thinks (8 s): what is awaited, and for how long so far.
    page.wait_for_function("document.querySelector('#chatbot').innerText.includes('Waiting for the model')")
    page.wait_for_function("/Waiting \\d+s so far/.test(document.querySelector('#chatbot').innerText)")
    stop = page.locator("#chat-input .stop-button")
    clicked = time.monotonic()
    stop.click()
    stop.wait_for(state="hidden", timeout=10_000)
    page.wait_for_function("document.querySelector('#chatbot').innerText.includes('Stopped by you')")
    print(f"chat Stop: {time.monotonic() - clicked:.2f}s from the click to the stop note (the model call takes 8 s)")
    _shot(page, "chat-stopped.png")
    page.wait_for_timeout(9_000)  # past the moment the abandoned call answers
    assert "late" not in _text(page, "#chatbot")  # its answer never reached the chat
    # The turn made one model request, the abandoned one (recorded when it completes): no step ran after it.
    assert len(model_server.requests) - before <= 1
    assert "Waiting for the model" not in _text(page, "#chatbot")  # the waiting bubble went with the turn


def test_compare_warns_when_the_runs_cover_different_tasks(page, app_server, gaia_dir):
    client = Client(app_server.url, verbose=False)
    for count in (2, 4):
        status, *_ = client.predict("Local GAIA folder", "validation", str(gaia_dir), "All", count, "", 1, 0, False,
                                    "", api_name="/evaluate")
        assert "🏁" in status
    page.get_by_role("tab", name="📊 Batch evaluation").click()
    page.get_by_text("Compare two runs").click()
    page.get_by_role("button", name="Refresh run list").click()
    for box in ("#run-a", "#run-b"):
        page.click(f"{box} input")
        options = page.locator("[role=option]")
        options.nth(0 if box == "#run-b" else 1).click()
    page.click("#compare-btn")
    page.wait_for_function("document.querySelector('#comparison').innerText.includes('different tasks')")
    text = _text(page, "#comparison")
    assert "over the 2 task(s) scored in both" in text and "only in B: 2" in text
    _shot(page, "compare.png")


def test_the_batch_form_adapts_refuses_fractions_and_shows_errors_by_its_button(page, gaia_dir):
    page.get_by_role("tab", name="📊 Batch evaluation").click()
    assert page.locator("#data-dir").is_visible()
    page.get_by_label("Unit 4 scoring API").check()
    page.locator("#data-dir").wait_for(state="hidden")
    assert not page.locator("#max-samples").is_visible() and not page.locator("#task-ids").is_visible()
    page.get_by_label("Local GAIA folder").check()
    page.locator("#data-dir").wait_for(state="visible")
    page.fill("#data-dir textarea", str(gaia_dir))
    page.fill("#max-samples input", "2.5")
    page.click("#run-btn")
    page.wait_for_function("document.querySelector('#batch-status').innerText.includes('whole number')")
    run_box, status_box = page.locator("#run-btn").bounding_box(), page.locator("#batch-status").bounding_box()
    assert status_box["y"] - (run_box["y"] + run_box["height"]) < 120  # right under the button, not at the end
    page.fill("#concurrency input", "99")
    page.fill("#max-samples input", "2")
    page.click("#run-btn")
    page.wait_for_function("document.querySelector('#batch-status').innerText.includes('at most 16')")


def test_downloads_cannot_be_removed(page, gaia_dir):
    start_batch(page, gaia_dir, concurrency=2, max_samples=0, task_ids="")
    page.wait_for_function("document.querySelector('#batch-status').innerText.includes('🏁')", timeout=90_000)
    page.locator("#downloads .file-preview, #downloads table").first.wait_for()
    clear = page.locator("#downloads .label-clear-button, #downloads button[aria-label='Clear']")
    assert all(not clear.nth(i).is_visible() for i in range(clear.count()))


def test_on_a_phone_the_header_is_one_line(browser, app_server):
    context = browser.new_context(viewport={"width": 420, "height": 860}, is_mobile=True)
    tab = context.new_page()
    tab.goto(app_server.url)
    tab.wait_for_function("document.querySelector('#status-line')?.innerText?.includes('Ready')", timeout=90_000)
    header = tab.locator("#status-line").bounding_box()
    share = (header["y"] + header["height"]) / 860
    print(f"on a 420 px phone the header ends at {100 * share:.0f}% of the first screen")
    assert share < 0.35
    context.close()
