"""Visitor jobs under a budget: a preview or a task load runs in a killable subprocess with hard limits.

Anyone may call /preview and /load_tasks without a login, and the parsers behind them expand a small
file without bound (see `tools/documents/bounded.py`). So each job runs `python -m visitors.job_worker` through
`tools.isolation.limited_job` (prlimit, a wall-clock kill of its process group, a reply cap, a fixed environment)
with the visitor limits: address space VISITOR_JOB_MEMORY_MB, CPU and wall seconds
VISITOR_JOB_SECONDS, any written file VISITOR_MAX_UNPACKED_MB. Each job has a folder of its own (cwd,
TMPDIR, WORKSPACE_DIR: every workspace of the job) removed afterwards, so a preview's extractions
never pile up or fill the disk for other sessions; its settings come without secrets, so a preview
cannot spend the owner's model or fetch anything. The result is typed: the worker's value, or a
refusal that says which limit stopped the job.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from config import Settings
from tools.isolation.limited_job import REPLY_BYTES, JobLimits, run_worker, stopped_reason

__all__ = ["REPLY_BYTES", "JobKind", "JobResult", "run_job", "visitor_limits", "worker_settings"]
JobKind = Literal["preview", "load_tasks"]


@dataclass(frozen=True)
class JobResult:
    """The worker's value when it finished in budget; else `refusal` says what stopped it."""

    value: Any = None
    refusal: str = ""

    @property
    def ok(self) -> bool:
        """True when the job finished within its limits and the worker returned a value."""
        return not self.refusal


def worker_settings(settings: Settings, folder: Path) -> dict[str, Any]:
    """`settings` as plain values with every secret set to None and every workspace under `folder`."""
    values = settings.model_dump(mode="json", exclude=set(Settings.secret_fields()))
    return values | dict.fromkeys(Settings.secret_fields()) | {"WORKSPACE_DIR": str(folder / "work")}


def visitor_limits(settings: Settings) -> JobLimits:
    """The VISITOR_JOB_* limits of one visitor job."""
    return JobLimits(settings.VISITOR_JOB_MEMORY_MB, settings.VISITOR_JOB_SECONDS, settings.VISITOR_MAX_UNPACKED_MB,
                     "VISITOR_JOB_SECONDS", "VISITOR_JOB_MEMORY_MB", "VISITOR_MAX_UNPACKED_MB")


def run_job(settings: Settings, kind: JobKind, args: dict[str, Any]) -> JobResult:
    """Run one visitor job in a budgeted subprocess; its folder is removed whatever happens."""
    folder = Path(tempfile.mkdtemp(prefix=f"gaia-visitor-{kind}-"))
    limits = visitor_limits(settings)
    try:
        done = run_worker("visitors.job_worker", {"kind": kind, "args": args,
                                               "settings": worker_settings(settings, folder)}, limits, folder)
        if done.reply is None:
            return JobResult(refusal=done.stopped)
        if not done.reply.get("ok"):
            refusal = str(done.reply.get("refusal") or "the job failed")
            memory = stopped_reason(limits, None, False, b"MemoryError")
            return JobResult(refusal=memory if refusal == "memory" else refusal)
        return JobResult(value=done.reply.get("value"))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
