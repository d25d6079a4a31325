"""A team run in the real app's Debug tab (headless Chromium), then "Re-run this task" with other settings.

The team run shows the Strategy field, the ledger, worker sections, progress checks and the answer check;
the re-run uses the react strategy with the check off and shows both traces side by side.

Saves docs/screenshots/team-trace.png and rerun-panel.png with UPDATE_SCREENSHOTS=1 (else to a temporary
folder), like test_browser.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.app.conftest import app_env
from tests.app.test_browser import _shot
from tests.support.app_page import app_page
from tests.support.app_server import AppServer
from tests.support.chromium import BROWSER_MARKS
from tests.support.openai_server import Reply, ScriptedOpenAI, call, say, tool_results
from tests.support.team_script import LEDGER_TEXT, TeamScript, delegate_calls, kind_of, last_user

pytestmark = BROWSER_MARKS


def _orchestrator(body: dict[str, Any]) -> Reply:
    kind = kind_of(body)
    if kind == "ledger":
        return say(LEDGER_TEXT.replace("1. ask a worker", "1. coder: 2**10  2. coder: 17*2  3. add them"))
    if kind == "round":
        return delegate_calls(("coder", "Compute 2**10 with the calculator."),
                              ("coder", "Compute 17*2 with the calculator."))
    if kind == "progress":
        return say('{"satisfied": true, "looping": false, "progress": true, "next_step": "answer: 1024 + 34"}')
    return say("1024 + 34 = 1058.\nFINAL ANSWER: 1,058", delay=0.5)


def _other(body: dict[str, Any]) -> Reply:
    """The answer checker (its own first line), and the react loop of the re-run."""
    if str(body["messages"][0]["content"]).startswith("You check a final answer"):
        return say("FINAL ANSWER: 1058")
    if tool_results(body):
        return say("FINAL ANSWER: 1,058")
    return call("calculator", expression="2**10 + 17*2")


def _coder(body: dict[str, Any]) -> Reply:
    if results := tool_results(body):
        return say(f"The calculator gives {results[-1].strip()}.", delay=0.3)
    found = re.search(r"Compute (\S+) with", last_user(body))
    return call("calculator", expression=found.group(1) if found else "0")


@pytest.fixture(scope="module")
def model_server():
    with ScriptedOpenAI(TeamScript({"orchestrator": _orchestrator, "coder": _coder, "other": _other})) as srv:
        yield srv


@pytest.fixture(scope="module")
def app_server(model_server, scoring_api, tmp_path_factory):
    with AppServer(app_env(model_server, scoring_api, tmp_path_factory.mktemp("app"))
                   | {"RAG_ENABLED": "false", "ANSWER_CHECK": "on"}) as app:
        yield app


def _ask_as_a_team(page: Any) -> None:
    """Pick the team strategy in the Debug tab, ask the question and wait for its answer."""
    page.click("#strategy input")
    page.get_by_role("option", name="team").click()
    page.fill("#question textarea", "What is 2**10 + 17*2?")
    page.click("#ask-btn")
    page.wait_for_function("document.querySelector('#answer textarea').value === '1058'", timeout=60_000)


def test_debug_tab_shows_a_team_run(browser, app_server, model_server):
    with app_page(browser, app_server.url, height=1100) as page:
        _ask_as_a_team(page)
        trace = page.inner_text("#trace")
        for step in ("Task ledger", "Progress check (round 1): satisfied yes", "👷 coder · 2 step(s)", "delegate"):
            assert step in trace, step
        assert re.search(r"Answer check: `?1,058`? → `?1058", trace), trace
        assert len(re.findall(r"👷 coder · 2 step\(s\) · [\d,]+ tokens · \d+\.\d s", trace)) == 2
        page.get_by_text("👷 coder").first.click()  # open one worker's section: its own steps
        page.wait_for_function("document.querySelector('#trace').innerText.includes('calculator')")
        page.wait_for_timeout(800)  # the accordion's opening animation, for the screenshot
        page.locator("#trace").get_by_text("Task ledger").first.evaluate("el => el.scrollIntoView({block: 'start'})")
        _shot(page, "team-trace.png")
    roles = {kind_of(r.body) for r in model_server.requests if "orchestrator" in str(r.body["messages"][0])}
    assert roles == {"ledger", "round", "progress", "answer"}


def test_rerun_this_task_with_another_strategy_shows_both_traces_and_where_they_part(browser, app_server):
    with app_page(browser, app_server.url, height=1400) as page:
        _ask_as_a_team(page)
        page.get_by_text("Re-run this task with edited settings").click()
        assert page.input_value("#rerun-strategy input") == "team"  # the panel starts from the run's settings
        page.click("#rerun-strategy input")
        page.get_by_role("option", name="react").click()
        page.locator("#rerun-answer-check").get_by_label("off").check()
        page.click("#rerun-task-btn")
        page.wait_for_selector("#rerun-traces", timeout=60_000)
        view = page.inner_text("#rerun-view")
        assert "the traces part at step 1" in view and "react, " in view and "answer check off" in view
        highlighted = page.inner_text("#rerun-traces tr.diverges")
        assert "delegate(" in highlighted and 'calculator({"expression": "2**10 + 17*2"})' in highlighted
        assert 'coder: calculator({"expression": "17*2"})' in view and "answer: 1,058" in view
        assert "answer check: '1,058' -> '1058' (accepted)" in view
        page.locator("#rerun-panel").scroll_into_view_if_needed()
        _shot(page, "rerun-panel.png")
