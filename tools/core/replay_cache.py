"""A run's tool-result cache: every tool call's arguments and result, kept in the run folder, and replay.

Layout under `<run>/tool_cache/`:
- `blobs/<sha256>.json`: one result (output, ok, error kind, characters cut), named by the hash of its own
  content, so the same result reached by several calls is stored once;
- `index.jsonl`: one line per kept call: its key (sha256 of the tool name, the canonical JSON of its
  arguments and the task id), the tool, the task, the arguments and the blob's hash.

Secrets never reach the folder: every text is passed through `config.redact`, and a call whose arguments
or result contain a secret value at all is not kept (counted in `refused_secret`). The folder is capped at
TOOL_CACHE_MAX_MB; calls past the cap are not kept (`over_cap`), the run goes on live.

Replay (`--replay RUN_DIR`): a call whose key is in that run's index is answered from its blob instead of
the web or the sandbox; a recorded failure is not replayed (a transient failure is what a repair run wants
to try again), nor is a call that was never recorded: those run live. The task id is part of the key
because file tools read the task's own attachment.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from config import Settings, redact
from tools.core.errors import ErrorKind

log = logging.getLogger(__name__)

CACHE_DIR_NAME = "tool_cache"
INDEX_NAME = "index.jsonl"


@dataclass(frozen=True)
class CachedResult:
    """A tool result as the model saw it (already redacted and truncated by the executor)."""

    output: str
    ok: bool
    error_kind: ErrorKind | None = None
    truncated_chars: int = 0


@dataclass
class CacheStats:
    """What one run's cache did: calls answered from the record, kept, refused."""

    replayed: int = 0
    recorded: int = 0
    refused_secret: int = 0
    over_cap: int = 0


def call_key(tool: str, args: dict[str, Any], task_id: str | None) -> str:
    """The content address of one call: sha256 of its tool, canonical arguments and task."""
    canonical = json.dumps({"tool": tool, "args": args, "task": task_id or ""}, sort_keys=True,
                           ensure_ascii=False, default=str, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _has_secret(text: str, settings: Settings) -> bool:
    return any(secret in text for secret in settings.secrets())


class ToolCache:
    """Records the calls of one run into `record_dir` and answers matching ones from `replay_dir`'s record."""

    def __init__(self, settings: Settings, *, record_dir: Path | None, replay_dir: Path | None = None) -> None:
        """`record_dir`/`replay_dir` are run folders (their `tool_cache/` is used); either may be None."""
        self.settings = settings
        self.root = Path(record_dir) / CACHE_DIR_NAME if record_dir is not None else None
        self.max_bytes = int(settings.TOOL_CACHE_MAX_MB * 1024 * 1024)
        self.stats = CacheStats()
        self._lock = threading.Lock()
        self._used = _folder_bytes(self.root) if self.root is not None else 0
        self._known = _read_index(self.root) if self.root is not None else {}
        self._replay_root = Path(replay_dir) / CACHE_DIR_NAME if replay_dir is not None else None
        self._replay = _read_index(self._replay_root) if self._replay_root is not None else {}

    @classmethod
    def for_run(cls, settings: Settings, run_dir: Path, replay_from: Path | None = None) -> ToolCache | None:
        """The cache of a batch run in `run_dir` (None when TOOL_CACHE_ENABLED is off and nothing is replayed)."""
        if not settings.TOOL_CACHE_ENABLED and replay_from is None:
            return None
        return cls(settings, record_dir=run_dir if settings.TOOL_CACHE_ENABLED else None, replay_dir=replay_from)

    @property
    def replay_size(self) -> int:
        """Calls the replayed record holds."""
        return len(self._replay)

    def replay(self, tool: str, args: dict[str, Any], task_id: str | None) -> CachedResult | None:
        """The recorded successful result of this call, or None (the call runs live)."""
        if self._replay_root is None:
            return None
        blob = self._replay.get(call_key(tool, args, task_id))
        if blob is None:
            return None
        try:
            data = json.loads((self._replay_root / "blobs" / f"{blob}.json").read_text(encoding="utf-8"))
            result = CachedResult(**data)
        except (OSError, ValueError, TypeError) as exc:
            log.warning("tool cache blob %s unreadable (%s): the call runs live", blob, exc)
            return None
        if not result.ok:
            return None
        with self._lock:
            self.stats.replayed += 1
        return result

    def keep(self, tool: str, args: dict[str, Any], task_id: str | None, result: CachedResult) -> bool:
        """Store one call and its result; False when refused (a secret in it, the cap reached, no folder)."""
        if self.root is None:
            return False
        args_text = json.dumps(args, sort_keys=True, ensure_ascii=False, default=str)
        if _has_secret(args_text, self.settings) or _has_secret(result.output, self.settings):
            with self._lock:
                self.stats.refused_secret += 1
            return False
        clean = CachedResult(redact(result.output, self.settings), result.ok, result.error_kind,
                             result.truncated_chars)
        body = json.dumps(asdict(clean), sort_keys=True, ensure_ascii=False)
        blob = hashlib.sha256(body.encode("utf-8")).hexdigest()
        key = call_key(tool, args, task_id)
        line = json.dumps({"key": key, "tool": tool, "task_id": task_id, "args": json.loads(
            redact(args_text, self.settings)), "blob": blob}, ensure_ascii=False) + "\n"
        with self._lock:
            if self._known.get(key) == blob:
                return True
            blob_path = self.root / "blobs" / f"{blob}.json"
            cost = len(line.encode("utf-8")) + (0 if blob_path.exists() else len(body.encode("utf-8")))
            if self._used + cost > self.max_bytes:
                self.stats.over_cap += 1
                return False
            blob_path.parent.mkdir(parents=True, exist_ok=True)
            if not blob_path.exists():
                blob_path.write_text(body, encoding="utf-8")
            with (self.root / INDEX_NAME).open("a", encoding="utf-8") as index:
                index.write(line)
            self._used += cost
            self._known[key] = blob
            self.stats.recorded += 1
        return True


def _read_index(root: Path) -> dict[str, str]:
    """Map each key to its blob: a cache folder's index (the last line of a key wins; a damaged line is skipped)."""
    found: dict[str, str] = {}
    path = root / INDEX_NAME
    if not path.is_file():
        return found
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            row = json.loads(line)
            found[str(row["key"])] = str(row["blob"])
        except (ValueError, KeyError, TypeError):
            continue  # e.g. a line cut short by a killed process
    return found


def _folder_bytes(root: Path) -> int:
    if not root.is_dir():
        return 0
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file())
