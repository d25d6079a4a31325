"""One real app (`python app.py`) per test module, talking to one scripted OpenAI-compatible server.

The scripted model decides from the conversation, so the ask, chat and batch tests can share it:
- a question mentioning "2**10+7" gets a calculator call, then the tool's result as FINAL ANSWER;
- "remember the word X" gets "OK"; "which word" answers the word found in the earlier turns (or "unknown");
- a GAIA fixture question gets its fixture answer (`answer_for`);
- "take your time" gets an answer only after 8 s (for the Stop buttons).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.support.app_server import AppServer
from tests.support.gaia_fixture import FIXTURE_TASKS, answer_for, make_gaia_folder
from tests.support.openai_server import Reply, ScriptedOpenAI, call, first_user_text, say, tool_results
from tests.support.scoring_server import ApiTask, ScoringServer


def all_text(body: dict[str, Any]) -> str:
    """Every message's text in a request."""
    parts = []
    for msg in body.get("messages", []):
        content = msg.get("content")
        if isinstance(content, list):
            parts += [p.get("text", "") for p in content if isinstance(p, dict)]
        else:
            parts.append(str(content or ""))
    return "\n".join(parts)


def last_user_text(body: dict[str, Any]) -> str:
    """The latest user message's text (the current question, with the router's additions)."""
    users = [m for m in body.get("messages", []) if m.get("role") == "user"]
    if not users:
        return ""
    content = users[-1].get("content")
    if isinstance(content, list):
        return " ".join(p.get("text", "") for p in content if isinstance(p, dict))
    return str(content or "")


def scripted_reply(body: dict[str, Any]) -> Reply:
    """The scripted model's behaviour (see the module docstring)."""
    question = last_user_text(body)
    results = tool_results(body)
    if "2**10+7" in question:
        if not results:
            return call("calculator", expression="2**10+7")
        # A pause before the answer lets a browser see the tool step arrive before the answer does.
        return say(f"The calculator says {results[-1]}.\nFINAL ANSWER: {results[-1].strip()}", delay=1.0)
    if "take your time" in question.lower():  # slow enough for a Stop to land while the model is thinking
        return say("FINAL ANSWER: late", delay=8.0)
    if "remember the word" in question.lower():
        return say("FINAL ANSWER: OK")
    if "which word" in question.lower():
        earlier = all_text(body)
        found = re.search(r"remember the word (\w+)", earlier, re.IGNORECASE)
        return say(f"FINAL ANSWER: {found.group(1) if found else 'unknown'}")
    expected = answer_for(first_user_text(body))
    if expected is not None:
        return Reply(content=f"FINAL ANSWER: {expected}", delay=0.5)
    return say("FINAL ANSWER: I do not know")


@pytest.fixture(scope="module")
def model_server():
    """The scripted OpenAI-compatible server (its `.requests` are inspected by the tests)."""
    with ScriptedOpenAI(scripted_reply) as srv:
        yield srv


@pytest.fixture(scope="module")
def gaia_dir(tmp_path_factory) -> Path:
    """A small local GAIA folder (6 validation tasks, real attachments)."""
    return make_gaia_folder(tmp_path_factory.mktemp("gaia"))


API_TASKS = [
    ApiTask(task_id="api-arith", question=FIXTURE_TASKS[0].question, answer=FIXTURE_TASKS[0].answer),
    ApiTask(task_id="api-capital", question=FIXTURE_TASKS[-1].question, answer=FIXTURE_TASKS[-1].answer, level="3"),
    ApiTask(task_id="api-unknown", question="What colour is the number seven?", answer="blue", level="2"),
]
"""Scoring-API questions: the scripted model gets the first two right and the third wrong."""


@pytest.fixture(scope="module")
def scoring_api():
    """A local Unit 4 scoring API (its `.submissions` are inspected by the tests)."""
    with ScoringServer(API_TASKS) as api:
        yield api


def app_env(model_server: ScriptedOpenAI, scoring_api: ScoringServer, tmp: Path) -> dict[str, str]:
    """The app's settings: the scripted model and scoring API, outputs and RAG index under `tmp`, no web."""
    return {
        "OPENAI_BASE_URL": model_server.url, "OPENAI_API_KEY": "sk-test", "MODEL_NAME": "scripted",
        "OUTPUT_DIR": str(tmp / "runs"), "RAG_INDEX_DIR": str(tmp / "rag_index"), "RAG_LLM_HINTS": "false",
        "BATCH_QUESTION_DELAY": "0", "RATE_LIMIT_RETRY_BASE_DELAY": "0.1", "SEARCH_PROVIDERS": "wikipedia",
        "WIKIPEDIA_API_URL": "http://127.0.0.1:9/w/api.php", "SCORING_API_URL": scoring_api.url,
    }


@pytest.fixture(scope="module")
def app_server(model_server, scoring_api, tmp_path_factory):
    """The app, preloading, pointed at the scripted server; an empty RAG index, outputs in a temp folder."""
    with AppServer(app_env(model_server, scoring_api, tmp_path_factory.mktemp("app"))) as app:
        yield app


@pytest.fixture(scope="module")
def browser():
    """Debian's headless Chromium, one per browser test module (each module's tests share it)."""
    from tests.support.chromium import CHROMIUM, FLAGS

    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=str(CHROMIUM), args=FLAGS)
        yield chromium
        chromium.close()
