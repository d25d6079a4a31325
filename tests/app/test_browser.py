"""The real app in headless Chromium (Debian's /usr/bin/chromium driven by Playwright).

Each test also saves a screenshot of its tab: to a temporary folder, or to docs/screenshots/ for the README
when UPDATE_SCREENSHOTS=1 (`make screenshots`), so a plain test run leaves the checkout clean.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.app.conftest import app_env
from tests.support.app_page import app_page, chat, pick_task, start_batch
from tests.support.app_server import ROOT, AppServer, base_env
from tests.support.chromium import BROWSER_MARKS
from tests.support.gaia_fixture import FIXTURE_TASKS

SHOTS = (Path(__file__).resolve().parents[2] / "docs" / "screenshots" if os.environ.get("UPDATE_SCREENSHOTS") == "1"
         else Path(tempfile.gettempdir()) / "gaia-harness-screenshots")

pytestmark = BROWSER_MARKS


@pytest.fixture(scope="module")
def app_server(model_server, scoring_api, gaia_dir, tmp_path_factory):
    """The app with a small real RAG index (the fixture questions), so traces show lookups with similarities."""
    tmp = tmp_path_factory.mktemp("app")
    subprocess.run([sys.executable, "-m", "rag", "build", "--gaia-dir", str(gaia_dir), "--index-dir",
                    str(tmp / "rag_index")], cwd=ROOT, env=base_env(), check=True, capture_output=True, timeout=120)
    with AppServer(app_env(model_server, scoring_api, tmp)) as app:
        yield app


@pytest.fixture()
def page(browser, app_server):
    with app_page(browser, app_server.url) as tab:
        yield tab


def _shot(page, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / name), full_page=True)


def test_ask_streams_steps_then_the_answer(page):
    page.fill("#question textarea", "What is 2**10+7? Use the calculator.")
    page.click("#ask-btn")
    # The tool step is on screen while the answer is still being produced (the model answers 1 s later).
    page.wait_for_function("document.querySelector('#trace').innerText.includes('calculator')")
    assert page.input_value("#answer textarea") == ""
    page.wait_for_function("document.querySelector('#answer textarea').value === '1031'")
    trace = page.inner_text("#trace")
    for step in ("Route: agent", "RAG lookup: hints (similarity 0.", "model call #1", "model call #2", "Final answer"):
        assert step in trace, step
    assert "expression" not in page.inner_text("#trace")  # finished steps start collapsed
    page.get_by_text("✅ calculator").click()  # expand the tool step: its arguments and result
    page.wait_for_function("document.querySelector('#trace').innerText.includes('\"expression\"')")
    assert "Result:" in page.inner_text("#trace")
    page.wait_for_timeout(800)  # the accordion's opening animation, for the screenshot
    _shot(page, "debug.png")


def test_batch_of_three_fills_the_table_with_progress(page, gaia_dir):
    start_batch(page, gaia_dir, concurrency=1, max_samples=3)
    # Live: the progress bar moves and the table grows one task at a time.
    page.wait_for_selector("#batch-progress .progress-level-inner", state="attached")
    page.wait_for_function("document.querySelector('#batch-status').innerText.includes('1/3 done')")
    rows_midway = page.inner_text("#results").count("✅")
    assert 1 <= rows_midway < 3
    page.wait_for_function("document.querySelector('#batch-status').innerText.includes('🏁')", timeout=60_000)
    status = page.inner_text("#batch-status")
    assert "3/3 done" in status and "3/3 correct" in status
    table_text = page.inner_text("#results")
    assert table_text.count("✅") == 3
    assert all(t.task_id()[:8] in table_text for t in FIXTURE_TASKS[:3])
    assert "Exact match 100.0%" in status
    assert page.locator("img[src*='accuracy']").count() == 1  # the chart
    _shot(page, "batch.png")


def test_chat_twice_with_memory(page):
    box = chat(page, "Please remember the word pineapple.")
    page.wait_for_function("document.querySelector('#chatbot').innerText.includes('OK')")
    box.fill("Which word did I ask you to remember?")
    box.press("Enter")
    page.wait_for_function(
        "(() => { const t = document.querySelector('#chatbot').innerText;"
        " return t.split('Which word').length > 1 && t.split('Which word')[1].includes('pineapple'); })()")
    page.wait_for_function("[...document.querySelectorAll('[data-testid=status-tracker]')]"
                           ".every(e => e.classList.contains('hide'))")  # the turn is over
    page.wait_for_timeout(500)  # let the last bubble settle for the screenshot
    _shot(page, "chat.png")


def test_pick_a_gaia_task_and_see_the_verdict(page, gaia_dir):
    pick_task(page, gaia_dir, "Sales column")
    page.wait_for_function("document.querySelector('#task-info').innerText.includes('expected: 60')")
    assert "total of the Sales column" in page.input_value("#question textarea")
    page.click("#ask-btn")
    page.wait_for_function("document.querySelector('#answer textarea').value === '60'")
    page.wait_for_function("document.querySelector('#verdict').innerText.includes('Correct')")
    assert "sales.xlsx" in page.inner_text("#trace")  # the task's attachment went with the question
