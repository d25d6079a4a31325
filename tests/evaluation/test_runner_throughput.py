"""The runner keeps pace with a provider's rate limit: near the ceiling, and no task failed by a 429."""

from __future__ import annotations

import pytest

from agent.pipeline import Pipeline
from bench.batch_throughput import bench_script, make_bench_tool, make_samples, plain_mix, request_bound
from config import load_settings
from evaluation.runner import RunConfig, run_batch
from tests.support.openai_server import Limits, ScriptedOpenAI
from tools.registry import ToolRegistry

RPM, LATENCY, TASKS = 300.0, 0.05, 8  # 16 requests, one per 0.2 s: the limit, not latency, sets the pace


def run(tmp_path, known: bool):
    plans = plain_mix(TASKS)
    with ScriptedOpenAI(lambda body: bench_script(body, plans), latency=LATENCY, limits=Limits(rpm=RPM)) as srv:
        settings = load_settings(OPENAI_BASE_URL=srv.url, OPENAI_API_KEY="sk-test", RAG_ENABLED=False,
                                 RAG_INDEX_DIR=tmp_path / "rag", LLM_REQUESTS_PER_MINUTE=RPM if known else 0)
        result = run_batch(make_samples(plans, tmp_path / "files"), Pipeline(settings, registry=ToolRegistry(tools=[make_bench_tool(plans)])), RunConfig(concurrency=4, output_dir=tmp_path / "o"),
                           settings)
        admitted = len(srv.requests) - srv.rate_limited
        return result, srv.rate_limited, request_bound(admitted, RPM, LATENCY)


@pytest.mark.integration
def test_known_rpm_runs_at_the_limit_without_a_single_429(tmp_path):
    result, limited, minimum = run(tmp_path, known=True)
    assert limited == 0
    assert result.summary["correct"] == TASKS and result.summary["errors"] == 0
    assert result.summary["elapsed_s"] <= 1.2 * minimum  # short run: the 2-request burst it forgoes weighs ~7 %


@pytest.mark.integration
def test_unknown_rpm_adapts_to_429s_and_fails_no_task(tmp_path):
    result, limited, minimum = run(tmp_path, known=False)
    assert limited > 0  # it had to find the limit
    assert result.summary["correct"] == TASKS and result.summary["errors"] == 0
    assert all(r.error is None and r.attempts == 1 for r in result.records)
    assert result.summary["elapsed_s"] <= 1.25 * minimum
