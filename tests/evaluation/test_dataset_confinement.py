"""The loader never turns metadata pointing outside its split folder into an attachment (issue 13, item 3)."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest

from config import load_settings
from evaluation.checkpoint import Checkpoint
from evaluation.dataset import load_split, statistics
from evaluation.task_loop import ProgressTracker, TaskLoop
from gaia_layout import UnsafeAttachment, read_split


def _split(tmp_path: Path, rows: list[dict], root: str = "gaia") -> Path:
    folder = tmp_path / root / "2023" / "validation"
    folder.mkdir(parents=True)
    (folder / "ok.txt").write_text("fine")
    base = {"Question": "q?", "Level": 1, "Final answer": "a"}
    lines = [json.dumps({"task_id": f"t{i}", **base, **row}) for i, row in enumerate(rows)]
    (folder / "metadata.jsonl").write_text("\n".join(lines))
    return tmp_path / root


@pytest.mark.parametrize("file_name", ["../../../../etc/passwd", "/etc/passwd", "../../.env", "sub/../../x.txt", "."])
def test_traversal_and_absolute_file_names_are_refused(tmp_path, file_name):
    samples = load_split("validation", data_dir=_split(tmp_path, [{"file_name": file_name}, {"file_name": "ok.txt"}]))
    bad, good = samples
    assert bad.file_path is None and "outside the split folder" in bad.attachment_error
    assert not bad.attachment_missing
    assert good.file_path is not None and good.file_path.read_text() == "fine" and not good.attachment_error
    assert samples.bad_attachments == [bad.attachment_error]
    assert statistics(samples)["bad_attachments"] == 1
    assert str(tmp_path) not in bad.attachment_error  # no absolute server path in the message


def test_a_symlink_pointing_out_is_refused(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("SECRET")
    root = _split(tmp_path, [{"file_name": "link.txt"}])
    os.symlink(secret, root / "2023" / "validation" / "link.txt")
    (sample,) = load_split("validation", data_dir=root)
    assert sample.file_path is None and sample.attachment_error


def test_hub_file_path_column_is_checked_too(tmp_path):
    root = _split(tmp_path, [{"file_name": "ok.txt", "file_path": "../../etc/passwd"}])
    gaia = read_split(root, "validation")
    with pytest.raises(UnsafeAttachment, match="outside the split folder"):
        gaia.attachment_path(gaia.rows[0])


def test_hub_cache_symlinks_into_blobs_stay_allowed_and_keep_their_names(tmp_path):
    repo = tmp_path / "datasets--gaia-benchmark--GAIA"
    blob = repo / "blobs" / "0f1e2d"
    blob.parent.mkdir(parents=True)
    blob.write_text("attachment")
    root = _split(repo / "snapshots", [{"file_name": "data.txt", "file_path": "2023/validation/data.txt"}], "abc")
    link = root / "2023" / "validation" / "data.txt"
    os.symlink(os.path.relpath(blob, link.parent), link)
    (sample,) = load_split("validation", data_dir=root)
    assert not sample.attachment_error and sample.file_path is not None
    assert sample.file_path.name == "data.txt" and sample.file_path.read_text() == "attachment"


class _CountingPipeline:
    def __init__(self) -> None:
        self.calls = 0

    def solve(self, *args, **kwargs):  # pragma: no cover - must not be reached
        self.calls += 1
        raise AssertionError("a task with a refused attachment must not be solved")


def test_runner_records_the_refused_task_without_solving_it(tmp_path):
    (sample,) = load_split("validation", data_dir=_split(tmp_path, [{"file_name": "/etc/passwd"}]))
    pipeline = _CountingPipeline()
    loop = TaskLoop(pipeline, load_settings(TASK_RETRY_MAX=0), Checkpoint(tmp_path / "results.jsonl", "s"),
                    threading.Event())
    (record,) = loop.run([sample], concurrency=1, tracker=ProgressTracker(1))
    assert pipeline.calls == 0
    assert record.error and record.error.startswith("bad attachment path") and record.predicted == ""


@pytest.mark.parametrize("task_id", ["../../x", "/etc/passwd", "a/b", ".hidden", "x" * 129, "sp ace", "tab\tid"])
def test_an_unsafe_task_id_is_refused_when_the_split_loads(tmp_path, task_id):
    """Task ids name trace and record files: an unsafe one is refused before any run can start (issue 21, item 13)."""
    from evaluation.dataset import DatasetError

    root = _split(tmp_path, [{"file_name": "ok.txt"}])
    metadata = root / "2023" / "validation" / "metadata.jsonl"
    metadata.write_text(json.dumps({"task_id": task_id, "Question": "q?", "Level": 1, "Final answer": "a"}))
    with pytest.raises(DatasetError, match="is refused: a task id may hold only"):
        load_split("validation", data_dir=root)


def test_gaia_style_task_ids_are_safe():
    from evaluation.task_ids import is_safe_task_id

    assert all(is_safe_task_id(t) for t in ("c61d22de-5f6c-4958-a7f6-5e9707bd3466", "api-arith", "t0", "A.b_c-1"))
