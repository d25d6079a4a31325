"""summary.json content (levels, drops, groups, unscored) and report.md with its PNG chart."""

from __future__ import annotations

import json
import struct

import pytest

from evaluation.chart import chart_title, plot_accuracy
from evaluation.records import TaskRecord
from evaluation.report import recommendations, summarize, write_report
from evaluation.run_summary import RunSummary
from evaluation.scorer import Score, explain


def _record(i: int, level: int | None, predicted: str, expected: str | None, **kw) -> TaskRecord:
    exp = explain(predicted, expected) if expected is not None else None
    correct = exp.correct if exp else None
    category = ("unscored" if exp is None else "correct" if correct
                else "format_only_miss" if exp.format_only_miss else "plain_wrong")
    return TaskRecord(
        task_id=f"task-{i:03d}", question=f"Question {i}?", level=level, expected=expected, predicted=predicted,
        score=Score(exp.correct, explanation=exp) if exp else None,
        failure_category=kw.pop("failure_category", category), **kw,
    )


@pytest.fixture
def records() -> list[TaskRecord]:
    return [
        _record(1, 1, "4", "4", steps=2, file_type="xlsx", prompt_tokens=100, completion_tokens=10, latency_s=1.0),
        _record(2, 1, "Paris", "paris", steps=4, prompt_tokens=50, completion_tokens=5, latency_s=3.0),
        _record(3, 1, "5 km", "5", steps=3, file_type="xlsx"),
        _record(4, 1, "x", "x", source="rag", steps=0),
        _record(5, 2, "b, a", "a, b", file_type="csv"),
        _record(6, 2, "a, b", "a, b", steps=6, file_type="csv"),
        _record(7, 3, "London", "Paris", error="timeout", failure_category="llm_error", retries=2),
        _record(8, 3, "?", None),  # unscored
    ]


def test_summary_counts_and_accuracy(records):
    summary = summarize(records, elapsed_s=12.5, meta={"model": "m", "split": "validation"})
    s = summary.to_dict()
    assert (s["total"], s["scored"], s["unscored"], s["correct"]) == (8, 7, 1, 4)
    assert s["exact_match_rate"] == pytest.approx(4 / 7)
    assert s["format_only_misses"] == 2 and s["lenient_match_rate"] == pytest.approx(6 / 7)
    assert s["level_metrics"]["1"] == {"total": 4, "scored": 4, "correct": 3, "accuracy": 0.75}
    assert s["level_metrics"]["2"] == {"total": 2, "scored": 2, "correct": 1, "accuracy": 0.5}
    assert s["level_metrics"]["3"] == {"total": 2, "scored": 1, "correct": 0, "accuracy": 0.0}
    assert s["avg_steps_correct"] == pytest.approx((2 + 4 + 0 + 6) / 4)
    assert s["by_file_type"]["xlsx"]["accuracy"] == 0.5 and s["by_file_type"]["none"]["total"] == 4
    assert s["by_source"]["rag"] == {"total": 1, "scored": 1, "correct": 1, "accuracy": 1.0}
    assert s["tokens"] == {"prompt": 150, "completion": 15, "total": 165, "per_task": 165 / 8}
    assert s["failure_categories"] == {"format_only_miss": 2, "llm_error": 1, "unscored": 1}
    assert (s["errors"], s["retries"], s["elapsed_s"]) == (1, 2, 12.5)
    assert s["meta"] == {"model": "m", "split": "validation"}
    assert json.loads(json.dumps(s)) == s  # summary.json round-trips unchanged
    assert RunSummary.from_dict(json.loads(json.dumps(s))) == summary


def test_drop_rates(records):
    drops = summarize(records, elapsed_s=1).drop_rates
    assert drops["1->2"]["absolute"] == pytest.approx(0.25)
    assert drops["1->2"]["relative"] == pytest.approx(0.25 / 0.75)
    assert drops["2->3"] == {"absolute": 0.5, "relative": 1.0}
    assert drops["1->3"]["absolute"] == pytest.approx(0.75)


def test_drop_rates_with_missing_level_or_zero_base():
    only_one = summarize([_record(1, 1, "4", "4")], elapsed_s=0).drop_rates
    assert only_one["1->2"] == {"absolute": None, "relative": None}
    zero = summarize([_record(1, 1, "3", "4"), _record(2, 2, "4", "4")], elapsed_s=0).drop_rates
    assert zero["1->2"] == {"absolute": -1.0, "relative": None}


