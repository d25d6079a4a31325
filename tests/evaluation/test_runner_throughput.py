"""The runner keeps to a provider's rate limit: no task failed by a 429, the budgets never exceeded.

How close to the ceiling it runs is a time, measured by bench/batch_throughput.py, not asserted here.
"""

from __future__ import annotations

import pytest

from agent.pipeline import Pipeline
from bench.batch_throughput import bench_script, make_bench_tool, make_samples, plain_mix
from config import load_settings
from evaluation.runner import RunConfig, run_batch
from tests.support.openai_server import Limits, ScriptedOpenAI
from tools.core.registry import ToolRegistry

RPM, LATENCY, TASKS = 150.0, 0.05, 8  # 16 requests, one per 0.4 s: the limit, not latency, sets the pace
# The double refills one request per interval with a burst of two, so a request may reach it up to one interval
# late before the next one on time is refused: 0.4 s leaves room for a busy machine's thread scheduling (at 0.2 s a
# CI run beside two CPU burners saw one 429). The limiter's own spacing is asserted with a fake clock elsewhere.


def run(tmp_path, known: bool):
    plans = plain_mix(TASKS)
    with ScriptedOpenAI(lambda body: bench_script(body, plans), latency=LATENCY, limits=Limits(rpm=RPM)) as srv:
        settings = load_settings(OPENAI_BASE_URL=srv.url, OPENAI_API_KEY="sk-test", RAG_ENABLED=False,
                                 RAG_INDEX_DIR=tmp_path / "rag", LLM_REQUESTS_PER_MINUTE=RPM if known else 0)
        result = run_batch(make_samples(plans, tmp_path / "files"),
                           Pipeline(settings, registry=ToolRegistry(tools=[make_bench_tool(plans)])),
                           RunConfig(concurrency=4, output_dir=tmp_path / "o"), settings)
        return result, srv.rate_limited


@pytest.mark.integration
def test_known_rpm_runs_at_the_limit_without_a_single_429(tmp_path):
    result, limited = run(tmp_path, known=True)
    assert limited == 0
    assert result.summary.correct == TASKS and result.summary.errors == 0


@pytest.mark.integration
def test_unknown_rpm_adapts_to_429s_and_fails_no_task(tmp_path):
    result, limited = run(tmp_path, known=False)
    assert limited > 0  # it had to find the limit
    assert result.summary.correct == TASKS and result.summary.errors == 0
    assert all(r.error is None and r.tries == 1 for r in result.records)


def provider_run(tmp_path, plans, limits: Limits, **overrides):
    with ScriptedOpenAI(lambda body: bench_script(body, plans), latency=LATENCY, limits=limits) as srv:
        settings = load_settings(OPENAI_BASE_URL=srv.url, OPENAI_API_KEY="sk-test", RAG_ENABLED=False,
                                 RAG_INDEX_DIR=tmp_path / "rag", **overrides)
        pipeline = Pipeline(settings, registry=ToolRegistry(tools=[make_bench_tool(plans)]))
        result = run_batch(make_samples(plans, tmp_path / "files"), pipeline,
                           RunConfig(concurrency=4, output_dir=tmp_path / "o"), settings)
        return result, srv


@pytest.mark.integration
def test_a_known_token_budget_is_never_exceeded(tmp_path):
    plans = plain_mix(TASKS)
    tpm = 60000.0  # 1000 tokens/s, a request ~500: the token budget, not the request rate, sets the pace
    result, srv = provider_run(tmp_path, plans, Limits(rpm=600, tpm=tpm, token_burst_s=5.0),
                               LLM_TOKENS_PER_MINUTE=tpm)
    assert srv.token_limited == 0, srv.token_limited
    assert result.summary.errors == 0
    counted = sum(t for _, t in srv.admitted_tokens)
    spent = srv.admitted_tokens[-1][0] - srv.admitted_tokens[0][0]
    assert counted <= tpm / 60 * (spent + 5.0) + 1  # never more than the budget's burst plus its refill
    ceiling = result.summary.meta["ceiling"]
    assert ceiling["tokens_fraction"] is not None and ceiling["limiter_wait_s"] > 0


@pytest.mark.integration
def test_header_driven_pacing_fails_no_task_and_reports_the_ceiling(tmp_path):
    plans = plain_mix(TASKS)
    result, srv = provider_run(tmp_path, plans, Limits(rpm=RPM, headers=True))
    assert result.summary.errors == 0 and all(r.tries == 1 for r in result.records)
    meta = result.summary.meta
    assert meta["pacing"] == "headers" and meta["ceiling"]["requests_fraction"] > 0.5
    assert srv.rate_limited <= len(srv.requests) // 3  # the first wave goes before any budget is known; a few more


@pytest.mark.integration
def test_a_run_starts_the_tasks_earlier_runs_found_slow_first(tmp_path):
    plans = plain_mix(6)
    earlier = tmp_path / "validation-20260101-000000"
    earlier.mkdir()
    (earlier / "checkpoint.jsonl").write_text(
        '{"task_id": "bench-004", "latency_s": 90.0}\n{"task_id": "bench-002", "latency_s": 60.0}\n', encoding="utf-8")
    with ScriptedOpenAI(lambda body: bench_script(body, plans), latency=0.01) as srv:
        settings = load_settings(OPENAI_BASE_URL=srv.url, OPENAI_API_KEY="sk-test", RAG_ENABLED=False,
                                 RAG_INDEX_DIR=tmp_path / "rag")
        pipeline = Pipeline(settings, registry=ToolRegistry(tools=[make_bench_tool(plans)]))
        result = run_batch(make_samples(plans, tmp_path / "files"), pipeline,
                           RunConfig(concurrency=2, output_dir=tmp_path / "validation-20260102-000000"), settings)
    first = sorted(result.records, key=lambda r: r.started_at)[:2]
    assert {r.task_id for r in first} == {"bench-004", "bench-002"}
