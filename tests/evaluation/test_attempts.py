"""Attempts and vote through the CLI, the real client and the scripted server; the fixture batch with the check on."""

from __future__ import annotations

import json
import re
import threading
from pathlib import Path
from typing import Any

import pytest

from evaluation.__main__ import main
from evaluation.attempts import majority, vote_key
from tests.evaluation.test_runner import solve_with_tool
from tests.support.gaia_fixture import FIXTURE_TASKS, make_gaia_folder
from tests.support.openai_server import Reply, ScriptedOpenAI, say

CHECKER = "you check a final answer's format"


def _is_checker(body: dict[str, Any]) -> bool:
    return CHECKER in str(body["messages"][0]["content"]).splitlines()[0].lower()


def _details(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out / "details.jsonl").read_text(encoding="utf-8").splitlines() if line]


def _env(monkeypatch: pytest.MonkeyPatch, srv: ScriptedOpenAI, **extra: str) -> None:
    for key, value in {"OPENAI_BASE_URL": srv.url, "OPENAI_API_KEY": "sk-test", "RAG_ENABLED": "false",
                       "BATCH_QUESTION_DELAY": "0", **extra}.items():
        monkeypatch.setenv(key, value)


def test_vote_is_over_the_scorers_normalised_answers_ties_to_the_earliest():
    assert vote_key("$1,234") == vote_key("1234") and vote_key("Paris.") == vote_key("paris")
    assert majority(["A", "B", "A"]) == 0 and majority(["B", "A", "a"]) == 1 and majority(["x", "y", "z"]) == 0
    assert majority(["", "", "B"]) == 2


@pytest.mark.parametrize(("replies", "predicted", "pass_at_1"), [
    (["Paris", "London", "Paris"], "Paris", True),
    (["London", "Paris", "London"], "London", False),
])
def test_attempts_3_votes_and_records_pass_at_k(monkeypatch, tmp_path, capsys, replies, predicted, pass_at_1):
    answers = iter(replies)
    lock = threading.Lock()

    def script(body: dict[str, Any]) -> Reply:
        with lock:
            return say(f"FINAL ANSWER: {next(answers)}", prompt_tokens=100, completion_tokens=10)

    capital = next(t for t in FIXTURE_TASKS if t.key == "capital")
    with ScriptedOpenAI(script) as srv:
        _env(monkeypatch, srv, LLM_PRICE_INPUT_PER_MTOK="1")
        code = main(["run", "--data-dir", str(make_gaia_folder(tmp_path / "gaia")), "--task-id",
                     capital.task_id(), "--attempts", "3", "--output-dir", str(tmp_path / "out")])
        assert code == 0, capsys.readouterr().err
        assert len(srv.requests) == 3
    record = _details(tmp_path / "out")[0]
    assert record["predicted"] == predicted and record["attempts"] == replies
    assert record["pass_at_k"] is True and record["pass_at_1"] is pass_at_1
    assert record["correct"] is (predicted == "Paris")
    assert record["prompt_tokens"] == 300 and record["cost_usd"] == pytest.approx(3e-4)  # summed over attempts
    report = (tmp_path / "out" / "report.md").read_text(encoding="utf-8")
    assert re.search(r"pass@1 (100\.0|0\.0)%, pass@3 100\.0%, majority", report)


def test_the_fixture_batch_stays_right_with_the_check_on_and_a_checker_that_changes_facts(monkeypatch, tmp_path,
                                                                                            capsys):
    def script(body: dict[str, Any]) -> Any:
        if _is_checker(body):  # the worst checker: it changes a number, a name or adds an article
            draft = str(body["messages"][1]["content"]).rsplit("Draft answer:\n", 1)[1]
            bumped = re.sub(r"\d+", lambda m: str(int(m.group()) + 1), draft)
            return say(f"FINAL ANSWER: {bumped if bumped != draft else 'the ' + draft}")
        return solve_with_tool(body)

    with ScriptedOpenAI(script) as srv:
        _env(monkeypatch, srv, ANSWER_CHECK="on")
        code = main(["run", "--data-dir", str(make_gaia_folder(tmp_path / "gaia")), "--concurrency", "2",
                     "--output-dir", str(tmp_path / "out")])
        assert code == 0, capsys.readouterr().err
    records = _details(tmp_path / "out")
    assert len(records) == len(FIXTURE_TASKS) and all(r["correct"] for r in records), records
    checked = [r for r in records if r["predicted_before_check"] is not None]
    assert checked and all(r["predicted_before_check"] == r["predicted"] for r in checked)


def test_the_rag_short_circuit_answers_once_and_a_stop_ends_the_attempts():
    from agent.events import Solution
    from evaluation.attempts import solve_attempts

    calls: list[int] = []

    def rag() -> list[Solution]:
        calls.append(1)
        return [Solution(question="q", answer="A", source="rag")]

    assert len(solve_attempts(rag, 3) or []) == 1 and len(calls) == 1
    outcomes = iter([[Solution(question="q", answer="A", source="agent")], None])
    assert len(solve_attempts(lambda: next(outcomes), 3) or []) == 1  # a stop cut the second: the first stands
    assert solve_attempts(lambda: None, 3) is None
