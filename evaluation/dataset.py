"""GAIA tasks as typed samples, from the Hugging Face hub snapshot or a local folder of the same layout.

Layout: `<root>/2023/<split>/metadata.parquet` (hub format since October 2025: `Level` a string, a
`file_path` column relative to `<root>`, plus per-level `metadata.levelN.parquet` copies that we
ignore) or the older `metadata.jsonl` (attachments found by `file_name` in the split folder).

Missing attachments: a sample keeps the absolute path where its file should be (so a tool's error
names it) and the problem is reported, never dropped silently: `Sample.attachment_missing`, the
`missing_attachments` list of `SampleList`/`GAIADataset`, and a logged warning.
"""

from __future__ import annotations

import json
import logging
import math
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from config import Settings, get_settings

log = logging.getLogger(__name__)

GATED_HELP = (
    "GAIA is a gated dataset: accept its terms at https://huggingface.co/datasets/{repo} while logged in, "
    "create a read token at https://huggingface.co/settings/tokens and set HF_TOKEN, "
    "or pass a local copy with --data-dir DIR (DIR/2023/<split>/metadata.parquet or metadata.jsonl)."
)


class DatasetError(RuntimeError):
    """The dataset cannot be loaded; the message says why and what to do."""


@dataclass(frozen=True)
class AnnotatorMetadata:
    """How a human solved the task (`Annotator Metadata` in GAIA)."""

    steps: str = ""
    number_of_steps: int | None = None
    how_long: str = ""
    tools: str = ""
    number_of_tools: int | None = None

    @property
    def tool_list(self) -> list[str]:
        """Tools as a list, without the '1.' numbering annotators used."""
        items = [line.strip().lstrip("0123456789.-) ").strip() for line in self.tools.splitlines()]
        return [item for item in items if item and item.lower() != "none"]

    @classmethod
    def from_raw(cls, raw: Any) -> "AnnotatorMetadata | None":
        """Build from the raw column value (dict from jsonl or parquet struct); None when absent."""
        if not isinstance(raw, dict) or not any(_text(v) for v in raw.values()):
            return None
        return cls(
            steps=_text(raw.get("Steps")),
            number_of_steps=_int_or_none(raw.get("Number of steps")),
            how_long=_text(raw.get("How long did this take?")),
            tools=_text(raw.get("Tools")),
            number_of_tools=_int_or_none(raw.get("Number of tools")),
        )


@dataclass(frozen=True)
class Sample:
    """One GAIA task."""

    task_id: str
    question: str
    level: int
    final_answer: str
    file_name: str = ""
    file_path: Path | None = None
    """Absolute path of the attachment; None when the task has none (it may be missing: see below)."""
    annotator: AnnotatorMetadata | None = None

    @property
    def file_type(self) -> str:
        """Attachment extension without the dot, lowercase; '' when there is no attachment."""
        return Path(self.file_name).suffix.lstrip(".").lower() if self.file_name else ""

    @property
    def has_answer(self) -> bool:
        """False on the test split, whose answers are '?'."""
        return self.final_answer not in ("", "?")

    @property
    def attachment_missing(self) -> bool:
        """True when the task names an attachment that is not on disk."""
        return self.file_path is not None and not self.file_path.is_file()


class SampleList(list[Sample]):
    """A list of samples that also carries the loader's warnings."""

    missing_attachments: list[str]
    """One line per task whose attachment file is missing: 'task_id: path'."""

    def __init__(self, samples: Sequence[Sample] = (), missing: Sequence[str] = ()) -> None:
        super().__init__(samples)
        self.missing_attachments = list(missing)


