"""The batch runner against the real pipeline and a scripted OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import json
import threading
from itertools import pairwise
from pathlib import Path

import pytest

from agent.pipeline import Pipeline
from config import load_settings
from evaluation.dataset import load_split
from evaluation.records import TaskRecord
from evaluation.runner import Progress, RunConfig, RunError, run_batch, run_evaluation
from evaluation.selection import SelectionError
from tests.support.gaia_fixture import answer_for, make_gaia_folder
from tests.support.openai_server import ScriptedOpenAI, call, fail, first_user_text, say, tool_results

OUTPUT_FILES = ("checkpoint.jsonl", "details.jsonl", "results.jsonl", "summary.json", "report.md", "accuracy.png",
                "SUBMISSION_GUIDE.md")


def solve_with_tool(body: dict) -> object:
    """Each fixture task: one calculator call, then the expected answer (two model requests per task)."""
    if not tool_results(body):
        return call("calculator", expression="20+22")
    return say(f"FINAL ANSWER: {answer_for(first_user_text(body))}")


class Switch:
    """The module server's script, swapped per test."""

    def __init__(self) -> None:
        self.script = solve_with_tool

    def __call__(self, body: dict) -> object:
        return self.script(body)


@pytest.fixture(scope="module")
def server():
    switch = Switch()
    with ScriptedOpenAI(switch, latency=0.15) as srv:
        srv.switch = switch
        yield srv


@pytest.fixture(scope="module")
def pipeline(server, tmp_path_factory):
    settings = load_settings(OPENAI_BASE_URL=server.url, OPENAI_API_KEY="sk-test", RAG_ENABLED=False,
                             RAG_INDEX_DIR=tmp_path_factory.mktemp("rag"), RATE_LIMIT_RETRY_BASE_DELAY=0.05,
                             RATE_LIMIT_RETRY_MAX=2)
    pipe = Pipeline(settings)
    pipe.preload()
    return pipe


@pytest.fixture
def samples(tmp_path):
    return list(load_split("validation", data_dir=make_gaia_folder(tmp_path / "gaia")))


@pytest.fixture(autouse=True)
def reset_script(server):
    server.switch.script = solve_with_tool
    yield


def run_settings(**kw):
    base = dict(OPENAI_BASE_URL="http://unused", BATCH_QUESTION_DELAY=0, TASK_RETRY_MAX=1,
                RATE_LIMIT_RETRY_BASE_DELAY=0.05)
    return load_settings(**{**base, **kw})


def questions_seen(server, since: int) -> list[str]:
    return [first_user_text(r.body) for r in server.requests[since:]]


def asked(texts: list[str], sample) -> int:
    return sum(sample.question in t for t in texts)


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def max_in_flight(spans: list[tuple[float, float]]) -> int:
    """The most (start, end) spans open at one time."""
    edges = sorted([(start, 1) for start, _ in spans] + [(end, -1) for _, end in spans], key=lambda e: (e[0], e[1]))
    open_now = most = 0
    for _, step in edges:
        open_now += step
        most = max(most, open_now)
    return most


