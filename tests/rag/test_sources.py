"""Reading knowledge from GAIA folders, JSONL files and finished runs."""

from __future__ import annotations

import json

import pytest

from rag.sources import SourceError, find_gaia_metadata, from_gaia_dir, from_jsonl, from_run
from tests.support.gaia_fixture import FIXTURE_TASKS, VALIDATION_ANSWERS, make_gaia_folder


@pytest.mark.parametrize("fmt,level_as_str", [("parquet", True), ("parquet", False), ("jsonl", False), ("jsonl", True)])
def test_gaia_folder(tmp_path, fmt, level_as_str):
    root = make_gaia_folder(tmp_path / "gaia", fmt=fmt, level_as_str=level_as_str)
    entries = from_gaia_dir(root, "validation")
    assert len(entries) == len(FIXTURE_TASKS)  # per-level parquet copies are not counted twice
    assert {e.task_id: e.answer for e in entries} == VALIDATION_ANSWERS
    assert sorted(e.level for e in entries) == sorted(t.level for t in FIXTURE_TASKS)
    assert {e.source for e in entries} == {"gaia:validation"}
    assert {e.file_name for e in entries if e.file_name} == {t.file_name for t in FIXTURE_TASKS if t.file_name}


def test_gaia_split_folder_given_directly(tmp_path):
    root = make_gaia_folder(tmp_path / "gaia")
    assert find_gaia_metadata(root / "2023" / "validation", "validation").name == "metadata.parquet"
    assert len(from_gaia_dir(root / "2023" / "validation")) == len(FIXTURE_TASKS)


def test_gaia_test_split_has_no_answers(tmp_path):
    root = make_gaia_folder(tmp_path / "gaia", split="test")
    with pytest.raises(SourceError, match="no rows with a known answer"):
        from_gaia_dir(root, "test")


def test_gaia_missing_split(tmp_path):
    with pytest.raises(SourceError, match="no GAIA metadata for split 'validation'"):
        from_gaia_dir(tmp_path, "validation")


def test_jsonl_pairs(tmp_path):
    path = tmp_path / "qa.jsonl"
    path.write_text(json.dumps({"question": "Q1?", "answer": "A1"}) + "\n\n"
                    + json.dumps({"question": "Q2?", "answer": 7, "task_id": "t2", "level": "2", "source": "mine"})
                    + "\n")
    first, second = from_jsonl(path)
    assert (first.question, first.answer, first.task_id, first.source) == ("Q1?", "A1", None, "jsonl:qa.jsonl")
    assert (second.answer, second.task_id, second.level, second.source) == ("7", "t2", 2, "mine")


@pytest.mark.parametrize("content,message", [
    ('{"question": "Q?"}\n', "line 1 needs non-empty 'question' and 'answer'"),
    ('{"question": "Q?", "answer": "A"}\nnot json\n', "line 2 is not JSON"),
    ('[1, 2]\n', "line 1 is not a JSON object"),
    ("", "holds no question/answer lines"),
])
def test_jsonl_errors_name_the_line(tmp_path, content, message):
    path = tmp_path / "bad.jsonl"
    path.write_text(content)
    with pytest.raises(SourceError, match=message):
        from_jsonl(path)


def test_jsonl_missing_file(tmp_path):
    with pytest.raises(SourceError, match="does not exist"):
        from_jsonl(tmp_path / "nope.jsonl")


def test_finished_run_only_correct_tasks(tmp_path):
    run = tmp_path / "run-1"
    run.mkdir()
    records = [
        {"task_id": "a", "question": "Right?", "expected": "yes", "predicted": "Yes", "correct": True, "level": 1},
        {"task_id": "b", "question": "Wrong?", "expected": "no", "predicted": "yes", "correct": False},
        {"task_id": "c", "question": "Unscored?", "expected": None, "predicted": "x", "correct": None},
    ]
    (run / "details.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    (entry,) = from_run(run)
    assert (entry.task_id, entry.question, entry.answer, entry.level, entry.source) == ("a", "Right?", "yes", 1,
                                                                                        "run:run-1")


def test_finished_run_without_correct_tasks(tmp_path):
    (tmp_path / "details.jsonl").write_text(json.dumps({"task_id": "b", "question": "Q", "correct": False}) + "\n")
    with pytest.raises(SourceError, match="no task scored correct"):
        from_run(tmp_path)
    with pytest.raises(SourceError, match="details.jsonl does not exist"):
        from_run(tmp_path / "missing")
