"""The seed's API: GAIAEvaluator.evaluate / export_to_gaia_format and GAIAEvaluationTool.run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent.pipeline import Pipeline
from config import load_settings
from evaluation.dataset import GAIADataset
from evaluation.seed_api import GAIAEvaluationTool, GAIAEvaluator, TextAgentAdapter
from tests.evaluation.test_runner import solve_with_tool
from tests.support.gaia_fixture import FIXTURE_TASKS, answer_for, make_gaia_folder
from tests.support.openai_server import ScriptedOpenAI


class LookupAgent:
    """A `.run(prompt) -> str` agent in the seed's style: answers the fixture questions it knows."""

    def __init__(self, fail_on: str | None = None) -> None:
        self.prompts: list[str] = []
        self.fail_on = fail_on

    def run(self, prompt: str) -> str:
        self.prompts.append(prompt)
        if self.fail_on and self.fail_on in prompt:
            raise RuntimeError("agent crashed")
        return f"Let me think.\nFINAL ANSWER: {answer_for(prompt)}"


@pytest.fixture
def settings(tmp_path):
    return load_settings(OUTPUT_DIR=tmp_path / "runs", RAG_ENABLED=False)


@pytest.fixture
def dataset(tmp_path, settings):
    return GAIADataset(split="validation", local_data_dir=make_gaia_folder(tmp_path / "gaia"), settings=settings)


def test_evaluate_a_run_agent_and_export(dataset, settings, tmp_path):
    agent = LookupAgent()
    evaluator = GAIAEvaluator(dataset=dataset, settings=settings)
    results = evaluator.evaluate(agent, max_samples=4)
    assert results["accuracy"] == 1.0 and results["total"] == 4 and len(results["results"]) == 4
    assert any("The task comes with the file" in p and p.rstrip().endswith(".xlsx.") for p in agent.prompts)
    path = evaluator.export_to_gaia_format(results, tmp_path / "export.jsonl", include_reasoning=True)
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    assert [line["model_answer"] for line in lines] == [t.answer for t in FIXTURE_TASKS[:4]]
    assert all("reasoning_trace" in line for line in lines)
    bare = evaluator.export_to_gaia_format(results, tmp_path / "bare.jsonl", include_reasoning=False)
    assert all(set(json.loads(x)) == {"task_id", "model_answer"} for x in bare.read_text().splitlines())


def test_level_filter_and_a_crashing_agent_is_recorded(dataset, settings):
    agent = LookupAgent(fail_on="capital")
    results = GAIAEvaluator(dataset=dataset, level=3, settings=settings).evaluate(agent)
    by_q = {r["question"]: r for r in results["results"]}
    assert len(by_q) == 2 and all(r["level"] == 3 for r in by_q.values())
    crashed = by_q["What is the capital city of France?"]
    assert crashed["error"] == "RuntimeError: agent crashed" and crashed["correct"] is False
    assert crashed["failure_category"] == "llm_error"


def test_a_plain_callable_is_an_agent_too(dataset, settings):
    results = GAIAEvaluator(dataset=dataset, level=1, settings=settings).evaluate(
        lambda p: f"FINAL ANSWER: {answer_for(p)}")
    assert results["correct"] == 2


def test_non_agents_are_refused():
    with pytest.raises(TypeError, match="run"):
        TextAgentAdapter(42)


def test_our_pipeline_through_the_seed_api_and_the_tool(tmp_path):
    root = make_gaia_folder(tmp_path / "gaia")
    with ScriptedOpenAI(solve_with_tool, latency=0.02) as srv:
        settings = load_settings(OPENAI_BASE_URL=srv.url, OPENAI_API_KEY="sk-test", RAG_ENABLED=False,
                                 OUTPUT_DIR=tmp_path / "runs", BATCH_QUESTION_DELAY=0)
        pipeline = Pipeline(settings)
        results = GAIAEvaluator(dataset=GAIADataset(local_data_dir=root, settings=settings), settings=settings,
                                concurrency=3).evaluate(pipeline, max_samples=3)
        assert results["correct"] == 3 and results["results"][0]["tools_used"] == ["calculator"]
        out = GAIAEvaluationTool(settings, local_data_dir=root).run(agent=pipeline, level=2, max_samples=1,
                                                                     export_results=True, generate_report=True)
    assert out["accuracy"] == 1.0 and out["total"] == 1
    assert json.loads(Path(out["results_path"]).read_text())["model_answer"] == "42"
    assert "# GAIA evaluation report" in out["report"] and out["report_path"].endswith("report.md")


def test_tool_flags_choose_what_is_returned(tmp_path, settings):
    root = make_gaia_folder(tmp_path / "gaia")
    out = GAIAEvaluationTool(settings, local_data_dir=root).run(agent=LookupAgent(), max_samples=2,
                                                                export_results=False, generate_report=False)
    assert "results_path" not in out and "report" not in out and out["correct"] == 2


def test_package_exports_every_public_name_and_stays_light_to_import():
    import subprocess
    import sys
    from pathlib import Path

    import evaluation

    for name in evaluation.__all__:
        assert getattr(evaluation, name) is not None, name
    with pytest.raises(AttributeError):
        evaluation.nothing_here  # noqa: B018
    root = Path(__file__).resolve().parents[2]
    code = "import sys, evaluation.records; print(sorted(m for m in ('matplotlib', 'pandas') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
