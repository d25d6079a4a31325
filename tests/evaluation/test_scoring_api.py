"""The scoring API client and the per-task cumulative submission run, against a local scoring server."""

from __future__ import annotations

import pytest

from agent.pipeline import Pipeline
from config import load_settings
from evaluation.scoring_api import ScoringAPIClient, ScoringAPIError, run_api_evaluation
from tests.support.gaia_fixture import FIXTURE_TASKS, answer_for
from tests.support.openai_server import ScriptedOpenAI, call, fail, first_user_text, say, tool_results
from tests.support.scoring_server import ApiTask, ScoringServer

WRONG_KEY = "capital"


def api_tasks(tmp_path, order=None) -> list[ApiTask]:
    tasks = []
    for t in FIXTURE_TASKS if order is None else [next(x for x in FIXTURE_TASKS if x.key == k) for k in order]:
        content = b""
        if t.write_file is not None:
            path = tmp_path / "src" / t.file_name
            path.parent.mkdir(parents=True, exist_ok=True)
            t.write_file(path)
            content = path.read_bytes()
        tasks.append(ApiTask(task_id=f"api-{t.key}", question=t.question, answer=t.answer, level=str(t.level),
                             file_name=t.file_name, content=content))
    return tasks


def agent_script(body: dict):
    """Right answers, except the capital question (answered 'Lyon')."""
    text = first_user_text(body)
    if not tool_results(body):
        return call("calculator", expression="1+1")
    return say("FINAL ANSWER: Lyon" if "capital city" in text else f"FINAL ANSWER: {answer_for(text)}")


@pytest.fixture(scope="module")
def llm():
    with ScriptedOpenAI(agent_script, latency=0.05) as srv:
        yield srv


@pytest.fixture(scope="module")
def pipeline(llm, tmp_path_factory):
    settings = load_settings(OPENAI_BASE_URL=llm.url, OPENAI_API_KEY="sk-test", RAG_ENABLED=False,
                             RAG_INDEX_DIR=tmp_path_factory.mktemp("rag"))
    pipe = Pipeline(settings)
    pipe.preload()
    return pipe


@pytest.fixture
def api(tmp_path):
    with ScoringServer(api_tasks(tmp_path), hang_s=1.0) as srv:
        yield srv


def client_for(api, **kw) -> ScoringAPIClient:
    return ScoringAPIClient(api.url, **{"timeout": 0.4, "retries": 2, "backoff": 0.0, **kw})


def settings_for(api, tmp_path, **kw):
    return load_settings(SCORING_API_URL=api.url, OUTPUT_DIR=tmp_path / "runs", TASK_RETRY_MAX=0, **kw)


# -- client ---------------------------------------------------------------------------------------------
def test_questions_are_parsed_with_int_levels(api):
    qs = client_for(api).questions()
    assert len(qs) == 6 and qs[0].task_id == "api-arith" and qs[0].level == 1
    assert {q.file_name for q in qs} >= {"sales.xlsx", "program.py", ""}


def test_download_file_writes_the_bytes_and_none_without_file(api, tmp_path):
    client = client_for(api)
    path = client.download_file("api-py", tmp_path / "files", "program.py")
    assert path.name == "program.py" and path.read_bytes() == api.tasks["api-py"].content
    assert client.download_file("api-arith", tmp_path / "files") is None
    named = client.download_file("api-csv", tmp_path / "other")  # name from Content-Disposition
    assert named.name == "people.csv"


def test_submit_returns_the_verdict(api):
    verdict = client_for(api).submit("ann", "https://x", {"api-arith": "4", "api-capital": "Rome"})
    assert verdict["correct_count"] == 1 and verdict["total_attempted"] == 2
    assert api.submissions[-1]["answers"] == [{"task_id": "api-arith", "submitted_answer": "4"},
                                              {"task_id": "api-capital", "submitted_answer": "Rome"}]


def test_5xx_and_malformed_responses_are_retried_and_reported(api):
    api.inject("questions", 500, "malformed")
    client = client_for(api)
    assert len(client.questions()) == 6
    assert len(client.problems) == 2
    assert "HTTP 500" in client.problems[0] and "malformed response" in client.problems[1]


def test_timeouts_are_retried(api):
    api.inject("submit", "timeout")
    client = client_for(api)
    assert client.submit("ann", "x", {"api-arith": "4"})["correct_count"] == 1
    assert "no answer within 0.4s" in client.problems[0]


def test_giving_up_raises_a_clear_error_after_the_retries(api):
    api.inject("questions", 503, 503, 503)
    client = client_for(api)
    with pytest.raises(ScoringAPIError, match="HTTP 503.*gave up after 3 attempt"):
        client.questions()


def test_a_rejected_request_is_not_retried(api):
    client = client_for(api)
    with pytest.raises(ScoringAPIError, match="HTTP 422"):
        client.submit("", "x", {"api-arith": "4"})
    assert [c for c in api.calls if c[1] == "/submit"] == [("POST", "/submit")]


