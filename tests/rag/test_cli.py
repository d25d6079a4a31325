"""`python -m rag` as a user runs it: a real subprocess from the project root, offline."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.gaia_fixture import FIXTURE_TASKS, make_gaia_folder

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.integration


def run_rag(*args: str, timeout: float = 240) -> subprocess.CompletedProcess:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "PYTHONWARNINGS": "ignore"}
    return subprocess.run([sys.executable, "-m", "rag", *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=timeout)


def test_build_query_stats_remove(tmp_path):
    gaia = make_gaia_folder(tmp_path / "gaia")
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text(json.dumps({"question": "How far is London from Paris in kilometers?", "answer": "344"}) + "\n")
    run = tmp_path / "run"
    run.mkdir()
    (run / "details.jsonl").write_text(json.dumps({"task_id": "r1", "question": "Who wrote Hamlet?",
                                                   "expected": "Shakespeare", "predicted": "Shakespeare",
                                                   "correct": True}) + "\n")
    index = tmp_path / "index"

    built = run_rag("build", "--gaia-dir", str(gaia), "--split", "validation", "--jsonl", str(pairs),
                    "--from-run", str(run), "--index-dir", str(index))
    assert built.returncode == 0, built.stderr
    assert f"{len(FIXTURE_TASKS) + 2} entries in total" in built.stdout

    capital = next(t for t in FIXTURE_TASKS if t.key == "capital")
    questions = ["what is the capital city of france", "How far is London from Paris in miles?",
                 "Who wrote Hamlet", "Describe the migration habits of arctic terns in detail."]
    queried = run_rag("query", "--index-dir", str(index), "--json", *questions)
    assert queried.returncode == 0, queried.stderr
    lines = [json.loads(line) for line in queried.stdout.splitlines()]
    assert len(lines) == len(questions)
    for line in lines:
        assert set(line) == {"tier", "answer", "similarity", "matched_question", "task_id"}
        assert isinstance(line["similarity"], float)
    assert lines[0] == {"tier": "answer", "answer": "Paris", "similarity": 1.0,
                        "matched_question": capital.question, "task_id": capital.task_id()}
    assert (lines[1]["tier"], lines[1]["answer"]) == ("candidates", None)
    assert (lines[2]["tier"], lines[2]["answer"], lines[2]["task_id"]) == ("answer", "Shakespeare", "r1")
    assert lines[3]["tier"] in ("miss", "hints") and lines[3]["answer"] is None

    stats = run_rag("stats", "--index-dir", str(index))
    data = json.loads(stats.stdout)
    assert data["entries"] == len(FIXTURE_TASKS) + 2
    assert data["by_source"] == {"gaia:validation": len(FIXTURE_TASKS), "jsonl:pairs.jsonl": 1, "run:run": 1}

    removed = run_rag("remove", "--task-id", "r1", "--index-dir", str(index))
    assert removed.returncode == 0 and "removed 1 entry" in removed.stdout
    assert json.loads(run_rag("stats", "--index-dir", str(index)).stdout)["entries"] == len(FIXTURE_TASKS) + 1

    (index / "index.faiss").write_bytes(b"garbage")
    broken = run_rag("query", "--index-dir", str(index), "--json", "anything")
    assert broken.returncode == 2 and broken.stdout == ""
    assert str(index / "index.faiss") in broken.stderr and "python -m rag build" in broken.stderr
    assert "Traceback" not in broken.stderr


def test_query_on_missing_index_is_a_miss(tmp_path):
    result = run_rag("query", "--index-dir", str(tmp_path / "none"), "--json", "q one", "q two")
    assert result.returncode == 0, result.stderr
    assert [json.loads(line) for line in result.stdout.splitlines()] == [
        {"tier": "miss", "answer": None, "similarity": 0.0, "matched_question": None, "task_id": None}] * 2


@pytest.mark.parametrize("args,message", [
    (["build"], "give at least one source"),
    (["build", "--jsonl", "/nonexistent/file.jsonl"], "does not exist"),
])
def test_bad_build_input_is_one_clear_line(tmp_path, args, message):
    result = run_rag(*args, "--index-dir", str(tmp_path / "i"))
    assert result.returncode == 2 and message in result.stderr and "Traceback" not in result.stderr


def test_test_split_is_refused(tmp_path):
    gaia = make_gaia_folder(tmp_path / "gaia", split="test")
    result = run_rag("build", "--gaia-dir", str(gaia), "--split", "test", "--index-dir", str(tmp_path / "i"))
    assert result.returncode == 2 and "no rows with a known answer" in result.stderr
