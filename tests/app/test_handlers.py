"""The app's API endpoints (`ask`, `chat`, `evaluate`, …) through gradio_client against the launched app."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from gradio_client import Client, handle_file

from tests.app.conftest import last_user_text
from tests.support.gaia_fixture import FIXTURE_TASKS

pytestmark = pytest.mark.integration


@pytest.fixture()
def client(app_server):
    """A fresh client = a fresh Gradio session."""
    return Client(app_server.url, verbose=False)


def _text(message: dict) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return " ".join(p.get("text", "") for p in content if isinstance(p, dict))
    return str(content)


def test_ask_streams_a_calculator_step_and_returns_the_answer(client, model_server):
    trace, answer, verdict, trace_file = client.predict("What is 2**10+7? Use the calculator.", None,
                                                        api_name="/ask")
    assert answer == "1031"
    titles = [(m.get("metadata") or {}).get("title", "") for m in trace]
    assert any("calculator" in t for t in titles), titles
    assert any(t.startswith("🧭 Route") for t in titles)
    assert any(t.startswith("🤖 model call #1") for t in titles)
    tool_step = next(m for m in trace if "calculator" in (m.get("metadata") or {}).get("title", ""))
    assert tool_step["metadata"]["status"] == "done" and "1031" in _text(tool_step)
    assert "Final answer" in _text(trace[-1]) and "1031" in _text(trace[-1])
    lines = [json.loads(line) for line in Path(trace_file).read_text().splitlines()]
    kinds = [e["kind"] for e in lines]
    assert {"route", "model_call", "tool_call", "tool_result", "answer"} <= set(kinds)
    assert verdict == ""  # a free question has no expected answer


def test_ask_with_an_empty_question_says_so(client):
    trace, answer, _verdict, trace_file = client.predict("   ", None, api_name="/ask")
    assert answer == "" and trace_file is None
    assert "Type a question" in _text(trace[-1])


def test_chat_remembers_the_first_turn(client, model_server):
    first = client.predict({"text": "Please remember the word pineapple.", "files": []}, api_name="/chat")
    assert "OK" in json.dumps(first)
    before = len(model_server.requests)
    second = client.predict({"text": "Which word did I ask you to remember?", "files": []}, api_name="/chat")
    assert "pineapple" in json.dumps(second)
    sent = model_server.requests[before:]
    assert sent, "the second turn made no model request"
    body = json.dumps(sent[-1].body)
    assert "remember the word pineapple" in body  # the first turn travelled with the second request


def test_chat_sessions_do_not_share_history(app_server):
    a, b = Client(app_server.url, verbose=False), Client(app_server.url, verbose=False)
    a.predict({"text": "Please remember the word walnut.", "files": []}, api_name="/chat")
    answer_b = b.predict({"text": "Which word did I ask you to remember?", "files": []}, api_name="/chat")
    assert "walnut" not in json.dumps(answer_b) and "unknown" in json.dumps(answer_b)


def test_evaluate_runs_a_local_gaia_folder(client, gaia_dir):
    status, table, summary, chart, files = client.predict(
        "Local GAIA folder", "validation", str(gaia_dir), "1", 0, "", 2, 0, False, "", api_name="/evaluate")
    level1 = [t for t in FIXTURE_TASKS if t.level == 1]
    assert status.startswith("🏁"), status
    assert f"{len(level1)}/{len(level1)} done" in status and f"{len(level1)}/{len(level1)} correct" in status
    assert "Exact match 100.0%" in status and f"level 1: {len(level1)}/{len(level1)}" in status
    rows = table["data"]
    assert len(rows) == len(level1) and all(row[4] == "✅" for row in rows)
    assert "Accuracy" in summary or "accuracy" in summary
    assert chart and Path(chart).suffix == ".png"
    names = sorted(Path(f).name for f in files)
    assert {"results.jsonl", "report.md", "details.jsonl"} <= set(names)


def test_evaluate_with_a_bad_folder_explains(client, tmp_path):
    status, table, *_ = client.predict("Local GAIA folder", "validation", str(tmp_path / "nope"), "All", 0, "",
                                       1, 0, False, "", api_name="/evaluate")
    assert status.startswith("❌") and "nope" in status
    assert table["data"] in ([], [[]]) or not any(any(cell for cell in row) for row in table["data"])


def test_evaluate_api_mode_needs_a_username(client):
    status, *_ = client.predict("Unit 4 scoring API", "validation", "", "All", 0, "", 1, 0, False, "",
                                api_name="/evaluate")
    assert "username" in status


def test_load_tasks_and_preview_an_attachment(client, gaia_dir):
    _choices, table, message = client.predict("Local GAIA folder", "validation", "All", str(gaia_dir),
                                              api_name="/load_tasks")
    assert "Loaded 6 task(s)" in message and len(table["data"]) == 6
    xlsx = next(Path(gaia_dir) / "2023" / "validation" / t.file_name for t in FIXTURE_TASKS if t.key == "xlsx")
    preview = client.predict(handle_file(str(xlsx)), api_name="/preview")
    assert "parse_excel" in preview and "Sales" in preview and "30" in preview


def test_rag_lookup_without_an_index_reports_a_miss(client):
    text = client.predict("What is the capital city of France?", api_name="/rag_lookup")
    assert "Tier: miss" in text


def test_concurrent_sessions_keep_their_own_traces(app_server):
    questions = {"What is 2**10+7? Use the calculator.": "1031", "What is the capital city of France?": "Paris"}
    jobs = {q: Client(app_server.url, verbose=False).submit(q, None, api_name="/ask") for q in questions}
    for question, expected in questions.items():
        trace, answer, *_ = jobs[question].result(timeout=60)
        assert answer == expected
        assert trace[0]["role"] == "user" and question in _text(trace[0])
        other = next(q for q in questions if q != question)
        assert other not in json.dumps(trace)


def test_a_long_batch_does_not_block_the_debug_tab(app_server, gaia_dir):
    batch = Client(app_server.url, verbose=False).submit(
        "Local GAIA folder", "validation", str(gaia_dir), "All", 0, "", 1, 0, False, "", api_name="/evaluate")
    debug = Client(app_server.url, verbose=False)
    deadline = time.monotonic() + 30
    while "done" not in str(batch.outputs()[-1:]) and time.monotonic() < deadline:
        time.sleep(0.05)  # the batch is running
    _trace, answer, *_ = debug.predict("What is 2**10+7? Use the calculator.", None, api_name="/ask")
    assert answer == "1031"
    assert not batch.done(), "the question should have been answered while the batch was still running"
    status, *_ = batch.result(timeout=120)
    assert status.startswith("🏁") and "6/6 done" in status


def test_stop_then_resume_finishes_the_same_run(app_server, gaia_dir):
    client = Client(app_server.url, verbose=False)
    job = client.submit("Local GAIA folder", "validation", str(gaia_dir), "All", 0, "", 1, 0, False, "",
                        api_name="/evaluate")
    deadline = time.monotonic() + 30
    while not any("1/6 done" in str(out[0]) for out in job.outputs()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert "Stopping" in client.predict(api_name="/stop")
    status, table, *_ = job.result(timeout=60)
    assert status.startswith("⏹️") and "Resume" in status
    stopped_rows = len(table["data"])
    assert 1 <= stopped_rows < 6
    status, table, _summary, _chart, files = client.predict(
        "Local GAIA folder", "validation", str(gaia_dir), "All", 0, "", 1, 0, False, "", api_name="/resume")
    assert status.startswith("🏁") and "6/6 done" in status and "6/6 correct" in status
    assert len(table["data"]) == 6
    details = next(f for f in files if f.endswith("details.jsonl"))
    assert len(Path(details).read_text().splitlines()) == 6  # each task once, across both sessions


def test_stop_without_a_run_says_so(client):
    assert "No run" in client.predict(api_name="/stop")


def test_evaluate_against_the_scoring_api_shows_each_submission(client, scoring_api):
    status, table, summary, _chart, files = client.predict(
        "Unit 4 scoring API", "validation", "", "All", 0, "", 1, 0, False, "tester", api_name="/evaluate")
    assert status.startswith("🏁 Submitted") and "3 answered" in status and "2 known correct" in status
    rows = {row[0]: row for row in table["data"]}
    assert rows["api-arit"][4] == "✅" and rows["api-unkn"][4] == "❌ WRONG"
    assert "Score:" in summary and "| api-arit |" in summary
    assert scoring_api.submissions and scoring_api.submissions[-1]["username"] == "tester"
    assert len(scoring_api.submissions[-1]["answers"]) == 3
    assert any(f.endswith("submissions.jsonl") for f in files)


def test_compare_two_runs(client, app_server, gaia_dir):
    for level in ("1", "2"):
        status, *_ = client.predict("Local GAIA folder", "validation", str(gaia_dir), level, 0, "", 2, 0, False, "",
                                    api_name="/evaluate")
        assert status.startswith("🏁")
    runs = sorted(p for p in Path(app_server.env["OUTPUT_DIR"]).iterdir() if (p / "details.jsonl").is_file())
    text = client.predict(str(runs[-2]), str(runs[-1]), api_name="/compare")
    assert "|" in text and not text.startswith("❌"), text
    assert client.predict(str(runs[-1]), str(runs[-1]), api_name="/compare") == "Pick two different runs."


def test_chat_attachments_go_with_their_own_message_only(client, model_server, gaia_dir):
    csv = Path(gaia_dir) / "2023" / "validation" / "people.csv"
    client.predict({"text": "How many rows are in this file?", "files": [handle_file(str(csv))]}, api_name="/chat")
    first = json.dumps(model_server.requests[-1].body)
    assert "people.csv" in first
    before = len(model_server.requests)
    client.predict({"text": "And how many columns?", "files": []}, api_name="/chat")
    follow_up = model_server.requests[before:]
    # Per-message attachments: the follow-up names the file only as history, it is not attached again.
    assert follow_up and "people.csv" not in last_user_text(follow_up[-1].body)


def test_evaluate_rejects_bad_form_values_clearly(client, gaia_dir):
    from gradio_client.exceptions import AppError

    with pytest.raises(AppError, match="not in the list of choices"):  # gradio checks choices before the handler
        client.predict("Local GAIA folder", "validation", str(gaia_dir), "7", 0, "", 1, 0, False, "",
                       api_name="/evaluate")
    status, *_ = client.predict("Local GAIA folder", "validation", str(gaia_dir), "All", 0, "no-such-task", 1, 0,
                                False, "", api_name="/evaluate")
    assert status.startswith("❌") and "no-such-task" in status
