"""The FAISS store with hand-made unit vectors: no model needed, so these run fast."""

from __future__ import annotations

import json
import threading

import numpy as np
import pytest

from rag.store import CorruptIndexError, Entry, ModelMismatchError, VectorStore

DIM = 8


def unit(*values: float) -> np.ndarray:
    v = np.zeros(DIM, dtype=np.float32)
    v[: len(values)] = values
    return v / np.linalg.norm(v)


def basis(i: int) -> np.ndarray:
    v = np.zeros(DIM, dtype=np.float32)
    v[i] = 1.0
    return v


def saved_store(path, n=4) -> VectorStore:
    store = VectorStore(path)
    entries = [Entry(question=f"q{i}", answer=f"a{i}", task_id=f"t{i}", source="test", level=1) for i in range(n)]
    store.add(entries, np.stack([basis(i) for i in range(n)]), model="m")
    store.save()
    return store


def test_missing_directory_is_empty_without_error(tmp_path):
    store = VectorStore(tmp_path / "nope")
    assert not store.exists() and len(store) == 0 and store.search(basis(0), 3) == []
    assert store.saved_count() == 0


def test_search_orders_by_similarity(tmp_path):
    store = saved_store(tmp_path)
    hits = store.search(unit(1, 0.5), 2)
    assert [e.task_id for e, _ in hits] == ["t0", "t1"]
    assert hits[0][1] == pytest.approx(1 / np.sqrt(1.25), abs=1e-5)


def test_exclusion_never_returns_the_task_even_as_the_only_exact_match(tmp_path):
    store = saved_store(tmp_path)
    hits = store.search(basis(2), 4, ["t2"])
    assert "t2" not in [e.task_id for e, _ in hits]
    assert len(hits) == 3


def test_exclusion_with_more_neighbours_than_entries(tmp_path):
    store = saved_store(tmp_path, n=1)
    assert store.search(basis(0), 5, ["t0"]) == []


def test_round_trip_in_a_new_object(tmp_path):
    saved_store(tmp_path)
    again = VectorStore(tmp_path)
    assert len(again) == 4 and again.model == "m" and again.dim == DIM
    (entry, score), = again.search(basis(3), 1)
    assert (entry.question, entry.answer, entry.task_id, entry.source, entry.level) == ("q3", "a3", "t3", "test", 1)
    assert entry.added_at.endswith("Z") and score == pytest.approx(1.0)


def test_add_and_remove_without_rebuild(tmp_path):
    store = saved_store(tmp_path)
    first_ids = [e.id for e in store.entries()]
    assert store.remove(["t1"]) == 1
    store.add([Entry("q5", "a5", task_id="t5")], basis(5)[None, :], model="m")
    store.save()
    again = VectorStore(tmp_path)
    assert {e.task_id for e in again.entries()} == {"t0", "t2", "t3", "t5"}
    assert [e.id for e in again.entries()][:3] == [first_ids[0], first_ids[2], first_ids[3]]  # survivors keep ids
    assert again.entries()[-1].id == 4  # ids are never reused
    assert again.search(basis(1), 1)[0][0].task_id != "t1"


def test_same_task_id_replaces_and_exact_duplicates_are_skipped(tmp_path):
    store = saved_store(tmp_path)
    report = store.add([Entry("q0 new", "b0", task_id="t0"), Entry("free", "x"), Entry("FREE?", "x")],
                       np.stack([basis(6), basis(7), basis(7)]), model="m")
    assert (report.added, report.replaced, report.skipped) == (1, 1, 1)
    assert len(store) == 5
    assert store.search(basis(6), 1)[0][0].answer == "b0"


def test_other_model_is_refused(tmp_path):
    store = saved_store(tmp_path)
    with pytest.raises(ModelMismatchError, match="built with m"):
        store.add([Entry("q", "a")], basis(0)[None, :], model="other")


def test_reloads_when_another_process_saved(tmp_path):
    reader = saved_store(tmp_path)
    assert len(reader) == 4
    writer = VectorStore(tmp_path)
    writer.remove(["t0", "t1"])
    writer.save()
    assert len(reader) == 2


def test_corrupt_index_file_names_file_and_rebuild_command(tmp_path):
    saved_store(tmp_path)
    (tmp_path / "index.faiss").write_bytes(b"not a faiss index at all")
    with pytest.raises(CorruptIndexError) as err:
        VectorStore(tmp_path).search(basis(0), 1)
    assert str(tmp_path / "index.faiss") in str(err.value) and "python -m rag build" in str(err.value)


def test_corrupt_metadata_names_the_line(tmp_path):
    saved_store(tmp_path)
    with (tmp_path / "entries.jsonl").open("a") as fh:
        fh.write("{broken\n")
    with pytest.raises(CorruptIndexError, match=r"entries\.jsonl line 5"):
        len(VectorStore(tmp_path))


def test_count_mismatch_is_corruption(tmp_path):
    saved_store(tmp_path)
    lines = (tmp_path / "entries.jsonl").read_text().splitlines()
    (tmp_path / "entries.jsonl").write_text("\n".join(lines[:2]) + "\n")
    with pytest.raises(CorruptIndexError, match="holds 4 vectors"):
        len(VectorStore(tmp_path))


def test_unreadable_manifest(tmp_path):
    saved_store(tmp_path)
    (tmp_path / "manifest.json").write_text("{}")
    with pytest.raises(CorruptIndexError, match="manifest"):
        len(VectorStore(tmp_path))


def test_index_without_manifest_is_an_interrupted_save(tmp_path):
    saved_store(tmp_path)
    (tmp_path / "manifest.json").unlink()
    with pytest.raises(CorruptIndexError, match="manifest.json is missing"):
        len(VectorStore(tmp_path))


def test_manifest_records_model_and_count(tmp_path):
    saved_store(tmp_path)
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert (manifest["model"], manifest["dim"], manifest["count"], manifest["next_id"]) == ("m", DIM, 4, 4)


def test_concurrent_search_and_writes(tmp_path):
    store = saved_store(tmp_path)
    errors: list[BaseException] = []

    def reader():
        try:
            for _ in range(200):
                hits = store.search(basis(0), 2, ["t3"])
                assert hits and hits[0][0].task_id == "t0"
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    def writer():
        for i in range(50):
            store.add([Entry(f"extra {i}", "x", task_id=f"x{i}")], basis(7)[None, :], model="m")
            store.remove([f"x{i}"])

    threads = [threading.Thread(target=reader) for _ in range(4)] + [threading.Thread(target=writer)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(store) == 4
