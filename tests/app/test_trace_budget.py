"""Budget steps in the Debug trace: masking (how many, tokens before/after), the token budget, a call's cost."""

from __future__ import annotations

from agent.events import ContextMasked, ModelCall, TokenBudgetExhausted
from config import load_settings
from evaluation.run_summary import RunSummary
from ui.run_fields import cost_line, run_iterations
from ui.trace_view import render_trace


def test_a_masking_step_says_how_many_and_the_tokens_before_and_after():
    msgs = render_trace([ContextMasked(masked=3, total_masked=5, tokens_before=12_000, tokens_after=7_000,
                                       window=16_384, window_source="vllm_models", paths=["/w/masked/001-x.txt"])])
    assert msgs[0].metadata["title"] == "🗜️ Context masked: 3 observation(s)"
    assert "~12,000 → ~7,000" in msgs[0].content and "16,384" in msgs[0].content
    assert "/w/masked/001-x.txt" in msgs[0].content


def test_the_token_budget_and_a_priced_call_are_shown():
    msgs = render_trace([ModelCall(iteration=1, model="m", latency_s=0.1, prompt_tokens=1000, completion_tokens=10,
                                   cost_usd=0.0025),
                         TokenBudgetExhausted(tokens_used=5100, limit=5000)])
    assert msgs[0].metadata["title"].endswith("$0.0025")
    assert "5,100 of 5,000" in msgs[1].metadata["title"]


def test_the_tabs_iteration_field_is_clamped_and_the_cost_line_reads_the_summary():
    settings = load_settings(MAX_ITERATIONS=10)
    assert run_iterations(40, settings) == 40 and run_iterations(10**6, settings) == 50
    assert run_iterations(0, settings) == 1 and run_iterations(None, settings) is None
    assert cost_line(RunSummary(cost_usd={"total": 0.0})) == ""
    assert cost_line(RunSummary(cost_usd={"total": 0.5, "per_task": 0.1}, meta={"cost_usd": 0.7})) == \
        "Cost: $0.7000 ($0.1000 per task)"
