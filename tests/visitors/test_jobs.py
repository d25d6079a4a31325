"""The budgeted worker (visitors/jobs.py) without the app: it answers, holds no secret, leaves no folder."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

from config import load_settings
from tests.support import bombs
from tests.support.app_server import ROOT, base_env
from tests.support.gaia_fixture import make_gaia_folder
from visitors.hidden_answers import load_local_tasks
from visitors.jobs import run_job, worker_settings


@pytest.fixture
def made(monkeypatch: pytest.MonkeyPatch) -> set[Path]:
    """The job folders this test process makes (other xdist workers make theirs in the same temp folder)."""
    folders: set[Path] = set()
    real = tempfile.mkdtemp

    def recording(*args: Any, **kwargs: Any) -> str:
        path = real(*args, **kwargs)
        if Path(path).name.startswith("gaia-visitor-"):
            folders.add(Path(path))
        return path

    monkeypatch.setattr(tempfile, "mkdtemp", recording)
    return folders


def _left(made: set[Path]) -> set[Path]:
    return {p for p in made if p.exists()}


def test_the_worker_gets_no_secret(tmp_path):
    settings = load_settings(OPENAI_API_KEY="sk-budget-secret-1", HF_TOKEN="hf_budget_secret_2")
    values = worker_settings(settings, tmp_path)
    assert values["OPENAI_API_KEY"] is None and values["HF_TOKEN"] is None
    assert "budget_secret" not in json.dumps(values) and "budget-secret" not in json.dumps(values)
    assert values["WORKSPACE_DIR"] == str(tmp_path / "work")


def test_a_preview_runs_in_the_worker_and_its_folder_is_gone(tmp_path, made):
    note = tmp_path / "note.txt"
    note.write_text("budgeted hello")
    job = run_job(load_settings(OPENAI_API_KEY="sk-budget-secret-1"), "preview",
                  {"tool": "read_file", "path": str(note)})
    assert job.ok and job.value["ok"] and "budgeted hello" in job.value["output"], job
    assert made and not _left(made)


def test_a_bomb_is_refused_in_the_worker(tmp_path):
    job = run_job(load_settings(), "preview",
                  {"tool": "parse_pdf", "path": str(bombs.huge_page_pdf(tmp_path / "p.pdf"))})
    assert not job.ok and "VISITOR_MAX_PIXELS" in job.refusal


def test_the_wall_clock_limit_stops_a_job(tmp_path, made):
    """Half a second is less than the worker needs to start: the job is killed and says which limit stopped it."""
    note = tmp_path / "note.txt"
    note.write_text("x")
    job = run_job(load_settings(VISITOR_JOB_SECONDS=0.5), "preview", {"tool": "read_file", "path": str(note)})
    assert not job.ok and "VISITOR_JOB_SECONDS" in job.refusal, job
    assert made and not _left(made)


def test_local_tasks_come_back_as_samples(tmp_path):
    samples = load_local_tasks(load_settings(), "validation", None, str(make_gaia_folder(tmp_path)))
    assert len(samples) == 6 and all(s.question for s in samples)
    with_file = next(s for s in samples if s.file_name == "sales.xlsx")
    assert with_file.file_path is not None and with_file.file_path.is_file()


def test_a_refusal_imports_neither_the_agent_nor_the_tools(tmp_path):
    """The worker is started for every visitor job: refusing a bomb must not pay for langchain or gradio."""
    request = {"kind": "preview", "args": {"tool": "parse_pdf", "path": str(bombs.huge_page_pdf(tmp_path / "p.pdf"))},
               "settings": {}}
    code = ("import sys, visitors.job_worker as w\nw.main()\n"
            "print('\\nloaded:', sorted(m for m in ('langchain_core', 'gradio', 'agent.pipeline',"
            " 'tools.core.registry', 'pandas', 'torch') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], input=json.dumps(request), capture_output=True, text=True,
                          cwd=ROOT, env=base_env(), timeout=60, check=True)
    reply, loaded = done.stdout.rstrip("\n").rsplit("\n", 1)
    assert json.loads(reply)["ok"] is False and "VISITOR_MAX_PIXELS" in reply, done.stdout
    assert loaded == "loaded: []", loaded
