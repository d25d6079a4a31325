"""The persisted knowledge: a FAISS inner-product index of unit vectors plus one metadata line per entry.

Directory layout (RAG_INDEX_DIR):
    index.faiss     IndexIDMap(IndexFlatIP): entries are added and removed by id, never rebuilt
    entries.jsonl   one Entry per line (id, question, answer, task_id, source, level, file_name, added_at)
    manifest.json   embedding model, dimension, count, next id (written last: it marks a complete save)

faiss is imported on first load, so opening a store costs nothing until it is searched.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rag.embeddings import normalize_question
from rag.types import StoredQuestion

if TYPE_CHECKING:
    import numpy as np

INDEX_FILE = "index.faiss"
ENTRIES_FILE = "entries.jsonl"
MANIFEST_FILE = "manifest.json"
FORMAT_VERSION = 1


class KnowledgeBaseError(RuntimeError):
    """Base class of knowledge-base errors (the message says what to do)."""


class CorruptIndexError(KnowledgeBaseError):
    """An index file cannot be read or disagrees with the others; the message names it and the rebuild command."""


class ModelMismatchError(KnowledgeBaseError):
    """The index was built with another embedding model than the settings name."""


def rebuild_hint(directory: Path) -> str:
    """The command that rebuilds an index directory from scratch."""
    return (f"rebuild it with `python -m rag build --gaia-dir DIR --split validation --index-dir {directory}` "
            f"(or --jsonl FILE)")


@dataclass
class Entry(StoredQuestion):
    """One stored question with its known answer and where it came from, as the store keeps it."""

    added_at: str = field(default_factory=lambda: time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
    id: int = -1


@dataclass
class AddReport:
    """What an `add` did."""

    added: int = 0
    replaced: int = 0
    """Entries whose task_id was already stored: the old entry was removed."""
    skipped: int = 0
    """Exact duplicates (same normalised question and answer, no task_id)."""


def _atomic_write(path: Path, data: bytes) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


class VectorStore:
    """FAISS index + metadata in one directory; thread-safe, lazy, reloads when the files change on disk."""

    def __init__(self, directory: Path | str) -> None:
        self.directory = Path(directory)
        self._lock = threading.RLock()
        self._index: Any = None  # a faiss Index / IndexIDMap (SWIG classes; their methods are untyped)
        self._entries: dict[int, Entry] = {}
        self._manifest: dict[str, Any] = {}
        self._stamp: tuple[int, int, int] | None = None  # manifest (inode, mtime_ns, size) of the loaded state
        self._dirty = False  # unsaved changes in memory: do not reload over them
        self._task_ids: dict[str, list[int]] | None = None  # task_id -> entry ids, rebuilt after changes

    # ---- state on disk ------------------------------------------------------------------------------
    def _manifest_stamp(self) -> tuple[int, int, int] | None:
        try:
            st = (self.directory / MANIFEST_FILE).stat()
        except OSError:
            return None
        return (st.st_ino, st.st_mtime_ns, st.st_size)  # each save replaces the file: a new inode

    def exists(self) -> bool:
        """True when the directory holds a saved index (possibly with zero entries)."""
        return self._manifest_stamp() is not None

    def saved_count(self) -> int:
        """Entries in the saved index per its manifest (0 when absent or unreadable); imports nothing heavy."""
        try:
            return int(json.loads((self.directory / MANIFEST_FILE).read_text(encoding="utf-8"))["count"])
        except (OSError, ValueError, KeyError, TypeError):
            return 0

    def _check_stray_files(self) -> None:
        for name in (INDEX_FILE, ENTRIES_FILE):
            if (self.directory / name).exists():
                raise CorruptIndexError(
                    f"{self.directory / MANIFEST_FILE} is missing but {self.directory / name} exists "
                    f"(an interrupted save?); {rebuild_hint(self.directory)}"
                )

    def _load(self) -> None:
        """(Re)load from disk if the manifest changed since the last load. Caller holds the lock."""
        if self._dirty:
            return
        stamp = self._manifest_stamp()
        if stamp is not None and stamp == self._stamp:
            return
        if stamp is None:
            self._check_stray_files()
            self._index, self._entries, self._manifest, self._stamp = None, {}, {}, None
            self._task_ids = None
            return
        import faiss

        manifest_path = self.directory / MANIFEST_FILE
        try:
            manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
            int(manifest["count"]), int(manifest["dim"]), str(manifest["model"])
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise CorruptIndexError(f"RAG manifest {manifest_path} is unreadable ({exc}); "
                                    f"{rebuild_hint(self.directory)}") from None
        index_path = self.directory / INDEX_FILE
        try:
            index = faiss.read_index(str(index_path))
        except Exception as exc:  # faiss raises RuntimeError with a C++ message for any damage
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise CorruptIndexError(f"RAG index file {index_path} is unreadable ({first}); "
                                    f"{rebuild_hint(self.directory)}") from None
        entries = self._read_entries(self.directory / ENTRIES_FILE)
        if index.ntotal != len(entries) or index.ntotal != int(manifest["count"]) or index.d != int(manifest["dim"]):
            raise CorruptIndexError(
                f"RAG index {index_path} holds {index.ntotal} vectors of size {index.d} but "
                f"{self.directory / ENTRIES_FILE} has {len(entries)} entries and the manifest says "
                f"{manifest['count']} of size {manifest['dim']}; {rebuild_hint(self.directory)}"
            )
        self._index, self._entries, self._manifest, self._stamp = index, entries, manifest, stamp
        self._task_ids = None

    def _read_entries(self, path: Path) -> dict[int, Entry]:
        entries: dict[int, Entry] = {}
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except OSError as exc:
            raise CorruptIndexError(f"RAG metadata {path} is unreadable ({exc}); "
                                    f"{rebuild_hint(self.directory)}") from None
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                entry = Entry(**json.loads(line))
            except (ValueError, TypeError) as exc:
                raise CorruptIndexError(f"RAG metadata {path} line {number} is invalid ({exc}); "
                                        f"{rebuild_hint(self.directory)}") from None
            entries[entry.id] = entry
        return entries

    def save(self) -> None:
        """Write index, metadata and (last) manifest atomically file by file."""
        import faiss

        with self._lock:
            if self._index is None:
                return
            self.directory.mkdir(parents=True, exist_ok=True)
            tmp = self.directory / (INDEX_FILE + ".tmp")
            faiss.write_index(self._index, str(tmp))
            os.replace(tmp, self.directory / INDEX_FILE)
            lines = "".join(json.dumps(asdict(e), ensure_ascii=False) + "\n" for e in self._entries.values())
            _atomic_write(self.directory / ENTRIES_FILE, lines.encode("utf-8"))
            self._manifest.update(count=len(self._entries),
                                  updated_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
            _atomic_write(self.directory / MANIFEST_FILE, json.dumps(self._manifest, indent=1).encode("utf-8"))
            self._stamp = self._manifest_stamp()
            self._dirty = False

    # ---- reading ------------------------------------------------------------------------------------
    def ensure_loaded(self) -> None:
        """Load (or reload after an outside change) now; raises CorruptIndexError for damaged files."""
        with self._lock:
            self._load()

    def __len__(self) -> int:
        with self._lock:
            self._load()
            return len(self._entries)

    @property
    def model(self) -> str | None:
        """Embedding model identifier the index was built with (None when there is no index)."""
        with self._lock:
            self._load()
            return self._manifest.get("model")

    @property
    def dim(self) -> int | None:
        """Vector size of the stored index (None when there is no index)."""
        with self._lock:
            self._load()
            return self._manifest.get("dim")

    def entries(self) -> list[Entry]:
        """All entries, in id order."""
        with self._lock:
            self._load()
            return [self._entries[i] for i in sorted(self._entries)]

    def search(self, vector: np.ndarray, k: int,
               exclude_task_ids: Iterable[str | None] = ()) -> list[tuple[Entry, float]]:
        """The k nearest entries to one unit vector, best first, never an entry of the excluded task ids."""
        skip = {t for t in exclude_task_ids if t}
        with self._lock:
            self._load()
            if self._index is None or not self._entries:
                return []
            # Over-fetch by the number of excluded entries, then drop them: exact, whatever their rank.
            if skip and self._task_ids is None:
                self._task_ids = {}
                for i, e in self._entries.items():
                    if e.task_id:
                        self._task_ids.setdefault(e.task_id, []).append(i)
            excluded = {i for t in skip for i in (self._task_ids or {}).get(t, ())}
            want = min(k + len(excluded), len(self._entries))
            scores, ids = self._index.search(vector.reshape(1, -1), want)
        found = [(self._entries[int(i)], float(s)) for s, i in zip(scores[0], ids[0], strict=True)
                 if i >= 0 and int(i) not in excluded]
        return found[:k]

    # ---- writing ------------------------------------------------------------------------------------
    def reset(self, model: str, dim: int) -> None:
        """Start an empty index in memory for `model` (saved by the next `save()`)."""
        import faiss

        with self._lock:
            self._index = faiss.IndexIDMap(faiss.IndexFlatIP(dim))
            self._entries, self._task_ids = {}, None
            self._manifest = {"format": FORMAT_VERSION, "model": model, "dim": dim, "count": 0, "next_id": 0}
            self._dirty = True

    def add(self, entries: Iterable[Entry], vectors: np.ndarray, model: str) -> AddReport:
        """Add entries with their unit vectors (row i belongs to entry i); replaces entries of the same task_id."""
        import numpy as np

        entries = list(entries)
        report = AddReport()
        with self._lock:
            self._load()
            if self._index is None:
                self.reset(model, int(vectors.shape[1]))
            elif self._manifest["model"] != model or self._manifest["dim"] != vectors.shape[1]:
                raise ModelMismatchError(
                    f"index in {self.directory} was built with {self._manifest['model']} "
                    f"(dim {self._manifest['dim']}), "
                    f"not {model} (dim {vectors.shape[1]}); {rebuild_hint(self.directory)}"
                )
            seen = {(normalize_question(e.question), e.answer.strip()) for e in self._entries.values() if not e.task_id}
            by_task = {e.task_id: i for i, e in self._entries.items() if e.task_id}
            keep_rows, new_ids, stale = [], [], []
            for row, entry in enumerate(entries):
                key = (normalize_question(entry.question), entry.answer.strip())
                if entry.task_id and entry.task_id in by_task:
                    stale.append(by_task.pop(entry.task_id))
                    report.replaced += 1
                elif not entry.task_id and key in seen:
                    report.skipped += 1
                    continue
                if not entry.task_id:
                    seen.add(key)
                entry.id = int(self._manifest["next_id"])
                self._manifest["next_id"] = entry.id + 1
                self._entries[entry.id] = entry
                self._task_ids = None
                if entry.task_id:
                    by_task[entry.task_id] = entry.id
                keep_rows.append(row)
                new_ids.append(entry.id)
            if stale:
                self._remove_ids(stale)
            if keep_rows:
                block = np.ascontiguousarray(vectors[keep_rows], dtype=np.float32)
                self._index.add_with_ids(block, np.asarray(new_ids, dtype=np.int64))
            report.added = len(keep_rows) - report.replaced
            self._dirty = True
        return report

    def _remove_ids(self, ids: list[int]) -> None:
        import numpy as np

        self._index.remove_ids(np.asarray(ids, dtype=np.int64))
        for i in ids:
            self._entries.pop(i, None)
        self._task_ids = None

    def remove(self, task_ids: Iterable[str]) -> int:
        """Remove every entry of the given task ids; returns how many went (call `save()` to persist)."""
        wanted = set(task_ids)
        with self._lock:
            self._load()
            ids = [i for i, e in self._entries.items() if e.task_id in wanted]
            if ids:
                self._remove_ids(ids)
                self._dirty = True
            return len(ids)