def test_unreachable_server_is_an_error_not_a_crash():
    client = ScoringAPIClient("http://127.0.0.1:9", timeout=0.3, retries=1, backoff=0)
    with pytest.raises(ScoringAPIError, match="connection failed"):
        client.questions()


# -- the run ----------------------------------------------------------------------------------------------
def test_run_submits_cumulatively_and_records_each_verdict(api, pipeline, tmp_path):
    settings = settings_for(api, tmp_path)
    seen = []
    result = run_api_evaluation("ann", "https://huggingface.co/spaces/ann/agent/tree/main", pipeline, settings,
                                concurrency=3, on_progress=seen.append, client=client_for(api))
    assert len(result.records) == 6 and not result.errors
    verdicts = {r.task_id: r.correct for r in result.records}
    assert verdicts == {f"api-{t.key}": t.key != WRONG_KEY for t in FIXTURE_TASKS}
    # every submission carries all answers so far: 1, 2, ..., 6
    assert [len(s["answers"]) for s in api.submissions] == [1, 2, 3, 4, 5, 6]
    assert all(s["agent_code"].endswith("/tree/main") for s in api.submissions)
    assert result.response["correct_count"] == 5 and result.to_dict()["correct_known"] == 5
    wrong = next(r for r in result.records if r.task_id == "api-capital")
    assert wrong.failure_category == "plain_wrong" and wrong.predicted == "Lyon"
    assert seen[-1].done == 6 and seen[-1].correct == 5
    for name in ("details.jsonl", "results.jsonl", "submissions.jsonl", "summary.json", "report.md",
                 "checkpoint.jsonl"):
        assert (result.output_dir / name).is_file(), name
    # the attachment was downloaded and handed to the agent
    assert (result.output_dir / "files" / "api-py" / "program.py").read_bytes() == api.tasks["api-py"].content


def test_failed_submissions_leave_tasks_pending_until_a_later_one_resolves_them(api, pipeline, tmp_path):
    api.inject("submit", 500, 500, 500, 500)  # the first two submissions fail (2 attempts each)
    result = run_api_evaluation("ann", "x", pipeline, settings_for(api, tmp_path), concurrency=1,
                                client=client_for(api, retries=1))
    assert [s.error is not None for s in result.submissions][:3] == [True, True, False]
    # the third submission raised correct_count by 3 with 3 pending answers: all three were right
    assert all(r.correct for r in result.records[:3])
    assert any("submission failed" in e for e in result.errors)
    assert result.response["correct_count"] == 5


def test_ambiguous_count_change_leaves_verdicts_unknown(tmp_path, pipeline):
    with ScoringServer(api_tasks(tmp_path, order=["arith", "capital", "xlsx"])) as api:
        api.inject("submit", 500)  # first submission fails; second covers a right and a wrong answer
        result = run_api_evaluation("ann", "x", pipeline, settings_for(api, tmp_path), concurrency=1,
                                    client=client_for(api, retries=0))
    verdicts = [r.correct for r in result.records]
    assert verdicts == [None, None, True]
    assert [r.failure_category for r in result.records][:2] == ["unscored", "unscored"]


def test_last_failed_submission_is_flushed_at_the_end(tmp_path, pipeline):
    with ScoringServer(api_tasks(tmp_path, order=["arith", "xlsx"])) as api:
        api.inject("submit", None, 502)  # the first submission goes through, the second fails
        result = run_api_evaluation("ann", "x", pipeline, settings_for(api, tmp_path), concurrency=1,
                                    client=client_for(api, retries=0))
    assert [s.error is not None for s in result.submissions] == [False, True, False]  # the flush re-submitted
    assert [r.correct for r in result.records] == [True, True]
    assert len(api.submissions[-1]["answers"]) == 2 and result.response["correct_count"] == 2


def test_questions_endpoint_down_is_reported_not_fatal(api, pipeline, tmp_path):
    api.inject("questions", 500, 500, 500)
    result = run_api_evaluation("ann", "x", pipeline, settings_for(api, tmp_path), concurrency=2,
                                client=client_for(api))
    assert result.records == [] and result.response is None
    assert "Could not fetch the questions" in result.errors[-1]
    assert result.to_dict()["message"] == "No submission succeeded."
    assert not result.output_dir.exists()  # a run that never started leaves no empty run folder


def test_missing_username_is_reported(api, pipeline, tmp_path):
    result = run_api_evaluation("  ", "x", pipeline, settings_for(api, tmp_path), concurrency=1, client=client_for(api))
    assert "username" in result.errors[0] and not api.submissions


def test_a_failed_attachment_download_is_reported_and_the_task_still_answered(api, pipeline, tmp_path):
    api.inject("files", 500, 500, 500)  # the first download gives up after 3 attempts
    result = run_api_evaluation("ann", "x", pipeline, settings_for(api, tmp_path), concurrency=1,
                                client=client_for(api))
    assert len(result.records) == 6 and len(api.submissions) == 6
    assert any("attachment sales.xlsx not downloaded" in e and "HTTP 500" in e for e in result.errors)
    assert any("HTTP 500" in p and "retrying" in p for p in result.errors)


