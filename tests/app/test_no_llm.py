"""Without a model endpoint the app starts, says what is missing, and keeps what needs no model working."""

from __future__ import annotations

from pathlib import Path

import pytest
from gradio_client import Client, handle_file

from tests.support.app_server import AppServer
from tests.support.gaia_fixture import FIXTURE_TASKS, make_gaia_folder

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("nollm")
    with AppServer({"OUTPUT_DIR": str(tmp / "runs"), "RAG_INDEX_DIR": str(tmp / "rag_index")}) as server:
        yield Client(server.url, verbose=False), make_gaia_folder(tmp / "gaia")


def test_status_names_the_missing_llm(app):
    client, _ = app
    status = client.predict(api_name="/status")
    assert "LLM**: not configured — set OPENAI_API_KEY or OPENAI_BASE_URL" in status


def test_ask_explains_instead_of_failing(app):
    client, _ = app
    trace, answer, verdict, trace_file = client.predict("What is 2 + 2?", None, api_name="/ask")
    assert answer == ""
    assert "OPENAI_API_KEY" in verdict and "OPENAI_API_KEY" in str(trace[-1]["content"])
    assert Path(trace_file).read_text().strip()  # the trace (route, RAG lookup, error) is still downloadable


def test_browsing_preview_and_rag_work_without_a_model(app):
    client, gaia = app
    _choices, table, message = client.predict("Local GAIA folder", "validation", "2", str(gaia), api_name="/load_tasks")
    assert "Loaded 2 task(s)" in message and {row[1] for row in table["data"]} == {2}
    csv = Path(gaia) / "2023" / "validation" / next(t.file_name for t in FIXTURE_TASKS if t.key == "csv")
    preview = client.predict(handle_file(str(csv)), api_name="/preview")
    assert preview.startswith("✅") and "Paris" in preview and "Berlin" in preview
    assert "Tier: miss" in client.predict("Anything stored?", api_name="/rag_lookup")


def test_batch_refuses_with_the_fix(app):
    client, gaia = app
    status, *_ = client.predict("Local GAIA folder", "validation", str(gaia), "All", 0, "", 1, 0, False, "",
                                api_name="/evaluate")
    assert status.startswith("❌") and "OPENAI_BASE_URL" in status


def test_the_hub_split_offline_says_why(app):
    client, _ = app
    _choices, table, message = client.predict("Hugging Face hub", "validation", "All", "", api_name="/load_tasks")
    assert message.startswith("❌") and "HF_HUB_OFFLINE" in message and "local copy" in message
    assert table["data"] in ([], [[]]) or not any(any(cell for cell in row) for row in table["data"])
