"""A newcomer's first hour in headless Chromium, one app for the module.

The task's own file, visible messages, Stop, chat files, resuming after the tab was closed, the phone layout.

Screenshots go where test_browser.py puts them (docs/screenshots/ with UPDATE_SCREENSHOTS=1).
"""

from __future__ import annotations

import pytest

from tests.app.conftest import last_user_text
from tests.app.test_browser import _shot
from tests.support.app_page import app_page, chat, pick_task, start_batch
from tests.support.chromium import BROWSER_MARKS

pytestmark = BROWSER_MARKS


@pytest.fixture()
def page(browser, app_server):
    with app_page(browser, app_server.url) as tab:
        yield tab


def _text(page, selector: str) -> str:
    return page.inner_text(selector)


def test_the_picked_tasks_file_beats_a_stale_upload(page, gaia_dir, tmp_path):
    stale = tmp_path / "hello.txt"
    stale.write_text("an old upload")
    page.set_input_files("#upload input[type=file]", str(stale))
    page.wait_for_function("document.querySelector('#attached').innerText.includes('hello.txt')")
    pick_task(page, gaia_dir, "Sales column")
    page.wait_for_function("document.querySelector('#attached').innerText.includes('sales.xlsx')")
    assert "the task's file" in _text(page, "#attached")
    page.click("#ask-btn")
    page.wait_for_function("document.querySelector('#answer textarea').value === '60'")
    trace = _text(page, "#trace")
    assert "sales.xlsx" in trace and "hello.txt" not in trace
    _shot(page, "debug-task-file.png")


def test_tag_like_text_in_messages_is_shown(page):
    page.get_by_text("Pick a task from a GAIA split").click()
    page.click("#load-btn")  # no folder typed
    page.wait_for_function("document.querySelector('#task-info').innerText.includes('❌')")
    assert "2023/<split>/metadata.parquet or metadata.jsonl" in _text(page, "#task-info")


def test_stop_leaves_a_note_and_the_partial_trace(page):
    page.fill("#question textarea", "Please take your time: what is 1+1?")
    page.click("#ask-btn")
    page.wait_for_function("document.querySelector('#trace').innerText.includes('Route')")
    page.click("#stop-btn")
    page.wait_for_function("document.querySelector('#trace').innerText.includes('Stopped')", timeout=5_000)
    assert "Stopped" in _text(page, "#verdict")
    # The partial trace is offered: the download button now links to a file.
    page.wait_for_function("document.querySelector('#trace-download').outerHTML.includes('trace-')")
    _shot(page, "debug-stopped.png")


def test_chat_has_a_stop_button_while_a_turn_runs(page):
    chat(page, "Please take your time in the chat.")
    stop = page.locator("#chat-input .stop-button")
    stop.wait_for(state="visible", timeout=10_000)
    stop.click()
    stop.wait_for(state="hidden", timeout=10_000)
    assert "late" not in _text(page, "#chatbot")  # the answer (8 s away) never came


def test_a_chat_attachment_goes_with_its_own_message_only(page, gaia_dir, model_server):
    page.get_by_role("tab", name="💬 Chat").click()
    page.set_input_files("#chat-input input[type=file]", str(gaia_dir / "2023" / "validation" / "people.csv"))
    box = page.locator("#chat-input textarea")
    box.fill("How many rows are in this file?")
    box.press("Enter")
    page.wait_for_function("document.querySelector('#chatbot').innerText.includes('people.csv (this message only)')")
    page.wait_for_function("[...document.querySelectorAll('[data-testid=status-tracker]')]"
                           ".every(e => e.classList.contains('hide'))")
    before = len(model_server.requests)
    box.fill("And how many columns?")
    box.press("Enter")
    page.wait_for_function("document.querySelector('#chatbot').innerText.split('how many columns').length > 1 &&"
                           "document.querySelector('#chatbot').innerText.split('how many columns')[1].length > 3")
    page.wait_for_function("[...document.querySelectorAll('[data-testid=status-tracker]')]"
                           ".every(e => e.classList.contains('hide'))")
    later = model_server.requests[before:]
    assert later and all("people.csv" not in last_user_text(r.body) for r in later)
    assert _text(page, "#chatbot").count("(this message only)") == 1
    _shot(page, "chat-attachment.png")


def test_resume_after_closing_the_tab_on_a_phone(browser, app_server, gaia_dir):
    with app_page(browser, app_server.url, width=420, height=900) as page:
        tabs = page.get_by_role("tab")
        assert tabs.all_inner_texts() == ["🔎 Debug one question", "📊 Batch evaluation", "💬 Chat"]  # none behind ⋯
        start_batch(page, gaia_dir, concurrency=1)
        page.wait_for_function("document.querySelector('#batch-status').innerText.includes('1/6 done')", timeout=60_000)
        page.click("#halt-btn")
        page.wait_for_function("document.querySelector('#batch-status').innerText.includes('stopped')", timeout=60_000)
        # leaving the block closes the tab: a new session knows nothing of the run

    with app_page(browser, app_server.url, width=420, height=900) as page:
        page.get_by_role("tab", name="📊 Batch evaluation").click()
        page.click("#resume-pick input")
        option = page.locator("[role=option]", has_text="left").first
        assert "local folder" in option.inner_text()
        option.click()
        page.click("#resume-btn")
        page.wait_for_function("document.querySelector('#batch-status').innerText.includes('🏁')", timeout=60_000)
        status = _text(page, "#batch-status")
        assert "6/6 done" in status and "Run folder:" in status
        names = page.locator("#downloads .filename").all_inner_texts()
        flat = [" ".join(n.split()).replace(" .", ".") for n in names]
        assert "results.jsonl" in flat and "SUBMISSION_GUIDE.md" in "".join(flat).replace(" ", ""), names
        page.wait_for_timeout(500)
        _shot(page, "batch-phone.png")
