"""run.json (through RunFolder): written once per run folder, read back for a resume; the resumable-runs listing."""

from __future__ import annotations

import json
from pathlib import Path

from evaluation.checkpoint import CHECKPOINT_NAME, Checkpoint
from evaluation.records import TaskRecord
from evaluation.run_folder import RunFolder, resumable_runs
from evaluation.run_info import RunInfo, with_recorded_selection
from evaluation.runner import RunConfig


def _run(root: Path, name: str, *, done: int, remaining: int | None, data_dir: str | None = "/data/GAIA") -> Path:
    out = root / name
    RunFolder(out).start(RunInfo(split="validation", data_dir=data_dir, level=1))
    checkpoint = Checkpoint(out / CHECKPOINT_NAME, session="s")
    for i in range(done):
        checkpoint.append(TaskRecord(task_id=f"t{i}", question="q"))
    if remaining is not None:
        (out / "summary.json").write_text(json.dumps({"meta": {"remaining": remaining}}))
    return out


def test_the_first_run_of_a_folder_defines_its_run_json(tmp_path):
    RunFolder(tmp_path).start(RunInfo(split="test", data_dir="/a"))
    RunFolder(tmp_path).start(RunInfo(split="validation", data_dir="/b"))
    info = RunFolder(tmp_path).info()
    assert info is not None and info.split == "test" and info.data_dir == "/a" and info.started_at


def test_an_unreadable_run_json_is_none(tmp_path):
    (tmp_path / "run.json").write_text("{broken")
    assert RunFolder(tmp_path).info() is None and RunFolder(tmp_path / "nope").info() is None


def test_recorded_selection_fills_what_the_resume_did_not_give():
    info = RunInfo(split="test", data_dir="/data/GAIA", level=2, max_samples=5, task_ids=["a"])
    merged = with_recorded_selection(RunConfig(resume=True), info)
    assert (merged.split, merged.data_dir, merged.level, merged.max_samples, merged.task_ids) == \
        ("test", Path("/data/GAIA"), 2, 5, ["a"])
    given = with_recorded_selection(RunConfig(resume=True, data_dir=Path("/other"), level=1), info)
    assert given.data_dir == Path("/other") and given.level == 1
    hub = with_recorded_selection(RunConfig(resume=True), RunInfo(data_dir=None))
    assert hub.data_dir is None


def test_resumable_runs_lists_unfinished_folders_only(tmp_path):
    _run(tmp_path, "stopped", done=2, remaining=3)
    _run(tmp_path, "killed", done=1, remaining=None, data_dir=None)
    _run(tmp_path, "complete", done=4, remaining=0)
    (tmp_path / "no-run-json").mkdir()
    runs = {r.path.name: r for r in resumable_runs(tmp_path)}
    assert set(runs) == {"stopped", "killed"}
    assert runs["stopped"].label == "stopped · 2 done, 3 left · validation, local folder /data/GAIA (level 1)"
    assert "not finished" in runs["killed"].label and "Hugging Face hub" in runs["killed"].label
    assert resumable_runs(tmp_path / "missing") == []