# -- what issue 11 changed: exact match, RFC 5987 names, errored tasks not submitted, the Space link -----
def test_the_server_grades_by_exact_match_as_the_course_does(api):
    client = client_for(api)
    assert client.submit("ann", "x", {"api-capital": "paris"})["correct_count"] == 0
    assert client.submit("ann", "x", {"api-capital": " Paris "})["correct_count"] == 1
    assert client.submit("ann", "x", {"api-txt": "apple,banana,cherry"})["correct_count"] == 0


@pytest.mark.parametrize(("header", "name"), [
    ("attachment; filename*=utf-8''na%C3%AFve%20plan.xlsx", "naïve plan.xlsx"),
    ("attachment; filename=\"fallback.txt\"; filename*=UTF-8''%E2%82%AC%20rates.csv", "€ rates.csv"),
    ('attachment; filename="data.xlsx"', "data.xlsx"),
    ("attachment; filename=plain.csv", "plain.csv"),
    ('attachment; filename="say \\"hi\\".txt"', 'say "hi".txt'),
    ("attachment; filename*=bogus-charset''x%FF.txt; filename=\"safe.txt\"", "safe.txt"),
    ("attachment", None),
])
def test_content_disposition_names(header, name):
    from evaluation.scoring_client import disposition_filename

    assert disposition_filename(header) == name


def test_a_server_chosen_name_cannot_leave_the_task_folder():
    from evaluation.scoring_client import safe_file_name

    assert safe_file_name("../../etc/passwd", "t1") == "passwd"
    assert safe_file_name("..\\..\\boot.ini", "t1") == "boot.ini"
    assert safe_file_name("..", "t1") == "t1" and safe_file_name(None, "t1") == "t1"


def test_a_non_ascii_attachment_name_is_read_from_filename_star(tmp_path):
    task = ApiTask(task_id="t-uni", question="q", answer="a", file_name="résumé 2.txt", content=b"hello")
    with ScoringServer([task]) as api:
        path = client_for(api).download_file("t-uni", tmp_path / "files")
    assert path.name == "résumé 2.txt" and path.read_bytes() == b"hello"


def test_a_task_that_errored_is_not_submitted_and_its_verdict_stays_unknown(api, tmp_path):
    def script(body: dict):
        return fail(400) if "capital city" in first_user_text(body) else agent_script(body)

    with ScriptedOpenAI(script) as llm:
        settings = load_settings(OPENAI_BASE_URL=llm.url, OPENAI_API_KEY="sk-test", RAG_ENABLED=False,
                                 RAG_INDEX_DIR=tmp_path / "rag", RATE_LIMIT_RETRY_MAX=0,
                                 RATE_LIMIT_RETRY_BASE_DELAY=0.01)
        result = run_api_evaluation("ann", "x", Pipeline(settings), settings_for(api, tmp_path), concurrency=2,
                                    client=client_for(api))
    failed = next(r for r in result.records if r.task_id == "api-capital")
    assert failed.error and failed.correct is None and failed.failure_category == "llm_error"
    assert len(api.submissions) == 5
    assert all(a["task_id"] != "api-capital" for s in api.submissions for a in s["answers"])
    assert any(e.startswith("api-capital: not submitted") for e in result.errors)
    assert result.response["correct_count"] == 5 and result.to_dict()["verdict_known"] == 5


def test_verdicts_are_the_servers_and_the_report_says_so(api, pipeline, tmp_path):
    result = run_api_evaluation("ann", "x", pipeline, settings_for(api, tmp_path), concurrency=2,
                                client=client_for(api))
    assert {r.score.scorer for r in result.records} == {"scoring API (exact match)"}
    report = (result.output_dir / "report.md").read_text()
    assert "Correct per the server (scoring API (exact match))" in report
    assert "official scorer" not in report and "format-only misses counted" not in report


def test_the_space_link_is_the_agent_code_on_a_space(api, pipeline, tmp_path):
    from evaluation.scoring_api import agent_code_for

    settings = settings_for(api, tmp_path, SPACE_ID="ann/gaia-agent")
    assert agent_code_for(settings) == "https://huggingface.co/spaces/ann/gaia-agent/tree/main"
    assert agent_code_for(settings, "https://github.com/ann/agent") == "https://github.com/ann/agent"
    assert agent_code_for(settings_for(api, tmp_path)) == ""
    run_api_evaluation("ann", "", pipeline, settings, concurrency=3, client=client_for(api))
    assert {s["agent_code"] for s in api.submissions} == {"https://huggingface.co/spaces/ann/gaia-agent/tree/main"}


def test_an_unsafe_task_id_from_the_api_is_refused_before_any_download(tmp_path):
    with ScoringServer([ApiTask(task_id="../../x", question="q", answer="a")]) as srv, \
            pytest.raises(ScoringAPIError, match="task id '../../x' is refused"):
        client_for(srv).questions()
