"""The checkpoint: durable appends, torn lines survived, latest record wins, per-session wall time."""

from __future__ import annotations

import json
import threading

from evaluation.checkpoint import Checkpoint, session_wall_time, write_jsonl_atomic
from evaluation.records import TaskRecord


def rec(task_id: str, start: float = 0.0, end: float = 0.0, **kw) -> TaskRecord:
    return TaskRecord(task_id=task_id, question=f"q {task_id}", started_at=start, finished_at=end, **kw)


def test_append_then_load_roundtrips_records(tmp_path):
    cp = Checkpoint(tmp_path / "checkpoint.jsonl", session="s1")
    cp.append(rec("a", predicted="4", correct=True, tools_used=["calculator"]))
    cp.append(rec("b", error="boom"))
    loaded = Checkpoint(tmp_path / "checkpoint.jsonl", session="s2").load()
    assert list(loaded.records) == ["a", "b"]
    assert loaded.records["a"].tools_used == ["calculator"] and loaded.records["a"].correct is True
    assert loaded.records["b"].error == "boom"
    assert list(loaded.sessions) == ["s1"]


def test_each_append_is_on_disk_before_it_returns(tmp_path):
    path = tmp_path / "checkpoint.jsonl"
    cp = Checkpoint(path, session="s")
    cp.append(rec("a"))
    # read with a separate handle, as a resumed process would
    lines = path.read_text(encoding="utf-8").splitlines()
    assert json.loads(lines[0])["task_id"] == "a" and json.loads(lines[0])["session"] == "s"


def test_torn_last_line_is_skipped_and_next_append_stays_readable(tmp_path):
    path = tmp_path / "checkpoint.jsonl"
    cp = Checkpoint(path, session="s1")
    cp.append(rec("a"))
    with path.open("a", encoding="utf-8") as fh:
        fh.write('{"task_id": "b", "quest')  # killed mid-write
    loaded = cp.load()
    assert list(loaded.records) == ["a"] and loaded.skipped_lines == 1
    Checkpoint(path, session="s2").append(rec("c"))
    loaded = cp.load()
    assert list(loaded.records) == ["a", "c"] and loaded.skipped_lines == 1


def test_later_record_of_a_task_wins(tmp_path):
    cp = Checkpoint(tmp_path / "c.jsonl", session="s")
    cp.append(rec("a", predicted="old"))
    cp.append(rec("a", predicted="new"))
    assert cp.load().records["a"].predicted == "new"


def test_missing_file_loads_empty(tmp_path):
    loaded = Checkpoint(tmp_path / "nope.jsonl", session="s").load()
    assert loaded.records == {} and loaded.skipped_lines == 0


def test_concurrent_appends_never_interleave(tmp_path):
    cp = Checkpoint(tmp_path / "c.jsonl", session="s")
    threads = [threading.Thread(target=lambda i=i: [cp.append(rec(f"t{i}-{j}")) for j in range(20)]) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    loaded = cp.load()
    assert len(loaded.records) == 80 and loaded.skipped_lines == 0


def test_session_wall_time_sums_sessions_without_the_dead_gap():
    sessions = {"s1": [rec("a", 100, 110), rec("b", 102, 115)], "s2": [rec("c", 1000, 1004)]}
    assert session_wall_time(sessions) == 19.0


def test_write_jsonl_atomic_replaces_the_file(tmp_path):
    path = tmp_path / "details.jsonl"
    path.write_text("stale\n")
    write_jsonl_atomic(path, [{"a": 1}, {"b": "é"}])
    assert [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()] == [{"a": 1}, {"b": "é"}]
    assert not (tmp_path / "details.jsonl.tmp").exists()


def test_a_run_folder_is_held_by_one_run_at_a_time(tmp_path):
    import pytest

    from evaluation.checkpoint import FolderBusy

    first = Checkpoint(tmp_path / "run" / "checkpoint.jsonl", session="a")
    second = Checkpoint(tmp_path / "run" / "checkpoint.jsonl", session="b")
    with first.exclusive(), pytest.raises(FolderBusy, match="another run"), second.exclusive():
        pass
    with second.exclusive():  # released
        pass
