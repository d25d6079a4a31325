"""Batches within budget: a cost cap that resumes to completion, permanent errors asked once, a token cap that ends."""

from __future__ import annotations

import json

import pytest

from agent.pipeline import Pipeline
from bench.batch_throughput import bench_script, make_bench_tool, make_samples, plain_mix
from config import load_settings
from evaluation.__main__ import main
from evaluation.dataset import Sample
from evaluation.runner import RunConfig, run_batch
from tests.evaluation.test_runner import solve_with_tool
from tests.support.gaia_fixture import make_gaia_folder
from tests.support.openai_server import Limits, ScriptedOpenAI, fail, first_user_text
from tools.core.registry import ToolRegistry

pytestmark = pytest.mark.integration

PER_TASK_USD = 2 * (11 + 7) * 1000 / 1e6
"""Two calls per task, 11 prompt + 7 completion tokens each (the server's defaults), at $1000 per million."""


def settings_for(srv: ScriptedOpenAI, tmp_path, **overrides):
    return load_settings(OPENAI_BASE_URL=srv.url, OPENAI_API_KEY="sk-test", RAG_ENABLED=False,
                         RAG_INDEX_DIR=tmp_path / "rag", LLM_PRICE_INPUT_PER_MTOK=1000,
                         LLM_PRICE_OUTPUT_PER_MTOK=1000, **overrides)


def test_a_batch_stopped_by_its_cost_cap_resumes_to_completion(tmp_path):
    plans = plain_mix(6)
    out = tmp_path / "run"
    with ScriptedOpenAI(lambda body: bench_script(body, plans)) as srv:
        settings = settings_for(srv, tmp_path, BATCH_MAX_COST_USD=0.08)
        pipeline = Pipeline(settings, registry=ToolRegistry(tools=[make_bench_tool(plans)]))
        samples = make_samples(plans, tmp_path / "files")
        first = run_batch(samples, pipeline, RunConfig(concurrency=1, question_delay=0, output_dir=out), settings)
        assert first.stopped and len(first.records) == 3  # 0.036, 0.072, then 0.108 >= 0.08: no fourth start
        assert "cost cap reached" in first.summary.meta["stopped_reason"]
        assert first.summary.meta["remaining"] == 3
        assert first.summary.cost_usd["total"] == pytest.approx(3 * PER_TASK_USD)
        asked = len(srv.requests)
        higher = run_batch(samples, pipeline, RunConfig(concurrency=1, question_delay=0, output_dir=out, resume=True,
                                                        max_cost_usd=0.15), settings)
        assert higher.stopped and len(higher.records) == 5  # earlier sessions' cost counts against the new cap
        done = run_batch(samples, pipeline, RunConfig(concurrency=1, question_delay=0, output_dir=out, resume=True,
                                                      max_cost_usd=0), settings)
        total_requests = len(srv.requests)
    assert not done.stopped and len(done.records) == 6 and done.summary.correct == 6
    assert asked == 6 and total_requests == 12  # no task asked twice across the sessions
    run_json = json.loads((out / "run.json").read_text(encoding="utf-8"))
    assert run_json["cost_usd"] == pytest.approx(6 * PER_TASK_USD) and run_json["max_cost_usd"] == 0
    details = [json.loads(line) for line in (out / "details.jsonl").read_text(encoding="utf-8").splitlines()]
    assert all(d["cost_usd"] == pytest.approx(PER_TASK_USD) for d in details)
    assert "Cost (USD)" in (out / "report.md").read_text(encoding="utf-8")


def test_the_cli_stops_a_4_task_batch_at_its_cost_cap_and_resume_finishes_it(monkeypatch, tmp_path, capsys):
    out = tmp_path / "out"
    with ScriptedOpenAI(solve_with_tool) as srv:
        for key, value in {"OPENAI_BASE_URL": srv.url, "OPENAI_API_KEY": "sk-test", "RAG_ENABLED": "false",
                           "BATCH_QUESTION_DELAY": "0", "LLM_PRICE_INPUT_PER_MTOK": "1000",
                           "LLM_PRICE_OUTPUT_PER_MTOK": "1000", "BATCH_MAX_COST_USD": "0.05"}.items():
            monkeypatch.setenv(key, value)
        root = make_gaia_folder(tmp_path / "gaia")
        main(["run", "--data-dir", str(root), "--max-samples", "4", "--concurrency", "1", "--output-dir", str(out)])
        first = json.loads((out / "summary.json").read_text(encoding="utf-8"))
        asked = len(srv.requests)
        capsys.readouterr()
        code = main(["run", "--resume", "--max-cost-usd", "0", "--output-dir", str(out)])
        total_requests = len(srv.requests)
    assert "cost cap reached" in first["meta"]["stopped_reason"] and first["total"] == 2  # 0.036, then 0.072
    assert code == 0, capsys.readouterr().err
    done = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert done["total"] == 4 and done["correct"] == 4 and not done["meta"].get("stopped_reason")
    assert asked == 4 and total_requests == 8  # two requests a task, none asked twice across the sessions


def test_a_refused_request_is_asked_once_per_task_and_not_re_run(tmp_path):
    plans = plain_mix(3)

    def script(body: dict):
        return fail(400) if "Bench task 1:" in first_user_text(body) else bench_script(body, plans)

    with ScriptedOpenAI(script) as srv:
        settings = settings_for(srv, tmp_path, TASK_RETRY_MAX=2)
        pipeline = Pipeline(settings, registry=ToolRegistry(tools=[make_bench_tool(plans)]))
        result = run_batch(make_samples(plans, tmp_path / "files"), pipeline,
                           RunConfig(concurrency=2, output_dir=tmp_path / "o", max_iterations=3), settings)
        refused = [r for r in srv.requests if "Bench task 1:" in first_user_text(r.body)]
    bad = next(r for r in result.records if r.task_id == "bench-001")
    assert len(refused) == 1 and bad.tries == 1 and bad.permanent_error and "400" in (bad.error or "")
    assert result.summary.permanent_errors == 1 and result.summary.correct == 2
    assert json.loads((tmp_path / "o" / "run.json").read_text(encoding="utf-8"))["max_iterations"] == 3


@pytest.mark.timeout(300)  # a stall fails here instead of holding the suite
def test_a_token_capped_batch_with_a_prompt_larger_than_the_cap_ends(tmp_path):
    plans = plain_mix(6)
    limits = Limits(rpm=600, burst=4, tpm=96_000, token_burst_s=2.5, headers=True)  # 4,000 at once, 1,600/s
    with ScriptedOpenAI(lambda body: bench_script(body, plans), latency=0.02, limits=limits) as srv:
        settings = load_settings(OPENAI_BASE_URL=srv.url, OPENAI_API_KEY="sk-test", RAG_ENABLED=False,
                                 RAG_INDEX_DIR=tmp_path / "rag", MAX_QUESTION_CHARS=40_000)
        samples = make_samples(plans, tmp_path / "files")
        big = samples[2]
        samples[2] = Sample(task_id=big.task_id, question=big.question + " Context: " + "ledger " * 3500,
                            level=big.level, final_answer=big.final_answer)  # ~6,000 tokens: over the 4,000
        pipeline = Pipeline(settings, registry=ToolRegistry(tools=[make_bench_tool(plans)]))
        result = run_batch(samples, pipeline, RunConfig(concurrency=3, output_dir=tmp_path / "o"), settings)
    assert len(result.records) == 6 and not result.stopped
    record = next(r for r in result.records if r.task_id == big.task_id)
    assert record.correct or "tokens" in (record.error or "")
    assert result.summary.correct >= 5 and isinstance(result.summary.waited, dict)
