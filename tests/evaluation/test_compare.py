"""Comparing two run folders through their details.jsonl."""

from __future__ import annotations

import json

import pytest

from evaluation.compare import CompareError, compare_runs
from evaluation.records import TaskRecord


def _run(folder, results: dict[str, tuple[int, bool | None]], extra: str = ""):
    folder.mkdir(parents=True)
    lines = [json.dumps(TaskRecord(task_id=t, question="q", level=lvl, correct=ok).to_dict())
             for t, (lvl, ok) in results.items()]
    (folder / "details.jsonl").write_text("\n".join(lines) + "\n" + extra)
    return folder


def test_fixed_regressed_unchanged_and_levels(tmp_path):
    a = _run(tmp_path / "a", {"t1": (1, False), "t2": (1, True), "t3": (2, True), "t4": (2, False),
                              "t5": (3, None), "t6": (3, True)})
    b = _run(tmp_path / "b", {"t1": (1, True), "t2": (1, True), "t3": (2, False), "t4": (2, False),
                              "t5": (3, True), "t7": (3, True)})
    c = compare_runs(a, b)
    assert c.fixed == ["t1"] and c.regressed == ["t3"]
    assert c.unchanged == ["t2", "t4"] and c.unchanged_correct == 1
    assert c.only_in_a == ["t6"] and c.only_in_b == ["t7"]
    # Levels over the 4 tasks scored in both (t5 is unscored in A, t6/t7 are in one run only).
    assert list(c.levels) == ["1", "2", "all"] and c.common == 4 and not c.same_tasks
    assert (c.levels["1"].a_accuracy, c.levels["1"].b_accuracy, c.levels["1"].delta) == (0.5, 1.0, 0.5)
    assert c.levels["2"].delta == -0.5
    assert (c.levels["all"].a_correct, c.levels["all"].b_correct, c.levels["all"].a_scored) == (2, 2, 4)
    # Each run alone, kept apart: not a delta over the same tasks.
    assert (c.own_levels["3"].a_scored, c.own_levels["3"].b_scored) == (1, 2)
    assert c.own_levels["all"].a_accuracy == pytest.approx(3 / 5)
    assert c.own_levels["all"].b_accuracy == pytest.approx(4 / 6)


def test_runs_over_different_task_sets_compare_the_common_tasks_and_warn(tmp_path):
    """A 3-task run against a 10-task run: the delta is over the 3 tasks, and the report says so."""
    a = _run(tmp_path / "a", {f"t{i}": (1, i < 2) for i in range(3)})
    b = _run(tmp_path / "b", {f"t{i}": (1, i < 2 or i >= 6) for i in range(10)})
    c = compare_runs(a, b)
    assert c.levels["all"].delta == 0.0 and c.common == 3
    md = c.to_markdown()
    assert "different tasks" in md and "over the 3 task(s) scored in both" in md and "only in B: 7" in md
    assert "| all | 66.7% (2/3) | 66.7% (2/3) | +0.0 pts |" in md


def test_same_tasks_give_no_warning_and_tasks_are_named_by_their_question(tmp_path):
    a = _run(tmp_path / "a", {"t1": (1, False)})
    b = _run(tmp_path / "b", {"t1": (1, True)})
    md = compare_runs(a, b).to_markdown()
    assert "different tasks" not in md and "- `t1` q" in md.split("## Fixed")[1]


def test_markdown_and_dict(tmp_path):
    a = _run(tmp_path / "a", {"t1": (1, False), "t2": (2, True)})
    b = _run(tmp_path / "b", {"t1": (1, True), "t2": (2, False)})
    c = compare_runs(a, b)
    md = c.to_markdown()
    assert "fixed 1, regressed 1" in md and "| 1 | 0.0% (0/1) | 100.0% (1/1) | +100.0 pts |" in md
    assert "- `t1`" in md.split("## Fixed")[1] and "- `t2`" in md.split("## Regressed")[1]
    data = json.loads(json.dumps(c.to_dict()))
    assert data["levels"]["2"]["delta"] == -1.0 and data["run_a"] == str(a)


def test_last_line_wins_and_torn_lines_are_skipped(tmp_path):
    a = _run(tmp_path / "a", {"t1": (1, False)},
             extra=json.dumps({"task_id": "t1", "level": 1, "correct": True}) + "\n{\"task_id\": \"t2\", \"lev")
    b = _run(tmp_path / "b", {"t1": (1, True)})
    c = compare_runs(a / "details.jsonl", b)  # a details.jsonl path works too
    assert c.unchanged == ["t1"] and c.skipped_lines == 1 and "1 malformed line" in c.to_markdown()


def test_missing_run_is_a_clear_error(tmp_path):
    b = _run(tmp_path / "b", {"t1": (1, True)})
    with pytest.raises(CompareError, match="no details.jsonl"):
        compare_runs(tmp_path / "nothing", b)
