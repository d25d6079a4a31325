"""The repair loop end to end: a batch with 3 wrong tasks, their re-run replayed from the tool cache, compare.

Through the real pipeline and OpenAI client (scripted server on 127.0.0.1), a real loopback web site (its
requests counted) and the real sandbox (its runs counted by a spy around the real `run_sandboxed`).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import tools.isolation.tool as sandbox_tool
from agent.events import ToolResult
from agent.pipeline import Pipeline
from config import Settings, load_settings
from evaluation.compare import compare_runs
from evaluation.rerun import failed_task_ids, rerun_config
from evaluation.run_folder import RunFolder
from evaluation.runner import RunConfig, RunError, run_evaluation
from tests.support.gaia_fixture import FixtureTask, make_gaia_folder
from tests.support.openai_server import ScriptedOpenAI, call, first_user_text, say, tool_results
from tests.support.web_server import LocalWebServer
from tests.support.web_server import Reply as WebReply
from tools.core.replay_cache import ToolCache

API_KEY = "sk-repair-secret-4242"
TASKS = [FixtureTask(k, f"What is the code word of {k}? Read the page.", 1, f"word-{k}") for k in "abcd"]


class Model:
    """Per task: fetch its page, run a line of Python, answer; `wrong` tasks answer badly (the first run)."""

    def __init__(self, site: LocalWebServer) -> None:
        self.site, self.wrong, self.variant = site, {"b", "c", "d"}, ""

    def __call__(self, body: dict) -> object:
        text = first_user_text(body)
        key = next(t.key for t in TASKS if t.question in text)
        results = tool_results(body)
        if not results:
            suffix = self.variant if key == "d" else ""
            return call("fetch_webpage", url=self.site.url(f"/page/{key}{suffix}"))
        if len(results) == 1:
            return call("run_python", code=f"print('ran {key}')")
        return say(f"FINAL ANSWER: {'nope' if key in self.wrong else f'word-{key}'}")


@pytest.fixture(scope="module")
def site():
    routes = {f"/page/{t.key}{v}": WebReply(200, f"<html><body><p>The code word is {t.answer}.</p></body></html>")
              for t in TASKS for v in ("", "-v2")}
    with LocalWebServer(routes) as server:
        yield server


@pytest.fixture
def sandbox_runs(monkeypatch):
    runs: list[str] = []
    real = sandbox_tool.run_sandboxed

    def counted(code: str, **kw: object) -> object:
        runs.append(code)
        return real(code, **kw)

    monkeypatch.setattr(sandbox_tool, "run_sandboxed", counted)
    return runs


def _pipeline(server: ScriptedOpenAI, site: LocalWebServer, tmp_path: Path) -> tuple[Settings, Pipeline]:
    """Settings for the scripted model over the site (no delay, no retries) and a pipeline on them."""
    settings = load_settings(OPENAI_BASE_URL=server.url, OPENAI_API_KEY=API_KEY, RAG_ENABLED=False,
                             RAG_INDEX_DIR=tmp_path / "rag", FETCH_ALLOWED_HOSTS=site.host_port,
                             BATCH_QUESTION_DELAY=0, TASK_RETRY_MAX=0)
    return settings, Pipeline(settings)


def test_rerun_replays_only_the_failures_and_compare_shows_the_repair(site, sandbox_runs, tmp_path):
    root = make_gaia_folder(tmp_path / "gaia", tasks=TASKS)
    model = Model(site)
    with ScriptedOpenAI(model) as server:
        settings, pipeline = _pipeline(server, site, tmp_path)
        first = run_evaluation(RunConfig(data_dir=root, output_dir=tmp_path / "run1", use_rag=False, concurrency=2),
                               settings, pipeline)
        assert sorted(r.correct for r in first.records) == [False, False, False, True]
        assert len(site.requests) == 4 and len(sandbox_runs) == 4
        by_key = {t.task_id(): t.key for t in TASKS}
        assert sorted(by_key[t] for t in failed_task_ids(tmp_path / "run1")) == ["b", "c", "d"]

        model.wrong, model.variant = {"c"}, ""  # the "fix": b and d answer right now, c still does not
        asked_before = len(server.requests)
        again = rerun_config(tmp_path / "run1", RunConfig(output_dir=tmp_path / "run2", use_rag=False,
                                                          replay_from=tmp_path / "run1", max_iterations=7))
        second = run_evaluation(again, settings, pipeline)
        questions = {first_user_text(r.body) for r in server.requests[asked_before:]}
    assert sorted(by_key[r.task_id] for r in second.records) == ["b", "c", "d"]
    assert not any(TASKS[0].question in q for q in questions)  # the correct task was not asked again
    assert len(site.requests) == 4 and len(sandbox_runs) == 4  # every call matched: none went live

    meta = second.summary.meta
    assert meta["tool_cache"]["replayed"] == 6 and meta["parent"] == str((tmp_path / "run1").resolve())
    info = RunFolder(tmp_path / "run2").info()
    assert info is not None and info.parent == str((tmp_path / "run1").resolve())
    assert info.changed_settings["max_iterations"]["now"] == 7
    cmp = compare_runs(tmp_path / "run1", tmp_path / "run2")
    assert sorted(by_key[t] for t in cmp.fixed) == ["b", "d"] and [by_key[t] for t in cmp.still_wrong] == ["c"]
    text = cmp.to_markdown()
    assert "| plain_wrong | 2 | 0 | 1 |" in text and "still wrong" in text
    report = (tmp_path / "run1" / "report.md").read_text(encoding="utf-8")
    assert "## Repair hints" in report and "| wrong_fact | 3 |" in report
    for path in (tmp_path / "run1" / "tool_cache").rglob("*"):
        assert path.is_dir() or API_KEY not in path.read_text(encoding="utf-8")


def test_a_call_that_does_not_match_runs_live_and_replayed_results_are_marked(site, sandbox_runs, tmp_path):
    root = make_gaia_folder(tmp_path / "gaia", tasks=TASKS[3:])
    model = Model(site)
    with ScriptedOpenAI(model) as server:
        settings, pipeline = _pipeline(server, site, tmp_path)
        run_evaluation(RunConfig(data_dir=root, output_dir=tmp_path / "run1", use_rag=False), settings, pipeline)
        seen = len(site.requests)
        model.variant = "-v2"  # another page: the fetch is live, the Python run still matches
        cache = ToolCache(settings, record_dir=tmp_path / "run2", replay_dir=tmp_path / "run1")
        solution = pipeline.solve(TASKS[3].question, task_id=TASKS[3].task_id(), use_rag=False, tool_cache=cache)
    results = [e for e in solution.events if isinstance(e, ToolResult)]
    assert [(r.name, r.replayed) for r in results] == [("fetch_webpage", False), ("run_python", True)]
    assert len(site.requests) == seen + 1 and len(sandbox_runs) == 1
    assert cache.stats.replayed == 1 and cache.stats.recorded == 2


def test_the_cache_never_holds_a_secret(tmp_path):
    settings = load_settings(OPENAI_API_KEY=API_KEY, TOOL_CACHE_MAX_MB=0.001)
    from tools.core.replay_cache import CachedResult

    cache = ToolCache(settings, record_dir=tmp_path)
    assert not cache.keep("fetch_webpage", {"url": f"http://x/?key={API_KEY}"}, "t", CachedResult("ok", True))
    assert not cache.keep("fetch_webpage", {"url": "http://x/"}, "t", CachedResult(f"key {API_KEY}", True))
    assert cache.keep("fetch_webpage", {"url": "http://x/"}, "t", CachedResult("fine", True))
    assert not cache.keep("fetch_webpage", {"url": "http://y/"}, "t", CachedResult("x" * 2000, True))  # the cap
    assert (cache.stats.refused_secret, cache.stats.recorded, cache.stats.over_cap) == (2, 1, 1)
    stored = "".join(p.read_text(encoding="utf-8") for p in (tmp_path / "tool_cache").rglob("*") if p.is_file())
    assert API_KEY not in stored and "fine" in stored
    replay = ToolCache(settings, record_dir=None, replay_dir=tmp_path)
    assert replay.replay("fetch_webpage", {"url": "http://x/"}, "t") == CachedResult("fine", True)
    assert replay.replay("fetch_webpage", {"url": "http://x/"}, "other-task") is None


def test_rerun_of_a_run_without_failures_is_refused(tmp_path):
    (tmp_path / "run.json").write_text(json.dumps({"split": "validation"}), encoding="utf-8")
    (tmp_path / "details.jsonl").write_text(json.dumps({"task_id": "t1", "question": "q", "correct": True}) + "\n",
                                            encoding="utf-8")
    with pytest.raises(RunError, match="nothing to re-run"):
        rerun_config(Path(tmp_path), RunConfig())


def test_cli_refuses_only_category_without_a_run_to_rerun(capsys):
    from evaluation.__main__ import main

    assert main(["run", "--only-category", "tool_failed"]) == 2
    assert "--only-category narrows --rerun-failed" in capsys.readouterr().err
