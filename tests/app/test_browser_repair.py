"""The repair loop in the app: a batch with wrong answers, "Re-run Run A's failures", then Compare.

Saves docs/screenshots/repair-loop.png with UPDATE_SCREENSHOTS=1 (a temporary folder otherwise).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import pytest
from gradio_client import Client

from tests.app.conftest import app_env
from tests.support.app_server import AppServer
from tests.support.chromium import BROWSER_MARKS
from tests.support.gaia_fixture import FIXTURE_TASKS, answer_for
from tests.support.openai_server import Reply, ScriptedOpenAI, first_user_text

SHOTS = (Path(__file__).resolve().parents[2] / "docs" / "screenshots" if os.environ.get("UPDATE_SCREENSHOTS") == "1"
         else Path(tempfile.gettempdir()) / "gaia-harness-screenshots")

pytestmark = BROWSER_MARKS


class Model:
    """Right answers, except for the questions in `wrong` (emptied once the "fix" is in)."""

    def __init__(self) -> None:
        self.wrong = {FIXTURE_TASKS[1].question, FIXTURE_TASKS[2].question, FIXTURE_TASKS[3].question}

    def __call__(self, body: dict[str, Any]) -> Reply:
        text = first_user_text(body)
        if any(q in text for q in self.wrong):
            return Reply(content="FINAL ANSWER: no idea")
        return Reply(content=f"FINAL ANSWER: {answer_for(text)}")


@pytest.fixture(scope="module")
def served(scoring_api, tmp_path_factory):
    model = Model()
    with ScriptedOpenAI(model) as server:
        env = app_env(server, scoring_api, tmp_path_factory.mktemp("app")) | {"RAG_ENABLED": "false"}
        with AppServer(env) as app:
            yield app, model, server


def test_rerun_failures_then_compare_shows_what_the_fix_repaired(browser, served, gaia_dir):
    app, model, server = served
    status, *_ = Client(app.url, verbose=False).predict(
        "Local GAIA folder", "validation", str(gaia_dir), "All", 4, "", 1, 0, False, "", api_name="/evaluate")
    assert "🏁" in status and "1/4 correct" in status
    model.wrong = {FIXTURE_TASKS[3].question}  # the "fix": two of the three wrong tasks now answer right
    asked = len(server.requests)
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(30_000)
    page.goto(app.url)
    page.get_by_role("tab", name="📊 Batch evaluation").click()
    page.get_by_text("Compare two runs").click()
    page.get_by_role("button", name="Refresh run list").click()
    page.click("#run-a input")
    page.locator("[role=option]").nth(0).click()
    page.click("#rerun-btn")
    page.wait_for_function("document.querySelector('#batch-status').innerText.includes('🏁')", timeout=60_000)
    assert "3/3 done" in page.inner_text("#batch-status")
    assert len(server.requests) - asked == 3  # only the three wrong tasks were asked again
    page.get_by_role("button", name="Refresh run list").click()
    for box, index in (("#run-a", 1), ("#run-b", 0)):
        page.click(f"{box} input")
        page.locator("[role=option]").nth(index).click()
    page.click("#compare-btn")
    page.wait_for_function("document.querySelector('#comparison').innerText.includes('still wrong')")
    text = page.inner_text("#comparison")
    assert text.count("\tfixed\t") == 2 and text.count("\tstill wrong\t") == 1 and "tool_failed" in text
    page.get_by_text("Report (report.md)").click()
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.locator("#comparison").scroll_into_view_if_needed()
    page.screenshot(path=str(SHOTS / "repair-loop.png"), full_page=True)
    context.close()
