"""The team strategy through the real client against the scripted server, roles told apart by the system line."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from agent.events import (
    IterationCap,
    LedgerMade,
    ModelCall,
    ProgressChecked,
    TokenBudgetExhausted,
    ToolResult,
    WorkerReported,
)
from agent.pipeline import Pipeline
from application import Application
from config import load_settings
from tests.support.openai_server import Reply, ScriptedOpenAI, call, count_tokens, say, tool_results
from tests.support.research_site import FILLER
from tests.support.team_script import (
    LEDGER_TEXT,
    TeamScript,
    delegate_calls,
    kind_of,
    last_user,
    orchestrator_script,
    progress_reply,
)
from tests.support.web_server import LocalWebServer
from tests.support.web_server import Reply as WebReply
from tools.compute.calculator import make_calculator_tools
from tools.core.registry import build_registry
from tools.core.specs import names_for
from tools.documents.files import make_file_tools
from tools.web.fetch import make_fetch_tools

pytestmark = pytest.mark.integration


def _pipeline(srv: ScriptedOpenAI, factories: list[Any], **overrides: Any) -> Pipeline:
    settings = load_settings(OPENAI_BASE_URL=srv.url, OPENAI_API_KEY="sk-test", RAG_ENABLED=False,
                             AGENT_STRATEGY="team", RATE_LIMIT_RETRY_BASE_DELAY=0.01, **overrides)
    app = Application(settings)  # the pipeline's: its browsers are what a browser factory gets
    return Pipeline(settings, registry=build_registry(settings, [("base", f) for f in factories],
                                                      deps=app.tool_deps()),
                    raise_internal_errors=True, app=app)


def _offered(body: dict[str, Any]) -> list[str]:
    return [t["function"]["name"] for t in body.get("tools", [])]


def test_two_attachments_are_read_by_two_readers_at_once(tmp_path: Path) -> None:
    first, second = tmp_path / "north.txt", tmp_path / "south.txt"
    first.write_text("North warehouse: 1200 crates.\n")
    second.write_text("South warehouse: 34 crates.\n")

    orchestrator = orchestrator_script(("reader", f"Read {first} and report the crates."),
                                       ("reader", f"Read {second} and report the crates."),
                                       answer=say("1200 + 34 crates.\nFINAL ANSWER: 1234"))

    def reader(body: dict[str, Any]) -> Reply:
        if results := tool_results(body):
            return say(f"The file says: {results[0].strip()}")
        path = re.search(r"Read (\S+) and", last_user(body))
        assert path is not None
        return Reply(content="", tool_calls=[("read_file", {"path": path.group(1)})], delay=0.6)

    script = TeamScript({"orchestrator": orchestrator, "reader": reader})
    with ScriptedOpenAI(script) as srv:
        sol = _pipeline(srv, [make_file_tools, make_calculator_tools]).solve(
            "How many crates in both warehouses?", str(first), readable=[second], confine=False)
    assert sol.answer == "1234" and sol.error is None and sol.strategy == "team"
    reports = [e for e in sol.events if isinstance(e, WorkerReported)]
    texts = sorted(r.report for r in reports)
    assert len(texts) == 2 and "North warehouse: 1200 crates." in texts[0] and "South warehouse: 34" in texts[1]
    a, b = reports
    assert max(a.started_s, b.started_s) < min(a.elapsed_s, b.elapsed_s)  # the two spans overlap: concurrent
    assert a.delegation != b.delegation and {a.worker, b.worker} == {"reader"}
    assert all(e.worker == "reader" for e in sol.events if isinstance(e, ModelCall) and e.delegation)
    reader_bodies = script.seen["reader"]
    assert all("1200 crates" not in json.dumps(b) for b in script.seen["orchestrator"] if kind_of(b) == "ledger")
    assert {t for b in reader_bodies for t in _offered(b)} == set(names_for("reader", ["read_file", "calculator"]))
    assert sol.steps == 5  # one orchestrator turn and two steps of each reader count against the task


def _chain_site(length: int) -> dict[str, Any]:
    routes: dict[str, Any] = {}
    for index in range(1, length + 1):
        tail = ("The chain ends here: the keeper's number is 4512." if index == length
                else f'Next: <a href="/page{index + 1}">continue to page {index + 1}</a>.')
        routes[f"/page{index}"] = WebReply(body=f"<html><body><h1>Page {index}</h1><p>{FILLER * 6}</p>"
                                                f"<p>{tail}</p></body></html>")
    return routes


def test_a_twenty_step_chain_stays_in_the_researcher(tmp_path: Path) -> None:
    with LocalWebServer(_chain_site(20)) as site:
        start = site.url("/page1")

        orchestrator = orchestrator_script(("researcher", f"Follow the chain of pages from {start} to its end; "
                                                          "report the keeper's number."),
                                           answer=say("FINAL ANSWER: 4512"))

        def researcher(body: dict[str, Any]) -> Reply:
            results = tool_results(body)
            last = results[-1] if results else ""
            if "keeper's number is 4512" in last:
                return say("Followed 20 pages; the keeper's number is 4512.")
            link = re.search(r"\((http://127\.0\.0\.1:\d+/page\d+)\)", last)
            return call("fetch_webpage", url=link.group(1) if link else start)

        script = TeamScript({"orchestrator": orchestrator, "researcher": researcher})
        with ScriptedOpenAI(script) as srv:
            sol = _pipeline(srv, [make_fetch_tools], MAX_ITERATIONS=40, WORKER_MAX_ITERATIONS=25,
                            FETCH_ALLOWED_HOSTS=site.host_port).solve("What is the keeper's number?")
    assert sol.answer == "4512" and sol.error is None
    fetched = [e for e in sol.events if isinstance(e, ToolResult) and e.name == "fetch_webpage"]
    assert len(fetched) == 20 and all(e.worker == "researcher" for e in fetched)
    orchestrator_bodies = script.seen["orchestrator"]
    assert len(orchestrator_bodies) == 4
    for body in orchestrator_bodies:
        assert count_tokens(body) < 3000
        assert "committee met again" not in json.dumps(body)  # no page text: only the report
        assert _offered(body) in ([], ["delegate"])
    assert max(count_tokens(b) for b in script.seen["researcher"]) > 3000  # the pages were read, in the worker


def test_each_role_is_offered_exactly_its_tools(tmp_path: Path) -> None:
    orchestrator = orchestrator_script(("researcher", "look it up"), ("reader", "read it"), ("coder", "compute it"),
                                       ("browser", "operate it"), answer=say("FINAL ANSWER: done"))

    script = TeamScript({"orchestrator": orchestrator, **{r: (lambda b: say("nothing to do")) for r in
                                                          ("researcher", "reader", "coder", "browser")}})
    with ScriptedOpenAI(script) as srv:
        pipeline = _pipeline(srv, [make_file_tools, make_calculator_tools])
        sol = pipeline.solve("q")
    active = pipeline.registry.names
    for role in ("reader", "coder"):
        assert {tuple(_offered(b)) for b in script.seen[role]} == {tuple(names_for(role, active))}
    assert {tuple(_offered(b)) for b in script.seen["reader"]} == {("read_file",)}
    assert {tuple(_offered(b)) for b in script.seen["coder"]} == {("read_file", "calculator")}
    assert "browser" not in script.seen and "researcher" not in script.seen  # no tool of theirs is active
    delegate = next(b for b in script.seen["orchestrator"] if kind_of(b) == "round")["tools"]
    assert [t["function"]["name"] for t in delegate] == ["delegate"]
    assert "Workers on this team: reader, coder." in delegate[0]["function"]["description"]
    refused = sorted(e.output for e in sol.events if isinstance(e, ToolResult) and not e.ok)
    assert [r.split(" (")[0] for r in refused] == ["Error: there is no browser on this team",
                                                  "Error: there is no researcher on this team"]
    assert sol.answer == "done"


def test_two_empty_reports_make_a_new_plan_and_the_browser_succeeds() -> None:
    from tools.browser import make_browser_tools

    def orchestrator(body: dict[str, Any]) -> Reply:
        kind = kind_of(body)
        if kind == "ledger":
            return say(LEDGER_TEXT)
        if kind == "replan":
            return say("FACTS GIVEN: q\nPLAN: 1. browser: operate the site's search box")
        if kind == "round":
            plan = last_user(body)
            return delegate_calls(("browser", "use the search box") if "search box" in plan
                                  else ("researcher", "find the value"))
        if kind == "progress":
            found = "value is 42" in last_user(body)
            return progress_reply(satisfied=found, progress=found)
        return say("FINAL ANSWER: 42")

    script = TeamScript({"orchestrator": orchestrator, "researcher": lambda b: say(""),
                         "browser": lambda b: say("The site's search shows: the value is 42.")})
    with ScriptedOpenAI(script) as srv:
        sol = _pipeline(srv, [make_fetch_tools, make_browser_tools], MAX_ITERATIONS=20).solve("What is the value?")
    ledgers = [e for e in sol.events if isinstance(e, LedgerMade)]
    checks = [e for e in sol.events if isinstance(e, ProgressChecked)]
    assert [ledger.replan for ledger in ledgers] == [False, True]
    assert [(c.progress, c.stalls) for c in checks] == [(False, 1), (False, 2), (True, 0)]
    assert [e.worker for e in sol.events if isinstance(e, WorkerReported)] == ["researcher", "researcher", "browser"]
    assert sol.answer == "42" and sol.error is None
    round_after_replan = [b for b in script.seen["orchestrator"] if kind_of(b) == "round"][-1]
    assert "REPORT 2 from the researcher" in last_user(round_after_replan) and "(empty report)" in last_user(
        round_after_replan)


@pytest.mark.parametrize("limit", ["iterations", "tokens"])
def test_workers_spend_the_tasks_own_budget(limit: str) -> None:
    orchestrator = orchestrator_script(("coder", "add one forever"), answer=say("FINAL ANSWER: 7"), satisfied=False)

    script = TeamScript({"orchestrator": orchestrator,
                         "coder": lambda b: call("calculator", expression="1+1") if b.get("tools") else say("gave up")})
    budget = {"MAX_ITERATIONS": 6} if limit == "iterations" else {"MAX_ITERATIONS": 60, "MAX_TOKENS_PER_TASK": 300}
    with ScriptedOpenAI(script) as srv:
        sol = _pipeline(srv, [make_calculator_tools], WORKER_MAX_ITERATIONS=50, **budget).solve("q")
    assert sol.answer == "7" and sol.error is None
    coder_turns = len([b for b in script.seen["coder"] if b.get("tools")])
    untagged = [type(e).__name__ for e in sol.events
                if e.worker is None and isinstance(e, IterationCap | TokenBudgetExhausted)]
    if limit == "iterations":
        assert coder_turns == 5 and sol.hit_iteration_cap  # 6 = one orchestrator turn + the coder's 5
        assert untagged == ["IterationCap"]
    else:
        assert coder_turns < 50 and sol.budget_exhausted and sol.total_tokens > 300
        assert untagged == ["TokenBudgetExhausted"]
    final = [b for b in script.seen["orchestrator"] if kind_of(b) == "answer"]
    assert len(final) == 1 and "no more tools can be called" in last_user(final[0])
