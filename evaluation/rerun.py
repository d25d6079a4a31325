"""Re-run the failures of a finished run into a new run folder linked to it (`--rerun-failed RUN_DIR`).

A task is re-run when its record is wrong (`correct is False`), ended with an error, or was cut (the
iteration cap, the token budget, a reply cut at the length limit). `--only-category C` narrows that to one
category: a `failure_category` of evaluation/failures.py (`tool_failed`) or a repair category of
evaluation/repair_hints.py (`tool_failure`). The new run takes the parent's split, data source and scorer
(so `compare` sets like against like); its run.json names the parent and the settings that changed.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from config import Settings, redact
from evaluation.records import TaskRecord
from evaluation.repair_hints import repair_category
from evaluation.run_folder import RunError, RunFolder

if TYPE_CHECKING:
    from evaluation.runner import RunConfig

RUN_OPTIONS = ("max_iterations", "use_rag", "scorer", "replay_from")
"""Run options (not settings) that a re-run may change; recorded beside the settings."""


def parent_records(run_dir: Path) -> list[TaskRecord]:
    """The records of a finished run folder (details.jsonl; a task listed twice counts by its last line)."""
    path = Path(run_dir) / "details.jsonl"
    if not path.is_file():

        raise RunError(f"{run_dir} has no details.jsonl: is it a finished run folder of `python -m evaluation run`?")
    rows: dict[str, TaskRecord] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            record = TaskRecord.from_dict(json.loads(line))
        except (ValueError, TypeError):
            continue
        rows[record.task_id] = record
    return list(rows.values())


def needs_rerun(record: TaskRecord) -> bool:
    """Wrong, errored or cut short."""
    cut = record.budget_exhausted or record.answer_truncated or record.failure_category == "iteration_cap"
    return record.correct is False or bool(record.error) or cut


def failed_task_ids(run_dir: Path, only_category: str | None = None) -> list[str]:
    """The ids of the run's tasks to re-run, in its order; `only_category` narrows them (see the docstring)."""
    chosen = [r for r in parent_records(run_dir) if needs_rerun(r)]
    if only_category:
        chosen = [r for r in chosen if only_category in (r.failure_category, repair_category(r))]
    return [r.task_id for r in chosen]


def rerun_config(parent: Path, base: RunConfig, only_category: str | None = None) -> RunConfig:
    """`base` turned into a re-run of `parent`'s failures: its split, source and scorer, the failed ids."""
    parent = Path(parent).expanduser().resolve()
    info = RunFolder(parent).info()
    if info is None:
        raise RunError(f"{parent} has no run.json: only a run folder of `python -m evaluation run` can be re-run.")
    ids = failed_task_ids(parent, only_category)
    if not ids:
        which = f" in category {only_category!r}" if only_category else ""
        raise RunError(f"{parent} has no wrong, errored or cut task{which}: nothing to re-run.")
    data_dir = base.data_dir if base.data_dir is not None else (Path(info.data_dir) if info.data_dir else None)
    return replace(base, split=info.split, data_dir=data_dir, level=None, max_samples=None, task_ids=ids,
                   scorer=base.scorer or info.scorer, parent=parent)


def settings_snapshot(settings: Settings, config: RunConfig) -> dict[str, Any]:
    """Every non-secret setting (JSON values, secrets redacted) and the run options, for run.json."""
    secret = set(Settings.secret_fields())
    snapshot: dict[str, Any] = {}
    for name in Settings.model_fields:
        if name in secret:
            continue
        value = json.loads(json.dumps(getattr(settings, name), default=str))
        snapshot[name] = redact(value, settings) if isinstance(value, str) else value
    snapshot["max_iterations"] = config.max_iterations or settings.MAX_ITERATIONS
    snapshot["use_rag"] = config.use_rag and settings.RAG_ENABLED
    snapshot["scorer"] = config.scorer or "official"
    snapshot["replay_from"] = str(config.replay_from) if config.replay_from else None
    return snapshot


def changed_settings(before: dict[str, Any], now: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Each key of both snapshots whose value differs: {"parent": old, "now": new}."""
    return {k: {"parent": before[k], "now": now[k]} for k in sorted(set(before) & set(now)) if before[k] != now[k]}


def _parent_snapshot(parent: RunFolder) -> dict[str, Any]:
    """The parent's snapshot; for a run from before snapshots, what its summary's meta says."""
    info = parent.info()
    if info is not None and info.settings:
        return info.settings
    summary = parent.summary()
    meta = summary.meta if summary is not None else {}
    return {k: v for k, v in {"MODEL_NAME": meta.get("model"), "max_iterations": meta.get("max_iterations"),
                              "use_rag": meta.get("use_rag"), "scorer": meta.get("scorer")}.items() if v is not None}


def record_lineage(folder: RunFolder, config: RunConfig, settings: Settings) -> None:
    """Keep the run's settings snapshot, and with a parent its path and the settings that changed, in run.json."""
    snapshot = settings_snapshot(settings, config)
    changes: dict[str, Any] = {"settings": snapshot,
                               "replay_from": str(config.replay_from) if config.replay_from else None}
    if config.parent is not None:
        before = _parent_snapshot(RunFolder(Path(config.parent)))
        changes["parent"] = str(config.parent)
        changes["changed_settings"] = changed_settings(before, snapshot)
    folder.update(**changes)
