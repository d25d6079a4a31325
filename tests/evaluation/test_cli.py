"""`python -m evaluation`: run / compare / api, errors as one line, and kill -9 mid-run then --resume."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from evaluation.__main__ import main
from tests.evaluation.test_runner import solve_with_tool
from tests.evaluation.test_scoring_api import agent_script, api_tasks
from tests.support.gaia_fixture import FIXTURE_TASKS, make_gaia_folder
from tests.support.openai_server import ScriptedOpenAI, first_user_text
from tests.support.scoring_server import ScoringServer

ROOT = Path(__file__).resolve().parents[2]


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.fixture
def llm_env(monkeypatch, tmp_path):
    with ScriptedOpenAI(solve_with_tool, latency=0.05) as srv:
        for key, value in {"OPENAI_BASE_URL": srv.url, "OPENAI_API_KEY": "sk-test", "RAG_ENABLED": "false",
                           "BATCH_QUESTION_DELAY": "0"}.items():
            monkeypatch.setenv(key, value)
        yield srv


def test_run_prints_the_score_and_writes_the_run_folder(llm_env, tmp_path, capsys):
    root = make_gaia_folder(tmp_path / "gaia")
    code = main(["run", "--data-dir", str(root), "--level", "1", "--concurrency", "2",
                 "--output-dir", str(tmp_path / "out")])
    out = capsys.readouterr()
    assert code == 0, out.err
    assert "exact match: 100.0% (2/2 scored" in out.out and "level 1: 100.0%" in out.out
    assert f"output: {tmp_path / 'out'}" in out.out
    assert "2/2" in out.err  # the tqdm bar
    assert len(read_jsonl(tmp_path / "out" / "results.jsonl")) == 2


def test_run_with_task_ids_max_samples_no_rag_and_delay(llm_env, tmp_path, capsys):
    root = make_gaia_folder(tmp_path / "gaia", fmt="jsonl", level_as_str=False)
    ids = [FIXTURE_TASKS[i].task_id() for i in (1, 2, 4)]
    argv = ["run", "--data-dir", str(root), "--max-samples", "2", "--concurrency", "1", "--delay", "0",
            "--no-rag", "--output-dir", str(tmp_path / "out")]
    for task_id in ids:
        argv += ["--task-id", task_id]
    assert main(argv) == 0
    details = read_jsonl(tmp_path / "out" / "details.jsonl")
    assert [d["task_id"] for d in details] == ids[:2]
    asked = {first_user_text(r.body) for r in llm_env.requests}
    chosen = [t.question for t in FIXTURE_TASKS[1:3]]
    assert all(any(q in text for q in chosen) for text in asked)  # only the selected tasks reached the model


def test_test_split_run_reports_what_the_submission_lacks(llm_env, tmp_path, capsys):
    root = make_gaia_folder(tmp_path / "gaia", split="test")
    assert main(["run", "--data-dir", str(root), "--split", "test", "--max-samples", "1",
                 "--output-dir", str(tmp_path / "out")]) == 0
    assert "submission check: missing 5 of 6 task(s)" in capsys.readouterr().err


def test_compare_prints_fixed_and_regressed(llm_env, tmp_path, capsys):
    root = make_gaia_folder(tmp_path / "gaia")
    assert main(["run", "--data-dir", str(root), "--output-dir", str(tmp_path / "a")]) == 0
    assert main(["run", "--data-dir", str(root), "--output-dir", str(tmp_path / "b")]) == 0
    capsys.readouterr()
    assert main(["compare", str(tmp_path / "a"), str(tmp_path / "b")]) == 0
    text = capsys.readouterr().out
    assert "regressed" in text.lower() and "fixed" in text.lower()


@pytest.mark.parametrize("argv, message", [
    (["run", "--data-dir", "/nonexistent/gaia"], "does not exist"),
    (["compare", "/nonexistent/a", "/nonexistent/b"], "error:"),
])
def test_bad_input_is_one_error_line_and_exit_2(llm_env, argv, message, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error:") and message in err and "Traceback" not in err


def test_run_without_a_model_says_what_to_set(tmp_path, capsys):
    root = make_gaia_folder(tmp_path / "gaia")
    assert main(["run", "--data-dir", str(root)]) == 2
    assert "OPENAI_API_KEY" in capsys.readouterr().err


def test_invalid_flags_are_refused_by_the_parser(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["run", "--concurrency", "0"])
    assert exc.value.code == 2 and "at least 1" in capsys.readouterr().err


def test_api_submits_per_task_with_the_space_link(monkeypatch, tmp_path, capsys):
    with ScriptedOpenAI(agent_script) as srv, ScoringServer(api_tasks(tmp_path)) as api:
        for key, value in {"OPENAI_BASE_URL": srv.url, "OPENAI_API_KEY": "sk-test", "RAG_ENABLED": "false",
                           "SCORING_API_URL": api.url, "SPACE_ID": "ann/gaia-agent"}.items():
            monkeypatch.setenv(key, value)
        assert main(["api", "--username", "ann", "--concurrency", "2"]) == 0
    out = capsys.readouterr().out
    assert "5/6 total questions answered correctly" in out
    assert "verdicts known for 6/6 task(s), 5 correct" in out
    assert {s["agent_code"] for s in api.submissions} == {"https://huggingface.co/spaces/ann/gaia-agent/tree/main"}
    assert [len(s["answers"]) for s in api.submissions] == [1, 2, 3, 4, 5, 6]


def test_api_without_agent_code_or_space_id_is_an_error(llm_env, capsys):
    assert main(["api", "--username", "ann"]) == 2
    assert "--agent-code" in capsys.readouterr().err


# -- the process dies: nothing lost, nothing asked twice ------------------------------------------------------
def _env(srv: ScriptedOpenAI, tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "HF_TOKEN", "TAVILY"))}
    env.update(OPENAI_BASE_URL=srv.url, OPENAI_API_KEY="sk-test", RAG_ENABLED="false", BATCH_QUESTION_DELAY="0",
               OUTPUT_DIR=str(tmp_path / "runs"), RAG_INDEX_DIR=str(tmp_path / "rag"), PYTHONUNBUFFERED="1")
    return env


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "evaluation", "run", *args]


def _records(path: Path) -> int:
    return sum(1 for line in path.read_text().splitlines() if line.endswith("}")) if path.exists() else 0


def _held_after(path: Path, n: int, gate: threading.Event, script: Callable[[dict], object]) -> Callable:
    """`script`, but once `path` holds `n` records every request waits for `gate`.

    So no task can finish, nor a new one start, before the test has sent its signal (on a busy machine the
    test itself may look late).
    """
    def reply(body: dict) -> object:
        if _records(path) >= n:
            gate.wait(60)
        return script(body)
    return reply


def _wait_for_records(path: Path, n: int, proc: subprocess.Popen, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if _records(path) >= n:
            return
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.02)
    raise AssertionError(f"{path} never reached {n} records")


@pytest.mark.integration
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGINT], ids=["SIGKILL", "SIGINT"])
def test_killed_mid_run_then_resumed_every_task_once_and_none_asked_twice(tmp_path, sig):
    root = make_gaia_folder(tmp_path / "gaia")
    out = tmp_path / "out"
    questions = {t.task_id(): t.question for t in FIXTURE_TASKS}
    gate = threading.Event()
    with ScriptedOpenAI(_held_after(out / "checkpoint.jsonl", 2, gate, solve_with_tool), latency=0.3) as srv:
        env = _env(srv, tmp_path)
        args = ("--data-dir", str(root), "--concurrency", "2", "--output-dir", str(out))
        proc = subprocess.Popen(_cli(*args), cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True)
        _wait_for_records(out / "checkpoint.jsonl", 2, proc)
        proc.send_signal(sig)
        gate.set()  # the running tasks may go on now; with SIGINT they finish and nothing new starts
        stdout, stderr = proc.communicate(timeout=60)
        if sig == signal.SIGINT:  # graceful: the running tasks finish, the files are written, exit 130
            assert proc.returncode == 130, stderr
            assert "--resume" in stdout
        else:
            assert proc.returncode == -signal.SIGKILL
        recorded = {json.loads(line)["task_id"] for line in (out / "checkpoint.jsonl").read_text().splitlines()
                    if line.endswith("}")}
        assert 2 <= len(recorded) < 6
        since = len(srv.requests)

        done = subprocess.run(_cli(*args, "--resume"), cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        asked = [first_user_text(r.body) for r in srv.requests[since:]]

    for task_id, question in questions.items():
        times = sum(question in text for text in asked)
        assert times == (0 if task_id in recorded else 2), (task_id, times)
    for name in ("details.jsonl", "results.jsonl"):
        ids = [row["task_id"] for row in read_jsonl(out / name)]
        assert sorted(ids) == sorted(questions), name  # every task exactly once
    summary = json.loads((out / "summary.json").read_text())
    assert summary["total"] == 6 and summary["correct"] == 6 and summary["meta"]["sessions"] == 2


def test_resume_reads_the_runs_own_data_source_and_selection(llm_env, tmp_path, capsys, monkeypatch):
    root = make_gaia_folder(tmp_path / "gaia")
    out = tmp_path / "out"
    assert main(["run", "--data-dir", str(root), "--level", "1", "--max-samples", "1", "--output-dir", str(out)]) == 0
    recorded = json.loads((out / "run.json").read_text())
    assert recorded["data_dir"] == str(root) and recorded["level"] == 1 and recorded["max_samples"] == 1
    # The hub would be tried (and fail offline) if the resume forgot the local folder.
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    capsys.readouterr()
    assert main(["run", "--resume", "--output-dir", str(out)]) == 0, capsys.readouterr().err
    assert len(read_jsonl(out / "details.jsonl")) == 1  # the same selection: level 1, one sample
