"""The Batch and Debug tabs choose their scorer from SCORERS: the form validates it, the run and the verdict use it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent.pipeline import Pipeline
from config import load_settings
from evaluation.dataset import Sample
from rag.types import EmptyKnowledgeBase
from tests.support.fake_model import ScriptedChatModel, ai
from tests.support.gaia_fixture import make_gaia_folder
from tools.core.registry import ToolRegistry
from ui import batch
from ui.background import BatchControl
from ui.debug import ask_stream
from ui.runtime import Loaded, Runtime


def _runtime(script: list[Any], **overrides: Any) -> Runtime:
    settings = load_settings(OPENAI_API_KEY="sk-test", RAG_ENABLED=False, **overrides)
    pipeline = Pipeline(settings, llm=ScriptedChatModel(script=list(script)), registry=ToolRegistry(),
                        knowledge_base=EmptyKnowledgeBase())
    runtime = Runtime(settings, loader=lambda s: Loaded(pipeline=pipeline, registry=pipeline.registry))
    runtime.start()
    return runtime


def test_the_form_takes_a_known_scorer_and_refuses_others() -> None:
    form = ("Local GAIA folder", "validation", "/data", "All", 0, "", 1, 0, True, "")
    assert batch.make_request(*form).scorer == "official"
    assert batch.make_request(*form, "lenient").scorer == "lenient"
    with pytest.raises(batch.FormError, match="Scorer must be one of official, lenient"):
        batch.make_request(*form, "judge")
    assert [value for _label, value in batch.SCORER_CHOICES] == ["official", "lenient"]


def test_a_debug_verdict_comes_from_the_chosen_scorer() -> None:
    task = Sample(task_id="t-1", question="Name them in order.", level=1, final_answer="a, b")
    for scorer, mark in (("official", "❌ **Wrong**"), ("lenient", "✅ **Correct**")):
        runtime = _runtime([ai("FINAL ANSWER: b, a")])
        *_, (messages, answer, verdict, _trace) = ask_stream(runtime, task.question, task=task, scorer=scorer)
        assert answer == "b, a" and verdict.startswith(mark) and f"scorer: {scorer}" in verdict
        assert messages[-1].content == verdict


def test_an_unknown_debug_scorer_is_refused_before_any_model_call() -> None:
    runtime = _runtime([])
    (messages, answer, verdict, trace), = ask_stream(runtime, "q?", scorer="judge")
    assert "Unknown scorer" in str(messages[-1].content) and trace is None


def test_a_batch_run_is_scored_and_recorded_with_the_forms_scorer(tmp_path: Path) -> None:
    gaia = make_gaia_folder(tmp_path / "gaia")
    runtime = _runtime([ai("FINAL ANSWER: 4")], OUTPUT_DIR=tmp_path / "runs")
    req = batch.make_request("Local GAIA folder", "validation", str(gaia), "All", 1, "", 1, 0, False, "", "lenient")
    *_, last = batch.run_stream(runtime, req, BatchControl())
    assert last.status.startswith("🏁"), last.status
    (run_json,) = Path(tmp_path / "runs").glob("*/run.json")
    assert json.loads(run_json.read_text())["scorer"] == "lenient"
    assert "(lenient scorer)" in (run_json.parent / "report.md").read_text()
    assert "**Correct (lenient scorer) " in last.status and "Exact match" not in last.status  # the summary line


def test_the_attempts_field_is_clamped_and_a_voted_batch_shows_pass_at_k(tmp_path: Path) -> None:
    from ui.run_fields import run_attempts

    settings = load_settings()
    assert [run_attempts(v, settings) for v in (3, 0, 99, "", None, "2.0")] == [3, 1, 5, None, None, 2]
    runtime = _runtime([ai("FINAL ANSWER: 5"), ai("FINAL ANSWER: 4"), ai("FINAL ANSWER: 4")],
                       OUTPUT_DIR=tmp_path / "runs", ANSWER_CHECK="off")
    req = batch.make_request("Local GAIA folder", "validation", str(make_gaia_folder(tmp_path / "gaia")), "All", 1,
                             "", 1, 0, False, "", "official", None, None, 3)
    assert req.attempts == 3
    *_, last = batch.run_stream(runtime, req, BatchControl())
    assert last.status.startswith("🏁"), last.status
    assert "pass@1 0.0%, pass@3 100.0%, majority 100.0%" in last.status  # 5, 4, 4: the vote is 4, right
    (details,) = Path(tmp_path / "runs").glob("*/details.jsonl")
    (record,) = [json.loads(line) for line in details.read_text().splitlines()]
    assert record["attempts"] == ["5", "4", "4"] and record["predicted"] == "4"
