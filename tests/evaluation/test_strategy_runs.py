"""The run's strategy: recorded in run.json and every details record, shown by compare, never mixed on resume."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent.pipeline import Pipeline
from config import load_settings
from evaluation.compare import compare_runs
from evaluation.dataset import load_split
from evaluation.runner import RunConfig, RunError, run_batch
from tests.support.gaia_fixture import answer_for, make_gaia_folder
from tests.support.openai_server import Reply, ScriptedOpenAI, first_user_text, say
from tests.support.team_script import LEDGER_TEXT, TeamScript, kind_of, role_of
from tools.compute.calculator import make_calculator_tools
from tools.core.registry import build_registry

pytestmark = pytest.mark.integration


def _answer(body: dict[str, Any]) -> Reply:
    return say(f"FINAL ANSWER: {answer_for(first_user_text(body))}")


def _orchestrator(body: dict[str, Any]) -> Reply:
    return say(LEDGER_TEXT) if kind_of(body) == "ledger" else _answer(body)


def test_strategy_is_recorded_compared_and_never_mixed(tmp_path: Path) -> None:
    samples = list(load_split("validation", data_dir=make_gaia_folder(tmp_path / "gaia")))[:2]
    script = TeamScript({"orchestrator": _orchestrator, "other": _answer})
    with ScriptedOpenAI(script) as srv:
        settings = load_settings(OPENAI_BASE_URL=srv.url, OPENAI_API_KEY="sk-test", RAG_ENABLED=False,
                                 BATCH_QUESTION_DELAY=0, RATE_LIMIT_RETRY_BASE_DELAY=0.01)
        pipeline = Pipeline(settings, registry=build_registry(settings, [("base", make_calculator_tools)]))
        react = run_batch(samples, pipeline, RunConfig(output_dir=tmp_path / "react"), settings)
        team = run_batch(samples, pipeline, RunConfig(output_dir=tmp_path / "team", strategy="team"), settings)
        with pytest.raises(RunError, match="solved with the 'team' strategy: resume it with --strategy team"):
            run_batch(samples, pipeline, RunConfig(output_dir=tmp_path / "team", resume=True, strategy="react"),
                      settings)
        resumed = run_batch(samples, pipeline, RunConfig(output_dir=tmp_path / "team", resume=True), settings)
    assert {role_of(r.body) for r in srv.requests} == {"orchestrator", "other"}
    for result, strategy in ((react, "react"), (team, "team"), (resumed, "team")):
        assert all(r.correct for r in result.records)
        details = [json.loads(line) for line in (result.output_dir / "details.jsonl").read_text().splitlines()]
        assert [d["strategy"] for d in details] == [strategy] * len(samples)
        assert json.loads((result.output_dir / "run.json").read_text())["strategy"] == strategy
        assert json.loads((result.output_dir / "summary.json").read_text()).get("strategy", strategy) == strategy
    comparison = compare_runs(react.output_dir, team.output_dir)
    assert (comparison.a_strategy, comparison.b_strategy) == ("react", "team")
    assert "- strategy: A react, B team" in comparison.to_markdown()
    assert comparison.to_dict()["b_strategy"] == "team"
