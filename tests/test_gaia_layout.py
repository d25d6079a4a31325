"""The one reader of the GAIA folder layout, and the two packages that use it agreeing on every form."""

from __future__ import annotations

import pytest

from evaluation.dataset import load_split
from gaia_layout import LayoutError, read_split
from rag.sources import from_gaia_dir
from tests.support.gaia_fixture import FIXTURE_TASKS, make_gaia_folder


def _forms(tmp_path, form: str):
    root = make_gaia_folder(tmp_path / "gaia", fmt="jsonl" if form == "jsonl" else "parquet", level_as_str=True)
    split_dir = root / "2023" / "validation"
    if form == "levels-only":  # a download with only the per-level parquet copies
        (split_dir / "metadata.parquet").unlink()
    return split_dir if form == "split-dir" else root


@pytest.mark.parametrize("form", ["parquet", "jsonl", "levels-only", "split-dir"])
def test_dataset_and_rag_read_the_same_rows(tmp_path, form):
    root = _forms(tmp_path, form)
    samples = load_split("validation", data_dir=root)
    entries = from_gaia_dir(root, "validation")
    assert len(samples) == len(FIXTURE_TASKS)
    assert sorted((s.task_id, s.level, s.final_answer, s.file_name) for s in samples) == \
        sorted((e.task_id, e.level, e.answer, e.file_name) for e in entries)


def test_attachments_resolve_in_the_split_folder(tmp_path):
    gaia = read_split(make_gaia_folder(tmp_path / "gaia"), "validation")
    with_file = [r for r in gaia.rows if r.file_name]
    assert with_file and all(gaia.attachment_path(r).parent == gaia.split_dir.resolve() for r in with_file)
    assert all(gaia.attachment_path(r) is None for r in gaia.rows if not r.file_name)


def test_no_metadata_is_one_message_naming_the_split(tmp_path):
    with pytest.raises(LayoutError, match=r"no GAIA metadata for split 'test'.*2023/test/metadata.parquet"):
        read_split(tmp_path, "test")