def test_concurrent_batch_answers_every_task_and_writes_every_file(server, pipeline, samples, tmp_path):
    progress: list[Progress] = []
    since = len(server.requests)
    result = run_batch(samples, pipeline, RunConfig(concurrency=3, output_dir=tmp_path / "run"), run_settings(),
                       on_progress=progress.append)
    assert not result.stopped
    assert [r.task_id for r in result.records] == [s.task_id for s in samples]
    assert all(r.correct for r in result.records), [(r.predicted, r.expected, r.error) for r in result.records]
    for name in OUTPUT_FILES:
        assert (result.output_dir / name).is_file(), name
    seen = questions_seen(server, since)
    assert all(asked(seen, s) == 2 for s in samples)
    details = read_jsonl(result.output_dir / "details.jsonl")
    first = details[0]
    for key in ("task_id", "question", "level", "file_type", "expected", "predicted", "correct", "explanation",
                "source", "steps", "tools_used", "prompt_tokens", "completion_tokens", "latency_s", "retries",
                "error", "failure_category", "reasoning_trace"):
        assert key in first, key
    assert first["tools_used"] == ["calculator"] and first["steps"] == 2 and first["prompt_tokens"] == 22
    assert first["explanation"]["rule"] in ("number", "list", "string")
    xlsx = next(d for d in details if d["file_type"] == "xlsx")
    assert xlsx["expected"] == "60"
    results = read_jsonl(result.output_dir / "results.jsonl")
    assert [set(r) for r in results] == [{"task_id", "model_answer", "reasoning_trace"}] * 6
    assert "calculator(" in results[0]["reasoning_trace"]
    summary = json.loads((result.output_dir / "summary.json").read_text())
    assert summary["exact_match_rate"] == 1.0 and summary["total"] == 6 and summary["correct"] == 6
    assert set(summary["level_metrics"]) == {"1", "2", "3"}
    starts = min(d["started_at"] for d in details)
    ends = max(d["finished_at"] for d in details)
    assert summary["elapsed_s"] == pytest.approx(ends - starts, abs=0.01)
    # Several at once, never more than three: each task waits 2 x 0.15 s on the server, so the first ones overlap.
    assert 2 <= max_in_flight([(d["started_at"], d["finished_at"]) for d in details]) <= 3
    report = (result.output_dir / "report.md").read_text()
    assert "accuracy.png" in report
    assert (result.output_dir / "accuracy.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert progress[0].done == 0 and progress[0].eta_s is None
    assert progress[-1].done == 6 and progress[-1].correct == 6 and progress[-1].scored == 6
    assert progress[-1].eta_s == 0 and isinstance(progress[-1].last, TaskRecord)


def test_429_with_retry_after_pauses_everyone_and_fails_no_task(server, pipeline, samples, tmp_path):
    lock = threading.Lock()
    count = {"n": 0}

    def script(body):
        with lock:
            count["n"] += 1
            if count["n"] <= 3:
                return fail(429, retry_after=0.6)
        return solve_with_tool(body)

    server.switch.script = script
    since = len(server.requests)
    result = run_batch(samples, pipeline, RunConfig(concurrency=3, output_dir=tmp_path / "run"), run_settings())
    assert all(r.correct and r.error is None for r in result.records)
    assert sum(r.retries for r in result.records) == 3
    assert result.summary.meta["rate_limited_429"] == 3
    times = [r.at for r in server.requests[since:]]
    # The three first requests were refused; nobody may come back before the Retry-After has passed.
    assert min(times[3:]) - times[2] >= 0.55


def test_injected_500s_are_retried_and_a_task_that_keeps_failing_is_recorded_not_dropped(server, pipeline, samples,
                                                                                         tmp_path):
    flaky, broken = samples[0], samples[1]
    seen = {"flaky": 0}
    lock = threading.Lock()

    def script(body):
        text = first_user_text(body)
        if broken.question in text:
            return fail(500)
        if flaky.question in text:
            with lock:
                seen["flaky"] += 1
                if seen["flaky"] == 1:
                    return fail(500)
        return solve_with_tool(body)

    server.switch.script = script
    since = len(server.requests)
    result = run_batch(samples, pipeline, RunConfig(concurrency=2, output_dir=tmp_path / "run"),
                       run_settings(TASK_RETRY_MAX=1))
    by_id = {r.task_id: r for r in result.records}
    assert len(by_id) == 6
    assert by_id[flaky.task_id].correct and by_id[flaky.task_id].retries == 1
    bad = by_id[broken.task_id]
    assert bad.error and "500" in bad.error and bad.predicted == "" and bad.correct is False
    assert bad.tries == 1 and bad.failure_category == "llm_error" and bad.permanent_error
    # The same 500 twice is permanent: 2 requests (not RATE_LIMIT_RETRY_MAX + 1), and the task is not re-run
    assert asked(questions_seen(server, since), broken) == 2
    assert "same error twice" in bad.error
    assert result.summary.errors == 1


def test_stop_keeps_finished_tasks_and_resume_finishes_the_rest_without_asking_again(server, pipeline, samples,
                                                                                     tmp_path):
    stop = threading.Event()
    out = tmp_path / "run"

    def on_progress(p: Progress) -> None:
        if p.done >= 2:
            stop.set()

    first = run_batch(samples, pipeline, RunConfig(concurrency=2, output_dir=out), run_settings(),
                      on_progress=on_progress, stop=stop)
    assert first.stopped
    done_ids = {r.task_id for r in first.records}
    assert 2 <= len(done_ids) < 6
    assert len(read_jsonl(out / "results.jsonl")) == len(done_ids)
    assert first.summary.meta["remaining"] == 6 - len(done_ids)

    since = len(server.requests)
    second = run_batch(samples, pipeline, RunConfig(concurrency=2, output_dir=out, resume=True), run_settings())
    assert not second.stopped
    seen = questions_seen(server, since)
    for s in samples:
        assert asked(seen, s) == (0 if s.task_id in done_ids else 2), s.task_id
    ids = [d["task_id"] for d in read_jsonl(out / "details.jsonl")]
    assert sorted(ids) == sorted(s.task_id for s in samples) and len(set(ids)) == 6
    assert len(read_jsonl(out / "results.jsonl")) == 6
    assert second.summary.meta["sessions"] == 2


def test_resume_with_retry_errors_solves_only_the_errored_tasks_again(server, pipeline, samples, tmp_path):
    broken = samples[0]

    def outage(body):
        return fail(500) if broken.question in first_user_text(body) else solve_with_tool(body)

    out = tmp_path / "run"
    server.switch.script = outage
    first = run_batch(samples, pipeline, RunConfig(concurrency=2, output_dir=out), run_settings(TASK_RETRY_MAX=0))
    assert {r.task_id: r for r in first.records}[broken.task_id].error
    server.switch.script = solve_with_tool  # the provider is back

    since = len(server.requests)
    plain = run_batch(samples, pipeline, RunConfig(output_dir=out, resume=True), run_settings())
    assert asked(questions_seen(server, since), broken) == 0 and plain.summary.errors == 1

    since = len(server.requests)
    again = run_batch(samples, pipeline, RunConfig(output_dir=out, resume=True, retry_errors=True), run_settings())
    seen = questions_seen(server, since)
    assert all(asked(seen, s) == (2 if s.task_id == broken.task_id else 0) for s in samples)
    assert again.summary.errors == 0 and again.summary.correct == 6
    ids = [d["task_id"] for d in read_jsonl(out / "details.jsonl")]
    assert sorted(ids) == sorted(s.task_id for s in samples)


def test_reusing_an_output_dir_without_resume_is_refused(server, pipeline, samples, tmp_path):
    run_batch(samples[:1], pipeline, RunConfig(output_dir=tmp_path / "run"), run_settings())
    with pytest.raises(RunError, match="resume"):
        run_batch(samples[:1], pipeline, RunConfig(output_dir=tmp_path / "run"), run_settings())


def test_resume_without_output_dir_picks_the_newest_run_of_the_split(server, pipeline, samples, tmp_path):
    settings = run_settings(OUTPUT_DIR=tmp_path / "runs")
    first = run_batch(samples[:2], pipeline, RunConfig(), settings)
    assert first.output_dir.parent == tmp_path / "runs" and first.output_dir.name.startswith("validation-")
    since = len(server.requests)
    second = run_batch(samples[:3], pipeline, RunConfig(resume=True), settings)
    assert second.output_dir == first.output_dir
    assert len(server.requests) - since == 2 and len(second.records) == 3
    with pytest.raises(RunError, match="Nothing to resume"):
        run_batch(samples, pipeline, RunConfig(split="test", resume=True), settings)


def test_sequential_mode_keeps_the_question_delay_between_task_starts(server, pipeline, samples, tmp_path):
    result = run_batch(samples[:3], pipeline, RunConfig(concurrency=1, question_delay=0.4, output_dir=tmp_path / "r"),
                       run_settings())
    starts = sorted(r.started_at for r in result.records)
    assert all(b - a >= 0.39 for a, b in pairwise(starts))


def test_known_rpm_spaces_model_requests_across_tasks(server, pipeline, samples, tmp_path):
    since = len(server.requests)
    run_batch(samples[:4], pipeline, RunConfig(concurrency=4, output_dir=tmp_path / "r"),
              run_settings(LLM_REQUESTS_PER_MINUTE=150))  # one request per 0.4 s
    times = sorted(r.at for r in server.requests[since:])
    assert len(times) == 8
    # spaced at the limit overall (arrival times jitter on a busy machine: a quarter of the spacing is allowed)
    assert times[-1] - times[0] >= 7 * 0.4 * 0.75
    # ...and never a burst: unpaced, the four tasks' first requests arrive within milliseconds. Paced, any three
    # arrivals span two intervals (0.8 s), less what a busy machine's scheduling shifts one of them (beside two CPU
    # burners one reached the server 0.18 s late, so a single gap says little).
    assert min(c - a for a, c in zip(times, times[2:], strict=False)) >= 0.3


def test_test_split_export_check_says_what_is_missing(server, pipeline, tmp_path):
    server.switch.script = solve_with_tool
    test_samples = list(load_split("test", data_dir=make_gaia_folder(tmp_path / "gaia", split="test")))
    result = run_batch(test_samples[:2], pipeline, RunConfig(split="test", output_dir=tmp_path / "r"), run_settings(),
                       split_samples=test_samples)
    assert result.submission_problems and "missing 4 of 6" in result.submission_problems[0]
    assert all(r.correct is None and r.failure_category == "unscored" for r in result.records)
    assert result.summary.submission_check["problems"] == result.submission_problems
    full = run_batch(test_samples, pipeline, RunConfig(split="test", output_dir=tmp_path / "r2"), run_settings(),
                     split_samples=test_samples)
    assert full.submission_problems == [] and full.summary.submission_check["checked"]


def test_a_run_config_selects_by_level_ids_and_count_and_rejects_unknown_ids(samples):
    assert [s.level for s in RunConfig(level=2).choose(samples)] == [2, 2]
    assert len(RunConfig(max_samples=4).choose(samples)) == 4
    picked = RunConfig(task_ids=[samples[3].task_id, samples[0].task_id]).choose(samples)
    assert [s.task_id for s in picked] == [samples[0].task_id, samples[3].task_id]
    with pytest.raises(SelectionError, match="Unknown task id"):
        RunConfig(task_ids=["nope"]).choose(samples)
    with pytest.raises(SelectionError, match="at least 1"):
        RunConfig(max_samples=0).choose(samples)


def test_run_evaluation_loads_a_local_jsonl_folder_and_runs_the_level(server, pipeline, tmp_path):
    root = make_gaia_folder(tmp_path / "gaia", fmt="jsonl", level_as_str=False)
    config = RunConfig(data_dir=root, level=3, output_dir=tmp_path / "r", use_rag=False)
    result = run_evaluation(config, run_settings(), pipeline)
    assert [r.level for r in result.records] == [3, 3] and all(r.correct for r in result.records)


def test_run_evaluation_without_a_model_says_what_to_set(tmp_path):
    root = make_gaia_folder(tmp_path / "gaia")
    with pytest.raises(RunError, match="OPENAI_API_KEY"):
        run_evaluation(RunConfig(data_dir=root, output_dir=tmp_path / "r"), load_settings())


def test_a_folder_in_use_by_another_run_is_refused(server, pipeline, samples, tmp_path):
    from evaluation.checkpoint import Checkpoint

    out = tmp_path / "run"
    with Checkpoint(out / "checkpoint.jsonl", session="other").exclusive(), \
            pytest.raises(RunError, match="Another run is still writing"):
        run_batch(samples[:1], pipeline, RunConfig(output_dir=out, resume=True), run_settings())
    assert run_batch(samples[:1], pipeline, RunConfig(output_dir=out, resume=True), run_settings()).records


def test_a_custom_scorer_decides_the_verdicts_and_is_named_in_the_records(server, pipeline, samples, tmp_path,
                                                                           monkeypatch):
    from evaluation.scorer import SCORERS, Score

    def nobody_is_right(answer: str, truth: str) -> Score:
        return Score(correct=False, scorer="strict-judge", note=f"{answer!r} vs {truth!r}")

    monkeypatch.setitem(SCORERS, "strict-judge", nobody_is_right)  # a scorer is chosen by its SCORERS name
    config = RunConfig(concurrency=2, output_dir=tmp_path / "run", scorer="strict-judge")
    result = run_batch(samples[:2], pipeline, config, run_settings())
    assert [r.correct for r in result.records] == [False, False]
    assert all(r.score is not None and r.score.scorer == "strict-judge" for r in result.records)
    details = read_jsonl(result.output_dir / "details.jsonl")
    assert details[0]["explanation"]["scorer"] == "strict-judge" and "vs" in details[0]["explanation"]["note"]
    assert json.loads((result.output_dir / "summary.json").read_text())["exact_match_rate"] == 0.0


def test_validation_export_is_checked_too_and_names_what_is_missing(server, pipeline, samples, tmp_path):
    result = run_batch(samples[:5], pipeline, RunConfig(concurrency=3, output_dir=tmp_path / "r"), run_settings(),
                       split_samples=samples)
    assert result.submission_problems[0] == f"missing 1 of 6 task(s): {samples[5].task_id}"
    assert f"level {samples[5].level}: 1 of 2" in result.submission_problems[1]
    assert result.summary.submission_check == {"checked": True, "split": "validation",
                                                  "problems": result.submission_problems}