def _text(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return str(value)


def _int_or_none(value: Any) -> int | None:
    try:
        number = float(str(value).strip())  # "2", 2, 2.0 (an int column with gaps becomes float)
    except ValueError:
        return None
    return int(number) if number.is_integer() else None


def _split_dir(root: Path, split: str) -> Path:
    """Accept the dataset root (with `2023/<split>/`) or the split folder itself."""
    for candidate in (root / "2023" / split, root / split, root):
        if any(candidate.glob("metadata*.parquet")) or (candidate / "metadata.jsonl").is_file():
            if candidate == root and root.name != split:
                log.warning("Using %s as the %r split folder (its name does not say so).", root, split)
            return candidate
    raise DatasetError(
        f"No GAIA metadata for split {split!r} under {root}: expected {root}/2023/{split}/metadata.parquet "
        "or metadata.jsonl (or a split folder containing one)."
    )


def _read_rows(split_dir: Path) -> list[dict[str, Any]]:
    main = split_dir / "metadata.parquet"
    parquet = [main] if main.is_file() else sorted(split_dir.glob("metadata.level*.parquet"))
    if parquet:
        import pandas as pd

        try:
            frames = [pd.read_parquet(p) for p in parquet]
        except Exception as exc:  # noqa: BLE001 - corrupt file: say which
            raise DatasetError(f"Cannot read {parquet[0]}: {exc}") from exc
        return [row for frame in frames for row in frame.to_dict(orient="records")]
    rows = []
    path = split_dir / "metadata.jsonl"
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise DatasetError(f"{path}:{number}: invalid JSON ({exc.msg})") from exc
    return rows


def _sample(row: dict[str, Any], split_dir: Path, repo_root: Path) -> Sample:
    task_id = _text(row.get("task_id"))
    level = _int_or_none(row.get("Level"))
    if not task_id or level is None:
        raise DatasetError(f"Malformed GAIA row in {split_dir}: task_id={task_id!r}, Level={row.get('Level')!r}")
    file_name = _text(row.get("file_name")).strip()
    file_path: Path | None = None
    if file_name:
        candidates = [repo_root / rel] if (rel := _text(row.get("file_path")).strip()) else []
        candidates.append(split_dir / file_name)
        file_path = next((c for c in candidates if c.is_file()), candidates[0]).resolve()
    return Sample(
        task_id=task_id,
        question=_text(row.get("Question")),
        level=level,
        final_answer=_text(row.get("Final answer")).strip(),
        file_name=file_name,
        file_path=file_path,
        annotator=AnnotatorMetadata.from_raw(row.get("Annotator Metadata")),
    )


def _hub_snapshot(split: str, settings: Settings) -> Path:
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import GatedRepoError, LocalEntryNotFoundError, RepositoryNotFoundError

    repo = settings.GAIA_DATASET
    token = settings.HF_TOKEN.get_secret_value() if settings.HF_TOKEN else None
    try:
        path = snapshot_download(
            repo_id=repo, repo_type="dataset", revision=settings.GAIA_REVISION, token=token,
            cache_dir=settings.GAIA_CACHE_DIR, allow_patterns=[f"2023/{split}/*"],
        )
    except (GatedRepoError, RepositoryNotFoundError) as exc:
        why = "HF_TOKEN is not set" if token is None else "the token has no access"
        raise DatasetError(f"Cannot access {repo} ({why}). " + GATED_HELP.format(repo=repo)) from exc
    except LocalEntryNotFoundError as exc:
        raise DatasetError(
            f"{repo}@{settings.GAIA_REVISION} is not in the cache {settings.GAIA_CACHE_DIR} and the hub is "
            "unreachable (offline, or HF_HUB_OFFLINE=1). Connect once to download it, or "
            + GATED_HELP.format(repo=repo).split(", or ")[-1]
        ) from exc
    except Exception as exc:  # noqa: BLE001 - network/HTTP errors: one clear line instead of a traceback
        raise DatasetError(f"Downloading {repo}@{settings.GAIA_REVISION} failed: {exc}") from exc
    return Path(path)


def load_split(
    split: str,
    *,
    data_dir: Path | None = None,
    settings: Settings | None = None,
    level: int | None = None,
    task_ids: Sequence[str] | None = None,
) -> SampleList:
    """Load one GAIA split (local folder when `data_dir` is given, else the pinned hub snapshot)."""
    if level is not None and level not in (1, 2, 3):
        raise DatasetError(f"level must be 1, 2 or 3, not {level!r}")
    root = Path(data_dir).expanduser() if data_dir is not None else _hub_snapshot(split, settings or get_settings())
    if not root.is_dir():
        raise DatasetError(f"Dataset folder {root} does not exist.")
    split_dir = _split_dir(root, split)
    repo_root = split_dir.parent.parent if split_dir.parent.name == "2023" else split_dir
    samples = [_sample(row, split_dir, repo_root) for row in _read_rows(split_dir)]
    if level is not None:
        samples = [s for s in samples if s.level == level]
    if task_ids:
        known = {s.task_id for s in samples}
        if unknown := [t for t in task_ids if t not in known]:
            raise DatasetError(f"Unknown task id(s) for split {split!r}{f' level {level}' if level else ''}: {', '.join(unknown)}")
        wanted = set(task_ids)
        samples = [s for s in samples if s.task_id in wanted]
    missing = [f"{s.task_id}: {s.file_path}" for s in samples if s.attachment_missing]
    if missing:
        log.warning("%d GAIA attachment(s) missing in %s: %s", len(missing), split_dir, "; ".join(missing))
    return SampleList(samples, missing)


def statistics(samples: Sequence[Sample]) -> dict[str, Any]:
    """Counts per level and per attachment type ('none' for tasks without a file)."""
    return {
        "total": len(samples),
        "by_level": {lvl: n for lvl, n in sorted(Counter(s.level for s in samples).items())},
        "by_file_type": dict(Counter(s.file_type or "none" for s in samples).most_common()),
        "with_attachment": sum(bool(s.file_name) for s in samples),
        "missing_attachments": sum(s.attachment_missing for s in samples),
        "with_answer": sum(s.has_answer for s in samples),
    }


class GAIADataset:
    """The seed's API: `GAIADataset(split=..., level=..., local_data_dir=...).load()`."""

    def __init__(
        self,
        dataset_name: str = "gaia-benchmark/GAIA",
        split: str = "validation",
        level: int | None = None,
        local_data_dir: str | Path | None = None,
        settings: Settings | None = None,
    ) -> None:
        self.dataset_name, self.split, self.level = dataset_name, split, level
        self.local_data_dir = Path(local_data_dir) if local_data_dir else None
        self.settings = settings
        self.samples: SampleList = SampleList()
        self.missing_attachments: list[str] = []

    def load(self) -> list[Sample]:
        """Load (from the local folder, else the hub) and return the samples."""
        settings = self.settings or get_settings()
        if self.local_data_dir is None and self.dataset_name != settings.GAIA_DATASET:
            settings = settings.model_copy(update={"GAIA_DATASET": self.dataset_name})
        self.samples = load_split(self.split, data_dir=self.local_data_dir, settings=settings, level=self.level)
        self.missing_attachments = self.samples.missing_attachments
        return self.samples

    def get_statistics(self) -> dict[str, Any]:
        """`statistics()` of the loaded samples (loads them first if needed)."""
        return statistics(self.samples if self.samples else self.load())
