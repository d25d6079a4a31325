"""Result/sample rows, task ids, status and progress lines."""

from __future__ import annotations

from evaluation.dataset import Sample
from evaluation.records import TaskRecord
from evaluation.run_summary import RunSummary
from ui.status import LLM_MISSING, format_duration, preload_status, progress_line, run_summary
from ui.tables import merge_record, parse_task_ids, record_row, sample_rows, short, task_choices


def test_record_row():
    rec = TaskRecord(task_id="0123456789abcdef", question="q", level=2, expected="60", predicted="60",
                     correct=True, source="agent", steps=3, latency_s=12.345)
    assert record_row(rec) == ["01234567", 2, "60", "60", "✅", "agent", 3, 12.3]
    rec.correct = False
    assert record_row(rec)[4] == "❌ WRONG"  # a word: without a colour-emoji font the cross alone is a thin "x"


def test_record_row_unscored_and_error():
    rec = TaskRecord(task_id="t", question="q", expected=None, predicted="", correct=None, error="LLM down: 500")
    row = record_row(rec)
    assert row[2] == "error: LLM down: 500" and row[3] == "?" and row[4] == "?"


def test_merge_record_replaces_the_same_task():
    a1, b, a2 = TaskRecord(task_id="a", question="q"), TaskRecord(task_id="b", question="q"), \
        TaskRecord(task_id="a", question="q", predicted="new")
    merged = merge_record(merge_record(merge_record([], a1), b), a2)
    assert [r.task_id for r in merged] == ["b", "a"] and merged[-1].predicted == "new"


def test_sample_rows_and_choices():
    samples = [Sample("abcdef1234", "What   is\n2+2?", 1, "4"), Sample("zz", "Sum the sheet", 2, "?", "a.xlsx")]
    assert sample_rows(samples) == [["abcdef1234", 1, "What is 2+2?", "", "4"],
                                    ["zz", 2, "Sum the sheet", "a.xlsx", "?"]]
    labels = task_choices(samples)
    assert labels[0] == ("L1 · What is 2+2? · abcdef12", "abcdef1234") and "📎" in labels[1][0]


def test_parse_task_ids_and_short():
    assert parse_task_ids(" a, b\nc a ") == ["a", "b", "c"]
    assert parse_task_ids(None) == []
    assert short("x" * 100, 10) == "x" * 9 + "…"


def test_preload_status_without_llm_says_how_to_fix():
    text = preload_status("ready", {"tools": "7 active", "ocr": "tesseract missing"}, llm_configured=False,
                          elapsed_s=1.0).markdown()
    assert f"**LLM**: {LLM_MISSING}" in text and "OPENAI_API_KEY" in text
    assert "⚠️ **OCR**: tesseract missing" in text and "✅ **Tools**: 7 active" in text
    assert text.startswith("🟡 **Loaded without a model** in 1.0s") and "🟢" not in text  # never green without a model
    assert preload_status("ready", {}, llm_configured=True, elapsed_s=1.0).markdown().startswith("🟢 **Ready** in 1.0s")


def test_preload_status_shows_an_unreachable_endpoint_in_red():
    dead = "unreachable (http://127.0.0.1:9/v1: connection refused)"
    text = preload_status("ready", {"llm": dead, "tools": "7 active"}, llm_configured=True).markdown()
    assert f'❌ **LLM**: <span style="color:#dc2626">{dead}</span>' in text and "✅ **LLM**" not in text
    wrong = preload_status("ready", {"llm": "model qwen3 not served by http://h:1/v1 (it lists: a)"},
                           llm_configured=True).markdown()
    assert "❌ **LLM**" in wrong
    ready = preload_status("ready", {"llm": "ready (smollm2)"}, llm_configured=True).markdown()
    assert "✅ **LLM**: ready (smollm2)" in ready


def test_preload_status_idle_loading_and_failed():
    assert preload_status("idle", {}, llm_configured=True, preload=False).markdown().startswith(
        "💤 The agent loads with the first request")
    # With APP_PRELOAD on, the moment before the thread starts must not claim the load waits for a request.
    starting = preload_status("idle", {}, llm_configured=True, preload=True).markdown()
    assert starting.startswith("⏳ **Starting**") and "APP_PRELOAD=false" not in starting
    assert preload_status("loading", {}, llm_configured=True, model_name="gpt").markdown().startswith("⏳ **Loading**")
    assert "gpt (configured)" in preload_status("loading", {}, llm_configured=True, model_name="gpt").markdown()
    failed = preload_status("failed", {}, llm_configured=True, error="ImportError: x").markdown()
    assert failed.startswith("❌ **Agent failed to load:** ImportError: x")


