"""A dead model endpoint in headless Chromium: the header says so at once, and a question fails in seconds.

Issue: a wrong OPENAI_BASE_URL used to show `✅ LLM: ready` and hang each question for five minutes of
backoff. Measured here: seconds from the app answering HTTP to the red header, and from the click to
the failure naming the URL.
"""

from __future__ import annotations

import time

import pytest

from tests.support.app_server import AppServer, free_port
from tests.support.chromium import BROWSER_MARKS, CHROMIUM, FLAGS

pytestmark = BROWSER_MARKS


def test_dead_endpoint_is_red_in_the_header_and_a_question_fails_fast(tmp_path) -> None:
    sync_api = pytest.importorskip("playwright.sync_api")
    dead = f"http://127.0.0.1:{free_port()}/v1"  # nothing listens there
    env = {"OPENAI_BASE_URL": dead, "MODEL_NAME": "qwen3:8b", "RAG_ENABLED": "false",
           "RAG_INDEX_DIR": str(tmp_path / "rag"), "OUTPUT_DIR": str(tmp_path / "runs")}
    with AppServer(env=env, timeout=120) as app, sync_api.sync_playwright() as pw:
        served = time.monotonic()
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=FLAGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(app.url)
        page.wait_for_function("document.querySelector('#status-line')?.innerText?.includes('unreachable')",
                               timeout=60_000)
        header_s = time.monotonic() - served
        header = page.inner_text("#status-line")
        assert f"unreachable ({dead}: connection refused)" in header and "❌" in header
        assert "✅ LLM" not in header

        page.fill("#question textarea", "What is 2 + 2?")
        clicked = time.monotonic()
        page.click("#ask-btn")
        page.wait_for_function(f"document.querySelector('#trace')?.innerText?.includes('{dead}')", timeout=60_000)
        failed_s = time.monotonic() - clicked
        assert "connection refused" in page.inner_text("#trace")
        browser.close()
    # The waits' 60 s limits (room for a loaded machine) are what "fails fast" means here: the old hang was 5 minutes.
    print(f"header red {header_s:.1f}s after the app served its page; question failed {failed_s:.1f}s after the click")
