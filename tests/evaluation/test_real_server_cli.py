"""The batch CLI (`python -m evaluation run`) against a real llama.cpp server: requests accepted, usage counted.

The model (SmolLM2-135M) is weak: the record's correctness is not asserted, only that the run finishes,
records the task with the server's token counts and writes its files.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.gaia_fixture import FIXTURE_TASKS, make_gaia_folder
from tests.support.llama_server import RecordingProxy

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]


def test_batch_cli_runs_a_task_through_the_real_server(llama_server, tmp_path) -> None:
    root = make_gaia_folder(tmp_path / "gaia")
    task = next(t for t in FIXTURE_TASKS if t.key == "arith")
    proxy = RecordingProxy(llama_server.port).start()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "HF_TOKEN", "TAVILY"))}
    env.update(OPENAI_BASE_URL=proxy.url, MODEL_NAME=llama_server.model, RAG_ENABLED="false", LLM_MAX_TOKENS="24",
               MAX_ITERATIONS="1", LLM_TIMEOUT="120", BATCH_QUESTION_DELAY="0", OUTPUT_DIR=str(tmp_path / "runs"),
               RAG_INDEX_DIR=str(tmp_path / "rag"), PYTHONUNBUFFERED="1")
    try:
        done = subprocess.run([sys.executable, "-m", "evaluation", "run", "--data-dir", str(root), "--task-id",
                               task.task_id(), "--concurrency", "1", "--no-rag", "--output-dir", str(tmp_path / "out")],
                              cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    finally:
        proxy.stop()
    assert done.returncode == 0, done.stderr
    assert "exact match:" in done.stdout
    (record,) = [json.loads(line) for line in (tmp_path / "out" / "details.jsonl").read_text().splitlines()]
    assert record["task_id"] == task.task_id() and record["error"] is None
    chat = proxy.chat()
    assert chat and all(e.status == 200 for e in chat)
    assert chat[0].body["tool_choice"] == "auto" and chat[0].body["tools"]
    assert record["prompt_tokens"] == sum(e.reply["usage"]["prompt_tokens"] for e in chat) > 0
    assert record["completion_tokens"] == sum(e.reply["usage"]["completion_tokens"] for e in chat) > 0
    assert (tmp_path / "out" / "results.jsonl").is_file() and (tmp_path / "out" / "report.md").is_file()