def test_empty_and_all_unscored_runs():
    empty = summarize([], elapsed_s=0).to_dict()
    assert empty["exact_match_rate"] is None and empty["total"] == 0 and empty["avg_steps_correct"] is None
    test_split = summarize([_record(i, 1, "x", None) for i in range(3)], elapsed_s=1).to_dict()
    assert test_split["exact_match_rate"] is None and test_split["unscored"] == 3
    assert test_split["level_metrics"]["1"] == {"total": 3, "scored": 0, "correct": 0, "accuracy": None}


def _png_size(path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


def test_write_report_files(records, tmp_path):
    summary = summarize(records, elapsed_s=3.2, meta={"model": "gpt-test"})
    report = write_report(records, summary, tmp_path / "run")
    assert report == tmp_path / "run" / "report.md"
    chart = tmp_path / "run" / "accuracy.png"
    width, height = _png_size(chart)
    assert width > 100 and height > 100
    text = report.read_text()
    assert "](accuracy.png)" in text
    for heading in ("## Overview", "## Accuracy by level", "## Drop rates", "## Failure categories", "## Tasks",
                    "## Recommendations"):
        assert heading in text
    assert "57.1%" in text and "gpt-test" in text
    assert "| task-007 | 3 |" in text and "error: timeout" in text
    assert "wrong format" in text  # the format-only recommendation


def test_report_escapes_pipes_and_newlines(tmp_path):
    rec = _record(1, 1, "a|b\nc", "abc")
    text = write_report([rec], summarize([rec], elapsed_s=0), tmp_path).read_text()
    assert "a\\|b c" in text


def test_the_chart_title_names_the_scorer_that_ran(tmp_path):
    records = [_record(1, 1, "4", "4"), _record(2, 1, "4 apples", "4")]
    official = summarize(records, elapsed_s=0, meta={"scorer": "official"})
    lenient = summarize(records, elapsed_s=0, meta={"scorer": "lenient"})
    assert chart_title(official) == "GAIA exact match: 50.0%"
    lenient.exact_match_rate = 1.0  # what the lenient scorer's verdicts would give
    assert chart_title(lenient) == "GAIA correct (lenient scorer): 100.0%"
    assert _png_size(plot_accuracy(lenient, tmp_path / "lenient.png"))[0] > 0


def test_chart_without_scored_tasks(tmp_path):
    path = plot_accuracy(summarize([_record(1, 1, "x", None)], elapsed_s=0), tmp_path / "c.png")
    assert _png_size(path)[0] > 0


def test_recommendations_follow_the_numbers(records):
    tips = recommendations(summarize(records, elapsed_s=0))
    assert any("wrong format" in t for t in tips)
    assert any("endpoint errors" in t for t in tips)
    assert any("level 1 to 3" in t for t in tips)
    assert recommendations(summarize([_record(1, 1, "4", "4")], elapsed_s=0)) == []


def test_report_task_ids_are_unique_prefixes_not_cut_to_eight(tmp_path):
    from evaluation.report import short_ids

    ids = ["c61d22de-5f6c-4958-a7f6-5e9707bd3466", "c61d22de-aaaa-4958-a7f6-5e9707bd3466", "17b5a6a3-bc87-42e8"]
    assert short_ids(ids) == {ids[0]: "c61d22de-5", ids[1]: "c61d22de-a", ids[2]: "17b5a6a3"}
    assert short_ids(["abcdefgh12", "abcdefgh1234"]) == {"abcdefgh12": "abcdefgh12", "abcdefgh1234": "abcdefgh123"}
    records = [TaskRecord(task_id=t, question="q", predicted="1") for t in ids]
    text = write_report(records, summarize(records, elapsed_s=1.0), tmp_path).read_text()
    assert "| c61d22de-5 |" in text and "| c61d22de-a |" in text and "| 17b5a6a3 |" in text


def test_the_report_opens_with_the_score_and_keeps_settings_readable_at_the_end(records, tmp_path):
    meta = {"model": "gpt-test", "run_config": {"split": "validation", "concurrency": 2}, "task_ids": ["a", "b"]}
    text = write_report(records, summarize(records, elapsed_s=3.2, meta=meta), tmp_path / "run").read_text()
    first = text.split("## Overview", 1)[1].strip().splitlines()[0]
    assert first.startswith("- **Exact match") and "57.1%" in first
    settings = text.split("## Run settings", 1)[1]
    assert "split=validation, concurrency=2" in settings and "{" not in settings and "a, b" in settings
    assert "❌ wrong" in text.split("## Tasks", 1)[1]
