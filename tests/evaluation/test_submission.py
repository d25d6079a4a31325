"""results.jsonl in leaderboard format, the export check, and the submission guide."""

from __future__ import annotations

import json

from evaluation.dataset import load_split
from evaluation.records import TaskRecord
from evaluation.scorer import question_scorer
from evaluation.submission import check_submission, write_results_jsonl, write_submission_guide
from tests.support.gaia_fixture import FIXTURE_TASKS, make_gaia_folder


def _records(samples, answer=lambda s: "42") -> list[TaskRecord]:
    return [TaskRecord(task_id=s.task_id, question=s.question, predicted=answer(s),
                       reasoning_trace=f"solved {s.task_id}")
            for s in samples]


def test_results_jsonl_format(tmp_path):
    records = [
        TaskRecord(task_id="a", question="q", predicted="Paris", reasoning_trace="searched"),
        TaskRecord(task_id="b", question="q", predicted="Zürich, 3", reasoning_trace=""),
    ]
    path = write_results_jsonl(records, tmp_path / "out" / "results.jsonl")
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert lines == [
        {"task_id": "a", "model_answer": "Paris", "reasoning_trace": "searched"},
        {"task_id": "b", "model_answer": "Zürich, 3", "reasoning_trace": ""},
    ]
    write_results_jsonl(records, path, include_reasoning=False)
    assert json.loads(path.read_text().splitlines()[0]) == {"task_id": "a", "model_answer": "Paris"}


def test_results_jsonl_accepts_result_dicts(tmp_path):
    path = write_results_jsonl([{"task_id": "a", "model_answer": "1", "reasoning_trace": None}], tmp_path / "r.jsonl")
    assert json.loads(path.read_text()) == {"task_id": "a", "model_answer": "1", "reasoning_trace": ""}


def test_perfect_fixture_submission_scores_full_marks(tmp_path):
    samples = load_split("validation", data_dir=make_gaia_folder(tmp_path))
    records = _records(samples, lambda s: s.final_answer)
    assert check_submission(records, samples) == []
    path = write_results_jsonl(records, tmp_path / "results.jsonl")
    truth = {s.task_id: s.final_answer for s in samples}
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert all(question_scorer(line["model_answer"], truth[line["task_id"]]) for line in lines)


def test_check_reports_missing_duplicate_unknown_and_bad_answers(tmp_path):
    samples = load_split("test", data_dir=make_gaia_folder(tmp_path, split="test"))
    records = _records(samples)
    del records[0]
    records.append(records[0])
    records.append(TaskRecord(task_id="not-a-task", question="q", predicted="1"))
    records[1].predicted = "   "
    records[2].predicted = 7  # a runner bug the check must catch
    problems = check_submission(records, samples)
    text = "\n".join(problems)
    assert f"missing 1 of {len(FIXTURE_TASKS)} task(s): {samples[0].task_id}" in text
    assert f"appear more than once: {samples[1].task_id} (x2)" in text
    assert "not in the split" in text and "not-a-task" in text
    assert f"not strings: {samples[3].task_id}" in text
    assert f"empty: {samples[2].task_id}" in text
    assert len(problems) == 5


def test_check_with_dicts_and_long_lists(tmp_path):
    samples = load_split("validation", data_dir=make_gaia_folder(tmp_path))
    assert check_submission([{"task_id": s.task_id, "model_answer": "x"} for s in samples], samples) == []
    problems = check_submission([], samples)
    assert problems == [f"missing {len(samples)} of {len(samples)} task(s): " + ", ".join(s.task_id for s in samples),
                        "per-level counts differ from the split's (the leaderboard needs them exact): "
                        "level 1: 0 of 2, level 2: 0 of 2, level 3: 0 of 2"]  # issue 11: the Space's level check
    many = [TaskRecord(task_id=f"x{i}", question="q", predicted="") for i in range(30)]
    assert any("… and 10 more" in p for p in check_submission(many, []))


def test_submission_guide(tmp_path):
    path = write_submission_guide(tmp_path / "run", model_name="gaia-agent-gpt-4o")
    text = path.read_text()
    assert path.name == "SUBMISSION_GUIDE.md"
    assert "https://huggingface.co/spaces/gaia-benchmark/leaderboard" in text
    for field in ("Split", "Model name", "Model family", "System prompt", "Url", "Organisation", "Contact email",
                  "File"):
        assert f"**{field}" in text, field
    assert "gaia-agent-gpt-4o" in text and "results.jsonl" in text


def test_a_validation_export_with_a_missing_task_is_refused_with_the_task_named(tmp_path):
    samples = load_split("validation", data_dir=make_gaia_folder(tmp_path))
    gone = next(s for s in samples if s.level == 2)
    problems = check_submission(_records([s for s in samples if s is not gone]), samples)
    assert problems[0] == f"missing 1 of {len(samples)} task(s): {gone.task_id}"
    wanted = sum(s.level == 2 for s in samples)
    assert problems[1] == ("per-level counts differ from the split's (the leaderboard needs them exact): "
                           f"level 2: {wanted - 1} of {wanted}")
    assert check_submission(_records(samples), samples) == []


def test_a_duplicated_line_breaks_the_level_count_too(tmp_path):
    samples = load_split("validation", data_dir=make_gaia_folder(tmp_path))
    records = _records(samples) + _records(samples[:1])
    problems = check_submission(records, samples)
    assert any("appear more than once" in p for p in problems)
    assert any(p.endswith(f"level {samples[0].level}: {sum(s.level == samples[0].level for s in samples) + 1} of "
                          f"{sum(s.level == samples[0].level for s in samples)}") for p in problems)


def test_results_jsonl_is_ascii_safe(tmp_path):
    path = write_results_jsonl([TaskRecord(task_id="a", question="q", predicted="Zürich, 東京", reasoning_trace="é")],
                               tmp_path / "results.jsonl")
    raw = path.read_bytes()
    assert raw.isascii() and b"\\u00fc" in raw
    assert json.loads(raw.decode("ascii"))["model_answer"] == "Zürich, 東京"