def test_progress_line_and_durations():
    assert progress_line(3, 6, 2, 3, 1, 12, 20) == "3/6 done · 2/3 correct (67%) · 1 error · 12s elapsed · ETA 20s"
    assert progress_line(6, 6, 0, 0, 0, 65, None) == "6/6 done · 0 correct · 1m 05s elapsed"
    assert progress_line(0, 4, 0, 0, 0, 0, None).endswith("ETA ?")
    assert format_duration(3725) == "1h 02m" and format_duration(float("nan")) == "?"


def test_run_summary_line():
    summary = RunSummary.from_dict({
               "exact_match_rate": 0.5, "correct": 2, "scored": 4, "unscored": 1, "format_only_misses": 1,
               "lenient_match_rate": 0.75,
               "level_metrics": {"1": {"scored": 3, "correct": 2}, "2": {"scored": 1, "correct": 0},
                                 "3": {"scored": 0, "correct": 0}},
               "errors": 1, "tokens": {"total": 12345, "per_task": 2469}, "elapsed_s": 75})
    assert run_summary(summary) == ("**Exact match 50.0%** (2/4 scored, 1 unscored) · with format-only misses 75.0% · "
                                    "level 1: 2/3 · level 2: 0/1 · 1 error · 12,345 tokens (2,469/task) · "
                                    "1m 15s elapsed")
    assert run_summary(RunSummary()).startswith("**Exact match n/a** (0/0 scored)")


def test_the_summary_line_names_the_scorer_that_ran_and_the_attempts():
    lenient = RunSummary(exact_match_rate=0.75, correct=3, scored=4, meta={"scorer": "lenient"},
                         attempts={"k": 3, "pass_at_1": 0.5, "pass_at_k": 1.0, "majority": 0.75})
    line = run_summary(lenient)
    assert line.startswith("**Correct (lenient scorer) 75.0%** (3/4 scored)") and "Exact match" not in line
    assert "pass@1 50.0%, pass@3 100.0%, majority 75.0%" in line
    assert "pass@" not in run_summary(RunSummary(exact_match_rate=1.0, correct=1, scored=1))


def test_run_summary_leaves_out_attempts_when_each_task_ran_once():
    single = RunSummary(correct=2, scored=3, attempts={"k": 1, "pass_at_1": 0.5, "pass_at_k": 0.5, "majority": 0.5})
    assert "pass@" not in run_summary(single)


def test_batch_form_validation():
    import pytest

    from ui.batch import FormError, make_request

    req = make_request("Local GAIA folder", "validation", " /data ", "2", "5", "a,b", "3", "1.5", True, " me ")
    assert (req.level, req.max_samples, req.task_ids, req.concurrency, req.question_delay, req.data_dir,
            req.username) == (2, 5, ["a", "b"], 3, 1.5, "/data", "me")
    assert make_request("Hugging Face hub", "test", "", "All", 0, "", 1, 0, False, "").max_samples is None
    for args, field in ((("Somewhere", "validation", "", "All", 0, "", 1, 0, True, ""), "Source"),
                        (("Local GAIA folder", "dev", "", "All", 0, "", 1, 0, True, ""), "Split"),
                        (("Local GAIA folder", "validation", "", "4", 0, "", 1, 0, True, ""), "Level"),
                        (("Local GAIA folder", "validation", "", "All", "x", "", 1, 0, True, ""), "Max samples"),
                        (("Local GAIA folder", "validation", "", "All", 0, "", 0, 0, True, ""), "Concurrency"),
                        (("Local GAIA folder", "validation", "", "All", 0, "", 1, -1, True, ""), "Delay")):
        with pytest.raises(FormError, match=field):
            make_request(*args)


def test_the_summary_line_carries_the_problems_and_loading_parts_show_as_they_come():
    dead = "unreachable (http://127.0.0.1:9/v1: connection refused)"
    line = preload_status("ready", {"llm": dead, "rag": "empty", "tools": "7 active"}, llm_configured=True)
    assert line.summary.startswith("🟢 **Ready**") and "connection refused" in line.summary
    assert "7 active" not in line.summary
    assert "⚠️ RAG: empty" in line.summary
    loading = preload_status("loading", {"llm": "ready (m)"}, llm_configured=True)
    assert "✅ **LLM**: ready (m)" in loading.entries and "⏳ **RAG**: loading…" in loading.entries
    assert loading.details().count("\n- ") == len(loading.entries) - 1
