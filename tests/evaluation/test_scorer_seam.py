"""The scorer seam: records hold a Score; one SCORERS map; the scorer named in run.json, the report and the CLI.

A resumed folder never mixes two scorers' verdicts; older folders read as the official scorer's.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage

from agent.pipeline import Pipeline
from config import load_settings
from evaluation.__main__ import build_parser
from evaluation.dataset import Sample
from evaluation.records import TaskRecord
from evaluation.runner import RunConfig, RunError, RunResult, run_batch
from evaluation.scorer import SCORERS, Score, lenient_scorer, official_scorer, scorer_label
from rag.types import EmptyKnowledgeBase
from tests.support.fake_model import ScriptedChatModel, ai
from tools.core.registry import ToolRegistry

# Each task's question names the answer the scripted model gives; the truth is the answer in another order.
SAMPLES = [Sample(task_id=f"seam-{i}", question=f"List them: say {said}", level=1, final_answer=truth)
           for i, (said, truth) in enumerate([("b, a", "a, b"), ("4", "4"), ("y, x", "x, y")])]


def _answer(messages: list[BaseMessage]) -> AIMessage:
    text = str(messages[-1].content)
    return ai(f"FINAL ANSWER: {text.split('say ', 1)[1].splitlines()[0]}")


def _pipeline(tasks: int) -> Pipeline:
    settings = load_settings(RAG_ENABLED=False)
    model = ScriptedChatModel(script=[_answer] * tasks)
    return Pipeline(settings, llm=model, registry=ToolRegistry(), knowledge_base=EmptyKnowledgeBase())


def _run(samples: list[Sample], out: Path, **config: Any) -> RunResult:
    return run_batch(samples, _pipeline(len(samples)), RunConfig(concurrency=1, question_delay=0, output_dir=out,
                                                                **config), load_settings(RAG_ENABLED=False))


def test_every_scorer_is_named_as_its_scores_say_and_has_a_label() -> None:
    assert list(SCORERS) == ["official", "lenient"]
    for name, scorer in SCORERS.items():
        assert scorer("b, a", "a, b").scorer == name and scorer_label(name).startswith(name)


def test_the_lenient_scorer_counts_a_format_only_miss_and_keeps_the_official_view() -> None:
    official, lenient = official_scorer("b, a", "a, b"), lenient_scorer("b, a", "a, b")
    assert not official.correct and official.format_only_miss
    assert lenient.correct and not lenient.format_only_miss and lenient.explanation == official.explanation
    assert not lenient_scorer("London", "Paris").correct


def test_a_lenient_run_is_named_in_run_json_records_summary_and_report(tmp_path: Path) -> None:
    result = _run(SAMPLES, tmp_path / "run", scorer="lenient")
    assert [r.correct for r in result.records] == [True, True, True]
    assert all(isinstance(r.score, Score) and r.score.scorer == "lenient" for r in result.records)
    assert json.loads((tmp_path / "run" / "run.json").read_text())["scorer"] == "lenient"
    assert result.summary.meta["scorer"] == "lenient"
    report = (tmp_path / "run" / "report.md").read_text()
    assert "**Correct (lenient scorer)**: 100.0%" in report and "official scorer" not in report


def test_the_default_run_is_the_official_scorers(tmp_path: Path) -> None:
    result = _run(SAMPLES, tmp_path / "run")
    assert [r.correct for r in result.records] == [False, True, False]
    assert [r.failure_category for r in result.records] == ["format_only_miss", "correct", "format_only_miss"]
    assert json.loads((tmp_path / "run" / "run.json").read_text())["scorer"] == "official"
    assert "**Exact match (official scorer)**: 33.3%" in (tmp_path / "run" / "report.md").read_text()


def test_resume_refuses_another_scorer_and_keeps_the_folders_own(tmp_path: Path) -> None:
    out = tmp_path / "run"
    _run(SAMPLES[:1], out, scorer="lenient")
    with pytest.raises(RunError, match="scored with the 'lenient' scorer.*--scorer lenient"):
        _run(SAMPLES, out, resume=True, scorer="official")
    resumed = _run(SAMPLES, out, resume=True)  # no scorer asked: the folder's own
    assert {r.score.scorer for r in resumed.records if r.score} == {"lenient"} and len(resumed.records) == 3
    assert resumed.summary.meta["scorer"] == "lenient"


def test_an_unknown_scorer_is_refused_with_the_choices(tmp_path: Path) -> None:
    with pytest.raises(RunError, match="unknown scorer 'judge'.*official, lenient"):
        _run(SAMPLES[:1], tmp_path / "run", scorer="judge")


def test_a_folder_from_before_the_scorer_was_recorded_resumes_as_the_official_scorers(tmp_path: Path) -> None:
    out = tmp_path / "old"
    _run(SAMPLES[:1], out)
    info = json.loads((out / "run.json").read_text())
    del info["scorer"]
    (out / "run.json").write_text(json.dumps(info))
    line = json.loads((out / "checkpoint.jsonl").read_text().splitlines()[0])
    del line["explanation"]["scorer"]  # an older record's bare explanation
    (out / "checkpoint.jsonl").write_text(json.dumps(line) + "\n")
    with pytest.raises(RunError, match="'official' scorer"):
        _run(SAMPLES, out, resume=True, scorer="lenient")
    resumed = _run(SAMPLES, out, resume=True, scorer="official")
    old = resumed.records[0]
    assert old.score is not None and old.score.scorer == "official" and old.score.format_only_miss
    assert old.score.explanation is not None and old.score.explanation.rule == "list"


def test_a_record_stores_its_score_as_the_explanation_dict_and_reads_it_back() -> None:
    record = TaskRecord(task_id="t", question="q", expected="a, b", predicted="b, a",
                        score=lenient_scorer("b, a", "a, b"))
    data = record.to_dict()
    assert data["correct"] is True and data["explanation"]["scorer"] == "lenient" and "score" not in data
    assert list(data).index("explanation") == list(data).index("correct") + 1  # the field's old place
    again = TaskRecord.from_dict(json.loads(json.dumps(data)))
    assert again.score == record.score and again.correct is True
    unscored = TaskRecord.from_dict(TaskRecord(task_id="u", question="q").to_dict())
    assert unscored.score is None and unscored.correct is None and unscored.to_dict()["explanation"] == {}
    plain = TaskRecord(task_id="p", question="q", correct=False)  # a verdict without its scorer's view
    assert plain.score == Score(False) and plain.score.scorer == "official"


def test_the_cli_offers_every_scorer_and_nothing_else(capsys: pytest.CaptureFixture[str]) -> None:
    args = build_parser().parse_args(["run", "--scorer", "lenient"])
    assert args.scorer == "lenient" and build_parser().parse_args(["run"]).scorer is None
    with pytest.raises(SystemExit):
        build_parser().parse_args(["run", "--scorer", "judge"])
    assert "invalid choice" in capsys.readouterr().err
