"""A long task on a 16k window, with every active tool and the real fetch_webpage, through the real client.

The scripted server (tests/support/openai_server.py) refuses, as vLLM and OpenAI do, any request whose prompt
plus `max_tokens` passes its window. The agent follows a chain of 32 pages of ~9,000 characters on a loopback
site, each naming the next page's address only in its text: the task is solved only if the newest
observation always reaches the model whole (issue 33: with the old masking it ended after 2 pages).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from agent.events import ContextMasked, ModelCall, TokenBudgetExhausted, ToolCall, ToolsetChosen
from agent.pipeline import Pipeline
from config import load_settings
from tests.support.openai_server import Reply, ScriptedOpenAI, call, first_user_text, say, tool_results
from tests.support.web_server import LocalWebServer
from tests.support.web_server import Reply as WebReply
from tools.core.registry import build_registry

pytestmark = pytest.mark.integration

PAGES = 32
WINDOW = 16_384
PROSE = ("The ledger of the harbour office records another day of ships, cargoes and tides, none of which "
         "matters for the question at hand. ")
NEXT = re.compile(r"next page: (http://\S+?/chain/\d+)")
START = re.compile(r"from (http://\S+/chain/0)")
CODE = re.compile(r"The code is (\d+)\.")


def page(n: int, base: str) -> WebReply:
    """Page n: ~9,000 characters, the next address in the middle of its text (the last page holds the code)."""
    filler = PROSE * 36  # ~4,500 characters
    link = f"The next page: {base}/chain/{n + 1} (keep reading)." if n + 1 < PAGES else "The code is 7314."
    body = f"<html><body><h1>Ledger {n}</h1><p>{filler}</p><p>{link}</p><p>{filler}</p></body></html>"
    return WebReply(200, body, "text/html; charset=utf-8")


@pytest.fixture(scope="module")
def site():
    with LocalWebServer({}) as server:
        base = server.url("").rstrip("/")
        server.routes.update({f"/chain/{n}": page(n, base) for n in range(PAGES)})
        yield server


def chain_script(body: dict) -> Reply:
    """Follow the address the newest page names; answer the code on the last page."""
    results = tool_results(body)
    if not results and (start := START.search(first_user_text(body))):
        return call("fetch_webpage", url=start.group(1))
    if found := CODE.search(results[-1]):
        return say(f"FINAL ANSWER: {found.group(1)}")
    if (nxt := NEXT.search(results[-1])) and body.get("tools"):
        return call("fetch_webpage", url=nxt.group(1))
    return say("FINAL ANSWER: lost the chain")


def pipeline_for(srv: ScriptedOpenAI, site: LocalWebServer, tmp_path: Path, **overrides) -> Pipeline:
    settings = load_settings(OPENAI_BASE_URL=srv.url, OPENAI_API_KEY="sk-test", RAG_ENABLED=False,
                             MODEL_NAME="scripted", LLM_MAX_TOKENS=1024, WORKSPACE_DIR=tmp_path / "work",
                             FETCH_ALLOWED_HOSTS=site.host_port, **overrides)
    return Pipeline(settings, registry=build_registry(settings))


@pytest.mark.parametrize("case", ["max_model_len", "overflow", "configured"])
def test_a_32_page_chain_completes_on_a_16k_window(site, tmp_path, case):
    window_in = "models" if case == "max_model_len" else None
    extra = {"LLM_CONTEXT_TOKENS": 16_000} if case == "configured" else {}
    with ScriptedOpenAI(chain_script, context_limit=WINDOW, window_in=window_in) as srv:
        pipe = pipeline_for(srv, site, tmp_path, **extra)
        sol = pipe.solve(f"Follow the ledger chain from {site.url('/chain/0')} and give the code.",
                         max_iterations=40)
        overflows, bodies = srv.overflows, [r.body for r in srv.requests]
    assert sol.error is None and sol.answer == "7314", sol.error
    fetched = [e.args["url"] for e in sol.events if isinstance(e, ToolCall) and e.name == "fetch_webpage"]
    assert fetched == [site.url(f"/chain/{n}") for n in range(PAGES)]
    assert overflows == (1 if case == "overflow" else 0)
    masked = [e for e in sol.events if isinstance(e, ContextMasked)]
    assert masked and sum(e.masked for e in masked) >= PAGES // 2 and not any(e.cut for e in masked)
    last = bodies[-1]["messages"]
    assert last[-1]["role"] == "tool" and "The code is 7314." in last[-1]["content"]  # the newest stays whole
    chosen = [e for e in sol.events if isinstance(e, ToolsetChosen)]
    offered = [len(b.get("tools") or []) for b in bodies]
    active = len(pipe.registry.tools)
    if case == "overflow":  # the window was learnt mid-run: the run keeps every tool
        assert not chosen and max(offered) == active
    else:  # a 16k window known at the start: only the research set (no browser, no media readers)
        assert len(chosen) == 1 and chosen[0].name == "research" and "fetch_webpage" in chosen[0].tools
        assert not any(t.startswith("browser_") for t in chosen[0].tools) and "read_file" in chosen[0].tools
        assert max(offered) == len(chosen[0].tools) < active


def test_a_30_fetch_task_ends_at_the_token_budget_with_one_tool_less_request(site, tmp_path):
    with ScriptedOpenAI(chain_script, context_limit=WINDOW, window_in="models") as srv:
        sol = pipeline_for(srv, site, tmp_path, MAX_TOKENS_PER_TASK=60_000).solve(
            f"Follow the ledger chain from {site.url('/chain/0')} and give the code.", max_iterations=40)
        bodies, overflows = [r.body for r in srv.requests], srv.overflows
    assert sol.budget_exhausted and overflows == 0 and sol.error is None and not sol.hit_iteration_cap
    calls = [e for e in sol.events if isinstance(e, ModelCall)]
    stop = next(i for i, e in enumerate(sol.events) if isinstance(e, TokenBudgetExhausted))
    assert not any(isinstance(e, ToolCall) for e in sol.events[stop:])
    assert calls[-1].final and sum(1 for c in calls if c.final) == 1
    assert not bodies[-1].get("tools") and all(b.get("tools") for b in bodies[:-1])  # one tool-less request
    loop = [c.prompt_tokens + c.completion_tokens for c in calls[:-1]]
    assert sum(loop[:-1]) <= 60_000 < sum(loop)  # the budget, not the window, ended it: checked after each call
    assert 3 <= sum(1 for e in sol.events if isinstance(e, ToolCall)) < PAGES
