"""GAIA tasks as typed samples, from the Hugging Face hub snapshot or a local folder of the same layout.

The folder layout (`<root>/2023/<split>/metadata.parquet` or `metadata.jsonl`) is read by
`gaia_layout`, the one reader `rag.sources` uses too.

Missing attachments: a sample keeps the absolute path where its file should be (so a tool's error
names it) and the problem is reported, never dropped silently: `Sample.attachment_missing`, the
`missing_attachments` list of `SampleList`/`GAIADataset`, and a logged warning.

Unsafe attachments: a `file_name`/`file_path` that resolves outside its split folder (`../../etc/passwd`,
an absolute path, a symlink out) is never opened: the sample keeps no path, says why in
`attachment_error`, is listed in `bad_attachments`, and the runners record it as failed unsolved.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from config import Settings, load_settings
from evaluation.task_ids import task_id_problem
from gaia_layout import GaiaRow, GaiaSplit, LayoutError, UnsafeAttachment, int_or_none, read_split, text

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
    def from_raw(cls, raw: Any) -> AnnotatorMetadata | None:
        """Build from the raw column value (dict from jsonl or parquet struct); None when absent."""
        if not isinstance(raw, dict) or not any(text(v) for v in raw.values()):
            return None
        return cls(
            steps=text(raw.get("Steps")),
            number_of_steps=int_or_none(raw.get("Number of steps")),
            how_long=text(raw.get("How long did this take?")),
            tools=text(raw.get("Tools")),
            number_of_tools=int_or_none(raw.get("Number of tools")),
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
    attachment_error: str = ""
    """Why the attachment the metadata names was refused (outside its split folder); '' when it was not."""

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
    bad_attachments: list[str]
    """One line per task whose attachment path points outside its split folder (never opened)."""

    def __init__(self, samples: Sequence[Sample] = (), missing: Sequence[str] = (), bad: Sequence[str] = ()) -> None:
        super().__init__(samples)
        self.missing_attachments = list(missing)
        self.bad_attachments = list(bad)


def _sample(row: GaiaRow, split: GaiaSplit) -> Sample:
    if not row.task_id or row.level is None:
        raise DatasetError(f"Malformed GAIA row in {split.split_dir}: task_id={row.task_id!r}, Level={row.raw_level!r}")
    if (bad_id := task_id_problem(row.task_id)) is not None:  # before any run: ids name trace and record files
        raise DatasetError(f"Malformed GAIA row in {split.split_dir}: {bad_id}")
    try:
        file_path, refused = split.attachment_path(row), ""
    except UnsafeAttachment as exc:
        file_path, refused = None, str(exc)
    return Sample(
        task_id=row.task_id,
        question=row.question,
        level=row.level,
        final_answer=row.final_answer,
        file_name=row.file_name,
        file_path=file_path,
        annotator=AnnotatorMetadata.from_raw(row.annotator),
        attachment_error=refused,
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
) -> SampleList:
    """Load one GAIA split (local folder when `data_dir` is given, else the pinned hub snapshot).

    `level` keeps one level; the other filters are `evaluation.selection.TaskSelection.choose`'s.
    """
    if level is not None and level not in (1, 2, 3):
        raise DatasetError(f"level must be 1, 2 or 3, not {level!r}")
    if data_dir is not None:
        root = Path(data_dir).expanduser()
    elif settings is not None:
        root = _hub_snapshot(split, settings)
    else:
        raise DatasetError("Loading from the hub needs the settings (GAIA_DATASET, HF_TOKEN): pass settings=.")
    if not root.is_dir():
        raise DatasetError(f"Dataset folder {root} does not exist.")
    try:
        gaia = read_split(root, split)
    except LayoutError as exc:
        raise DatasetError(str(exc)) from exc
    samples = [_sample(row, gaia) for row in gaia.rows]
    if level is not None:
        samples = [s for s in samples if s.level == level]
    missing = [f"{s.task_id}: {s.file_path}" for s in samples if s.attachment_missing]
    if missing:
        log.warning("%d GAIA attachment(s) missing in %s: %s", len(missing), gaia.split_dir, "; ".join(missing))
    bad = [s.attachment_error for s in samples if s.attachment_error]
    if bad:
        log.warning("%d GAIA attachment path(s) refused in %s: %s", len(bad), gaia.split_dir, "; ".join(bad))
    return SampleList(samples, missing, bad)


def statistics(samples: Sequence[Sample]) -> dict[str, Any]:
    """Counts per level and per attachment type ('none' for tasks without a file)."""
    return {
        "total": len(samples),
        "by_level": {lvl: n for lvl, n in sorted(Counter(s.level for s in samples).items())},
        "by_file_type": dict(Counter(s.file_type or "none" for s in samples).most_common()),
        "with_attachment": sum(bool(s.file_name) for s in samples),
        "missing_attachments": sum(s.attachment_missing for s in samples),
        "bad_attachments": sum(bool(s.attachment_error) for s in samples),
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
        settings = self.settings or load_settings()  # the seed's API is an entry point: it may read them
        if self.local_data_dir is None and self.dataset_name != settings.GAIA_DATASET:
            settings = settings.model_copy(update={"GAIA_DATASET": self.dataset_name})
        self.samples = load_split(self.split, data_dir=self.local_data_dir, settings=settings, level=self.level)
        self.missing_attachments = self.samples.missing_attachments
        return self.samples

    def get_statistics(self) -> dict[str, Any]:
        """`statistics()` of the loaded samples (loads them first if needed)."""
        return statistics(self.samples if self.samples else self.load())
