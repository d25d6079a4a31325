"""Long runs within the model's window, a token budget per task, cost: the real client against the scripted server.

The server refuses (HTTP 400 `context_length_exceeded`, OpenAI's shape) any request whose prompt plus its
`max_tokens` passes its window, as vLLM and OpenAI do.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from langchain_core.tools import tool

from agent.events import ContextMasked, ErrorEvent, ModelCall, TokenBudgetExhausted, ToolCall
from agent.pipeline import Pipeline
from config import load_settings
from tests.support.openai_server import Reply, ScriptedOpenAI, call, say, tool_results
from tools.core.registry import ToolRegistry
from tools.documents.files import make_file_tools

pytestmark = pytest.mark.integration

WINDOW = 16_384
FILLER = "The archive lists another shelf of ledgers, none of them relevant to the question. " * 24
"""About 2,000 characters (~500 tokens) per page read, like a real page of text."""
STUB_CALL = re.compile(r'read_file\("([^"]+)"\)')


@tool
def read_page(n: int) -> str:
    """Read page `n` of the archive.

    Args:
        n: The page number, from 0.
    """
    if n == 0:
        return f"Page 0: the ledger index.\n{FILLER}\nThe code of the vault is 4821.\n{FILLER}"
    return f"Page {n}: more ledgers.\n{FILLER}"


def pipeline_for(srv: ScriptedOpenAI, tmp_path: Path, **overrides) -> Pipeline:
    settings = load_settings(OPENAI_BASE_URL=srv.url, OPENAI_API_KEY="sk-test", RAG_ENABLED=False,
                             MODEL_NAME="scripted", LLM_MAX_TOKENS=1024, WORKSPACE_DIR=tmp_path / "work",
                             **overrides)
    tools = [read_page, *make_file_tools(settings)]
    return Pipeline(settings, registry=ToolRegistry(tools=tools))


def pages_script(steps: int):
    """Read pages 0..steps-1, one per turn, then answer."""
    def script(body: dict) -> Reply:
        done = len(tool_results(body))
        if done < steps and body.get("tools"):
            return call("read_page", n=done)
        return say(f"FINAL ANSWER: read {done} pages")
    return script


@pytest.mark.parametrize("window_in", ["models", "props", None])
def test_a_32_step_task_completes_under_a_16k_window(tmp_path, window_in):
    with ScriptedOpenAI(pages_script(32), context_limit=WINDOW, window_in=window_in) as srv:
        sol = pipeline_for(srv, tmp_path).solve("Read the 32 pages of the archive.", max_iterations=40)
        overflows, bodies = srv.overflows, [r.body for r in srv.requests]
    assert sol.error is None and sol.answer == "read 32 pages"
    assert sol.steps == 33 and not sol.hit_iteration_cap
    masked = [e for e in sol.events if isinstance(e, ContextMasked)]
    assert masked and all(e.tokens_after < e.tokens_before for e in masked)
    expected_source = {"models": "vllm_models", "props": "llamacpp_props", None: "overflow_error"}[window_in]
    assert masked[-1].window == WINDOW and masked[-1].window_source == expected_source
    # The server states its window only in the error: one overflow, then every request fits.
    assert overflows == (1 if window_in is None else 0)
    last = bodies[-1]["messages"]
    calls = [c["id"] for m in last if m["role"] == "assistant" for c in m.get("tool_calls") or []]
    answered = [m["tool_call_id"] for m in last if m["role"] == "tool"]
    assert calls == answered and len(answered) == 32  # every tool message kept: call/result pairing holds
    stubs = [m["content"] for m in last if m["role"] == "tool" and STUB_CALL.search(m["content"])]
    assert stubs and last[-1]["role"] == "tool" and not STUB_CALL.search(last[-1]["content"])  # newest stay whole
    assert stubs[0].startswith("Page 0: the ledger index.")  # the stub keeps the observation's first line


def test_an_answer_in_an_early_masked_observation_is_read_back(tmp_path):
    def script(body: dict) -> Reply:
        results = tool_results(body)
        if len(results) < 24:  # a model that reads on and only then looks back for the code
            return call("read_page", n=len(results))
        if any("The code of the vault is 4821" in r for r in results):
            return say("FINAL ANSWER: 4821")
        stub = next((m for r in results if (m := STUB_CALL.search(r))), None)
        return call("read_file", path=stub.group(1)) if stub else say("FINAL ANSWER: unknown")

    with ScriptedOpenAI(script, context_limit=WINDOW, window_in="models") as srv:
        sol = pipeline_for(srv, tmp_path).solve("What is the code of the vault?", max_iterations=30)
        first_stub = next(STUB_CALL.search(r) for r in tool_results(srv.requests[-2].body) if STUB_CALL.search(r))
    assert sol.answer == "4821" and sol.error is None
    reads = [e for e in sol.events if isinstance(e, ToolCall) and e.name == "read_file"]
    assert len(reads) == 1 and reads[0].args["path"] == first_stub.group(1)
    assert Path(first_stub.group(1)).is_relative_to((tmp_path / "work").resolve())  # saved in the run's workspace


def test_the_token_budget_ends_the_task_with_a_best_effort_answer(tmp_path):
    def script(body: dict) -> Reply:
        if not body.get("tools"):
            return say("FINAL ANSWER: best effort")
        return call("read_page", n=len(tool_results(body)) + 1)

    with ScriptedOpenAI(script, context_limit=WINDOW, window_in="models") as srv:
        sol = pipeline_for(srv, tmp_path, MAX_TOKENS_PER_TASK=5000).solve("Read forever.", max_iterations=30)
        requests = len(srv.requests)
    assert sol.budget_exhausted and not sol.hit_iteration_cap and sol.answer == "best effort"
    stop = next(i for i, e in enumerate(sol.events) if isinstance(e, TokenBudgetExhausted))
    assert sol.events[stop].limit == 5000 and sol.events[stop].tokens_used > 5000
    assert not any(isinstance(e, ToolCall) for e in sol.events[stop:])  # no tool call once it passed
    calls = [e for e in sol.events if isinstance(e, ModelCall)]
    assert calls[-1].final and len(calls) == requests
    before = sum(c.prompt_tokens + c.completion_tokens for c in calls[:-1])
    assert before - (calls[-2].prompt_tokens + calls[-2].completion_tokens) <= 5000 < before  # checked after each call


def test_cost_per_task_is_tokens_times_prices(tmp_path):
    with ScriptedOpenAI(pages_script(3), context_limit=WINDOW, window_in="models") as srv:
        sol = pipeline_for(srv, tmp_path, LLM_PRICE_INPUT_PER_MTOK=2.5,
                           LLM_PRICE_OUTPUT_PER_MTOK=10).solve("Read three pages.")
    calls = [e for e in sol.events if isinstance(e, ModelCall)]
    assert len(calls) == 4 and all(c.cost_usd == pytest.approx(
        (c.prompt_tokens * 2.5 + c.completion_tokens * 10) / 1e6) for c in calls)
    assert sol.cost_usd == pytest.approx((sol.prompt_tokens * 2.5 + sol.completion_tokens * 10) / 1e6)
    assert sol.cost_usd > 0


def test_an_overflow_masking_cannot_fix_is_permanent_and_asked_once(tmp_path):
    with ScriptedOpenAI([say("FINAL ANSWER: never")], context_limit=2048) as srv:
        sol = pipeline_for(srv, tmp_path, MAX_QUESTION_CHARS=20000).solve("why? " * 3000)
        requests = len(srv.requests)
    error = next(e for e in sol.events if isinstance(e, ErrorEvent))
    assert requests == 1 and error.permanent and sol.error_permanent
    assert "2,048" in error.message and "could not make the request fit" in error.message
