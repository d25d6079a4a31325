"""`python -m agent --strategy team` as a user runs it: a subprocess against the scripted server."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.agent.test_cli import run_cli
from tests.support.openai_server import Reply, ScriptedOpenAI, call, say, tool_results
from tests.support.team_script import TeamScript, orchestrator_script

pytestmark = pytest.mark.integration


def _coder(body: dict[str, Any]) -> Reply:
    results = tool_results(body)
    return say(f"It is {results[-1]}.") if results else call("calculator", expression="2**10 + 7")


def test_strategy_flag_runs_the_team_and_the_trace_names_the_worker(tmp_path: Path) -> None:
    script = TeamScript({"orchestrator": orchestrator_script(("coder", "Compute 2**10 + 7 with the calculator."),
                                                         answer=say("FINAL ANSWER: 1031")),
                         "coder": _coder})
    with ScriptedOpenAI(script) as srv:
        done: subprocess.CompletedProcess[str] = run_cli(["--no-rag", "--json", "--trace", "--strategy", "team",
                                                          "What is 2**10 + 7?"], srv, tmp_path)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["answer"] == "1031" and data["strategy"] == "team"
    kinds = [e["kind"] for e in data["trace"]]
    assert kinds.count("ledger") == 1 and kinds.count("progress") == 1 and kinds.count("worker_report") == 1
    worker_events = [e for e in data["trace"] if e.get("worker")]
    assert {e["worker"] for e in worker_events} == {"coder"} and len({e["delegation"] for e in worker_events}) == 1
    assert "<coder>tool     calculator" in done.stderr and "progress satisfied=True" in done.stderr
    assert set(script.seen) == {"orchestrator", "coder"}
