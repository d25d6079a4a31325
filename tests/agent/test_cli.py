"""`python -m agent` as a user runs it: a subprocess against the scripted server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agent.__main__ import format_event, main
from agent.events import RagLookup, Retry, ToolResult
from tests.support.openai_server import ScriptedOpenAI, call, say, tool_results

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
SECRET = "sk-cli-secret-424242"


def run_cli(args: list[str], srv: ScriptedOpenAI | None, tmp_path: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "RAG_"))}
    env.update(RAG_INDEX_DIR=str(tmp_path / "rag"), OUTPUT_DIR=str(tmp_path / "runs"), PYTHONPATH=str(ROOT))
    if srv is not None:
        env.update(OPENAI_BASE_URL=srv.url, OPENAI_API_KEY=SECRET)
    return subprocess.run([sys.executable, "-m", "agent", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=120)


def test_answers_with_a_real_tool_call(tmp_path: Path) -> None:
    with ScriptedOpenAI([call("calculator", expression="2**10 + 7"), say("FINAL ANSWER: 1031")]) as srv:
        done = run_cli(["--no-rag", "What is 2**10 + 7?"], srv, tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "1031"
    assert tool_results(srv.requests[1].body) == ["1031"]


def test_json_and_trace(tmp_path: Path) -> None:
    attachment = tmp_path / "numbers.txt"
    attachment.write_text("3\n4\n")
    with ScriptedOpenAI([call("calculator", expression="3 + 4"), say("FINAL ANSWER: 7")]) as srv:
        done = run_cli(["--json", "--trace", "--file", str(attachment), "Sum the numbers in the file."], srv, tmp_path)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["answer"] == "7" and data["source"] == "agent" and data["steps"] == 2
    assert data["tokens"] == {"prompt": 22, "completion": 14, "total": 36}
    assert set(data["timings"]) >= {"total_s", "model_s", "tools_s"}
    assert [e["kind"] for e in data["trace"]][-1] == "answer"
    assert data["file_path"] == str(attachment.resolve())
    assert str(attachment.resolve()) in srv.requests[0].body["messages"][1]["content"]
    assert "tool     calculator" in done.stderr and "answer   '7'" in done.stderr
    assert SECRET not in done.stdout + done.stderr


def test_no_llm_exits_nonzero_with_one_line(tmp_path: Path) -> None:
    done = run_cli(["--no-rag", "What is 2+2?"], None, tmp_path)
    assert done.returncode == 2
    assert done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "OPENAI_API_KEY" in lines[0] and "OPENAI_BASE_URL" in lines[0]


def test_missing_file_is_a_usage_error(tmp_path: Path, capsys) -> None:
    assert main(["--file", str(tmp_path / "nope.xlsx"), "q"]) == 2
    assert "no such file" in capsys.readouterr().err


def test_failed_run_exits_1(monkeypatch, capsys) -> None:
    with ScriptedOpenAI([]) as srv:  # an exhausted script answers 400
        monkeypatch.setenv("OPENAI_BASE_URL", srv.url)
        monkeypatch.setenv("RAG_ENABLED", "false")
        assert main(["q"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: model request failed")


def test_format_event_lines() -> None:
    assert "retry    1/5 in 2s" in format_event(Retry(attempt=1, max_retries=5, delay_s=2, reason="HTTP 429"))
    assert "failed (timeout)" in format_event(ToolResult(call_id="c", name="web_search", output="Error: x", ok=False,
                                                         duration_s=30, error_kind="timeout"))
    assert "rag      off" in format_event(RagLookup(tier="off", note=""))
