"""`python -m agent --max-iterations N` and `python -m evaluation run --max-iterations / --max-cost-usd`."""

from __future__ import annotations

import json

import pytest

from agent.__main__ import main
from evaluation.__main__ import build_parser
from tests.support.openai_server import ScriptedOpenAI, call, say


@pytest.mark.integration
def test_the_agent_cli_caps_this_runs_iterations(tmp_path, monkeypatch, capsys):
    def script(body: dict):
        return call("calculator", expression="1+1") if body.get("tools") else say("FINAL ANSWER: 2")

    with ScriptedOpenAI(script) as srv:
        monkeypatch.setenv("OPENAI_BASE_URL", srv.url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-cli-test")
        code = main(["--no-rag", "--json", "--max-iterations", "2", "What is 1+1?"])
        requests = len(srv.requests)
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["answer"] == "2" and out["steps"] == 2 and out["hit_iteration_cap"]
    assert requests == 3 and out["budget_exhausted"] is False and out["cost_usd"] == 0.0


def test_the_agent_cli_refuses_a_cap_below_one(capsys):
    assert main(["--max-iterations", "0", "q"]) == 2
    assert "--max-iterations" in capsys.readouterr().err


def test_the_evaluation_cli_takes_the_budget_flags():
    args = build_parser().parse_args(["run", "--max-iterations", "40", "--max-cost-usd", "2.5"])
    assert (args.max_iterations, args.max_cost_usd) == (40, 2.5)
    with pytest.raises(SystemExit):
        build_parser().parse_args(["run", "--max-cost-usd", "-1"])
