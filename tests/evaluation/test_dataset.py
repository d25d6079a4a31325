"""GAIA loading from parquet (hub format) and jsonl (old format), the hub cache, filters and statistics."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from config import load_settings
from evaluation.dataset import DatasetError, GAIADataset, Sample, load_split, statistics
from evaluation.selection import TaskSelection
from tests.support.gaia_fixture import FIXTURE_TASKS, LEVEL_COUNTS, VALIDATION_ANSWERS, make_gaia_folder


@pytest.mark.parametrize("fmt", ["parquet", "jsonl"])
@pytest.mark.parametrize("level_as_str", [True, False])
def test_loads_every_format_and_level_type(tmp_path, fmt, level_as_str):
    root = make_gaia_folder(tmp_path / "gaia", fmt=fmt, level_as_str=level_as_str)
    samples = load_split("validation", data_dir=root)
    assert len(samples) == len(FIXTURE_TASKS)  # the per-level parquet copies are not counted twice
    assert {s.task_id: s.final_answer for s in samples} == VALIDATION_ANSWERS
    assert all(isinstance(s.level, int) for s in samples)
    assert [s.level for s in samples] == [t.level for t in FIXTURE_TASKS]
    assert samples.missing_attachments == []


@pytest.mark.parametrize("fmt", ["parquet", "jsonl"])
def test_attachments_are_absolute_real_files(tmp_path, fmt):
    root = make_gaia_folder(tmp_path / "gaia", fmt=fmt)
    by_name = {s.file_name: s for s in load_split("validation", data_dir=root)}
    xlsx = by_name["sales.xlsx"]
    assert xlsx.file_path is not None and xlsx.file_path.is_absolute() and xlsx.file_path.is_file()
    assert xlsx.file_path.read_bytes()[:2] == b"PK"  # a real xlsx is a zip
    assert xlsx.file_type == "xlsx" and not xlsx.attachment_missing
    assert by_name["program.py"].file_path.read_text().strip().endswith("print(result)")
    no_file = by_name[""]
    assert no_file.file_path is None and no_file.file_type == "" and not no_file.attachment_missing


def test_annotator_metadata(tmp_path):
    sample = next(s for s in load_split("validation", data_dir=make_gaia_folder(tmp_path))
                  if s.file_name == "sales.xlsx")
    assert sample.annotator is not None
    assert sample.annotator.number_of_steps == 2 and sample.annotator.number_of_tools == 1
    assert sample.annotator.tool_list == ["read_excel"]
    assert "60" in sample.annotator.steps


def test_split_folder_itself_is_accepted(tmp_path):
    root = make_gaia_folder(tmp_path)
    assert len(load_split("validation", data_dir=root / "2023" / "validation")) == len(FIXTURE_TASKS)
    assert len(load_split("validation", data_dir=root / "2023")) == len(FIXTURE_TASKS)


def test_split_folder_found_by_file_name_when_file_path_does_not_resolve(tmp_path):
    root = make_gaia_folder(tmp_path / "a")
    moved = tmp_path / "elsewhere"
    (root / "2023" / "validation").rename(moved)  # file_path '2023/validation/x' no longer resolves
    samples = load_split("validation", data_dir=moved)
    assert samples.missing_attachments == []
    assert all(s.file_path.is_file() for s in samples if s.file_name)


def test_test_split_has_unknown_answers(tmp_path):
    root = make_gaia_folder(tmp_path, split="test")
    samples = load_split("test", data_dir=root)
    assert len(samples) == len(FIXTURE_TASKS)
    assert all(s.final_answer == "?" and not s.has_answer and s.annotator is None for s in samples)
    assert not set(s.task_id for s in samples) & set(VALIDATION_ANSWERS)
    with pytest.raises(DatasetError, match="split 'validation'"):
        load_split("validation", data_dir=root)


@pytest.mark.parametrize("fmt", ["parquet", "jsonl"])
def test_missing_attachment_is_reported(tmp_path, caplog, fmt):
    root = make_gaia_folder(tmp_path, fmt=fmt)
    (root / "2023" / "validation" / "people.csv").unlink()
    with caplog.at_level(logging.WARNING, logger="evaluation.dataset"):
        samples = load_split("validation", data_dir=root)
    assert len(samples) == len(FIXTURE_TASKS)  # kept, not dropped
    csv_sample = next(s for s in samples if s.file_name == "people.csv")
    assert csv_sample.attachment_missing and csv_sample.file_path.name == "people.csv"
    assert samples.missing_attachments == [f"{csv_sample.task_id}: {csv_sample.file_path}"]
    assert "people.csv" in caplog.text
    assert statistics(samples)["missing_attachments"] == 1
    dataset = GAIADataset(local_data_dir=root)
    dataset.load()
    assert dataset.missing_attachments == samples.missing_attachments


@pytest.mark.parametrize("level", [1, 2, 3])
def test_level_filter(tmp_path, level):
    samples = load_split("validation", data_dir=make_gaia_folder(tmp_path), level=level)
    assert len(samples) == LEVEL_COUNTS[level] and {s.level for s in samples} == {level}


def test_bad_level_and_unknown_task_ids(tmp_path):
    root = make_gaia_folder(tmp_path)
    with pytest.raises(DatasetError, match="level must be"):
        load_split("validation", data_dir=root, level=4)
    with pytest.raises(DatasetError, match="nope"):
        TaskSelection(task_ids=["nope"]).choose(load_split("validation", data_dir=root))


def test_task_id_filter_keeps_dataset_order(tmp_path):
    ids = [t.task_id() for t in FIXTURE_TASKS]
    split = load_split("validation", data_dir=make_gaia_folder(tmp_path))
    samples = TaskSelection(task_ids=[ids[4], ids[1]]).choose(split)
    assert [s.task_id for s in samples] == [ids[1], ids[4]]


def test_statistics(tmp_path):
    stats = statistics(load_split("validation", data_dir=make_gaia_folder(tmp_path)))
    assert stats["total"] == 6
    assert stats["by_level"] == {1: 2, 2: 2, 3: 2}
    assert stats["by_file_type"] == {"none": 2, "xlsx": 1, "py": 1, "csv": 1, "txt": 1}
    assert stats["with_attachment"] == 4 and stats["with_answer"] == 6
    assert statistics([]) == {"total": 0, "by_level": {}, "by_file_type": {}, "with_attachment": 0,
                              "missing_attachments": 0, "bad_attachments": 0, "with_answer": 0}


def test_gaia_dataset_seed_api(tmp_path):
    root = make_gaia_folder(tmp_path, fmt="jsonl", level_as_str=False)
    dataset = GAIADataset(dataset_name="gaia-benchmark/GAIA", split="validation", level=2, local_data_dir=str(root))
    samples = dataset.load()
    assert len(samples) == 2 and all(isinstance(s, Sample) for s in samples)
    assert dataset.get_statistics()["by_level"] == {2: 2}
    assert GAIADataset(local_data_dir=root).get_statistics()["total"] == 6  # loads on demand


def test_sample_properties():
    s = Sample("t", "q", 1, "?", file_name="Photo.JPEG", file_path=None)
    assert s.file_type == "jpeg" and not s.has_answer
    assert Sample("t", "q", 1, "").has_answer is False
    assert Sample("t", "q", 1, "0").has_answer is True


def test_malformed_inputs_give_clear_errors(tmp_path):
    with pytest.raises(DatasetError, match="does not exist"):
        load_split("validation", data_dir=tmp_path / "absent")
    with pytest.raises(DatasetError, match="metadata.parquet"):
        load_split("validation", data_dir=tmp_path)
    folder = tmp_path / "2023" / "validation"
    folder.mkdir(parents=True)
    (folder / "metadata.jsonl").write_text(json.dumps({"task_id": "a", "Level": 1}) + "\n{broken\n")
    with pytest.raises(DatasetError, match=r"metadata.jsonl:2"):
        load_split("validation", data_dir=tmp_path)
    (folder / "metadata.jsonl").write_text(json.dumps({"task_id": "a", "Level": "x"}) + "\n")
    with pytest.raises(DatasetError, match="Malformed"):
        load_split("validation", data_dir=tmp_path)
    (folder / "metadata.jsonl").unlink()
    (folder / "metadata.parquet").write_bytes(b"not parquet")
    with pytest.raises(DatasetError, match="Cannot read"):
        load_split("validation", data_dir=tmp_path)


def _hub_cache(cache: Path, revision: str = "main") -> None:
    """The on-disk layout huggingface_hub uses for a downloaded dataset snapshot."""
    commit = "0123456789abcdef0123456789abcdef01234567"
    repo = cache / "datasets--gaia-benchmark--GAIA"
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / revision).write_text(commit)
    make_gaia_folder(repo / "snapshots" / commit)


def test_hub_snapshot_from_cache_offline(tmp_path):
    _hub_cache(tmp_path / "cache")
    settings = load_settings(GAIA_CACHE_DIR=tmp_path / "cache")
    samples = load_split("validation", settings=settings, level=1)
    assert len(samples) == 2 and all(s.file_path is None or s.file_path.is_file() for s in samples)


def test_hub_not_cached_offline_is_a_clear_error(tmp_path):
    settings = load_settings(GAIA_CACHE_DIR=tmp_path / "empty")
    with pytest.raises(DatasetError, match="not in the cache.*--data-dir"):
        load_split("validation", settings=settings)
    with pytest.raises(DatasetError, match="--data-dir"):
        GAIADataset(settings=settings).load()
