"""A session keeps a bounded amount of uploads and leaves none behind when it ends (issue 21, item 9)."""

from __future__ import annotations

import copy
import hashlib
from pathlib import Path

from ui.session import Session


def _upload(root: Path, name: str, size: int) -> Path:
    """A file where gradio puts an upload: <cache>/<sha256 hex>/<name>."""
    folder = root / hashlib.sha256(name.encode()).hexdigest()
    folder.mkdir()
    (folder / name).write_bytes(b"x" * size)
    return folder / name


def test_past_its_budget_a_session_drops_its_oldest_uploads(tmp_path):
    session = copy.deepcopy(Session(max_upload_bytes=250))  # gradio deep-copies the state per session
    files = [_upload(tmp_path, f"f{i}.bin", 100) for i in range(4)]
    for f in files:
        session.note_upload(f)
    assert [f.exists() for f in files] == [False, False, True, True]
    assert session.readable == (files[2].parent, files[3].parent)


def test_the_newest_upload_is_kept_even_alone_over_budget(tmp_path):
    session = Session(max_upload_bytes=10)
    big = _upload(tmp_path, "big.bin", 100)
    session.note_upload(big)
    assert big.exists()


def test_ending_the_session_deletes_its_uploads_and_nothing_else(tmp_path):
    session = Session(max_upload_bytes=10_000)
    mine = _upload(tmp_path, "mine.txt", 10)
    other = tmp_path / "not-an-upload-folder"
    other.mkdir()
    (other / "keep.txt").write_text("keep")
    session.note_upload(mine)
    session.note_upload(other / "keep.txt")
    session.close()
    assert not mine.exists() and (other / "keep.txt").exists() and session.uploads == []
