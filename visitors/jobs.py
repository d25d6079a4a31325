"""Visitor jobs under a budget: a preview or a task load runs in a killable subprocess with hard limits.

Anyone may call /preview and /load_tasks without a login, and the parsers behind them expand a small
file without bound (see `tools/bounded.py`). So each job runs `python -m visitors.job_worker` in a new
process group with, outermost first:
- prlimit: address space VISITOR_JOB_MEMORY_MB, CPU seconds VISITOR_JOB_SECONDS, any written file
  VISITOR_MAX_UNPACKED_MB, 256 open files, no core dump;
- a wall-clock deadline of VISITOR_JOB_SECONDS, then SIGKILL of the whole group;
- a reply cap (REPLY_BYTES): a longer reply is refused, not parsed;
- a folder of its own (cwd, TMPDIR, WORKSPACE_DIR: every workspace of the job) removed afterwards,
  so a preview's extractions never pile up or fill the disk for other sessions;
- the settings without secrets and a fixed environment (no API key, no HF token, offline), so a
  preview cannot spend the owner's model or fetch anything.
The result is typed: the worker's value, or a refusal that says which limit stopped the job.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from config import PROJECT_ROOT, Settings

JobKind = Literal["preview", "load_tasks"]
REPLY_BYTES = 16 * 2**20
_BOOT = ("import runpy, sys; sys.path.insert(0, sys.argv[1]); "
         "runpy.run_module('visitors.job_worker', run_name='__main__')")


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


def _command(settings: Settings) -> list[str]:
    seconds = max(1, int(settings.VISITOR_JOB_SECONDS))
    limits = [f"--as={settings.VISITOR_JOB_MEMORY_MB * 2**20}", f"--cpu={seconds}:{seconds + 1}",
              f"--fsize={settings.VISITOR_MAX_UNPACKED_MB * 2**20}", "--nofile=256", "--core=0"]
    return ["/usr/bin/prlimit", *limits, "--", sys.executable, "-E", "-s", "-c", _BOOT, str(PROJECT_ROOT)]


def _environment(folder: Path) -> dict[str, str]:
    return {"PATH": "/usr/bin:/bin", "HOME": str(Path.home()), "TMPDIR": str(folder / "tmp"), "LANG": "C.UTF-8",
            "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "GRADIO_ANALYTICS_ENABLED": "False",
            "MPLBACKEND": "Agg", "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def _stopped(settings: Settings, code: int | None, timed_out: bool, err: bytes) -> str:
    seconds, memory = settings.VISITOR_JOB_SECONDS, settings.VISITOR_JOB_MEMORY_MB
    if timed_out or code in (-signal.SIGXCPU, -signal.SIGKILL):
        return f"it took longer than {seconds:g} s (VISITOR_JOB_SECONDS), so it was stopped"
    if b"MemoryError" in err or b"Cannot allocate memory" in err or b"bad_alloc" in err:
        return f"it needed more than {memory:,} MiB of memory (VISITOR_JOB_MEMORY_MB), so it was stopped"
    if code == -signal.SIGXFSZ:
        return (f"it wrote a file over {settings.VISITOR_MAX_UNPACKED_MB} MB (VISITOR_MAX_UNPACKED_MB), "
                "so it was stopped")
    return f"the worker ended without a reply (exit code {code})"


def run_job(settings: Settings, kind: JobKind, args: dict[str, Any]) -> JobResult:
    """Run one visitor job in a budgeted subprocess; its folder is removed whatever happens."""
    folder = Path(tempfile.mkdtemp(prefix=f"gaia-visitor-{kind}-"))
    (folder / "tmp").mkdir()
    request = json.dumps({"kind": kind, "args": args, "settings": worker_settings(settings, folder)}).encode()
    try:
        try:
            proc = subprocess.Popen(_command(settings), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, cwd=folder, env=_environment(folder),
                                    start_new_session=True)
        except OSError as exc:  # no prlimit: nothing runs without its limits
            return JobResult(refusal=f"the budgeted worker cannot start ({exc.strerror}); install util-linux (prlimit)")
        timed_out = False
        try:
            out, err = proc.communicate(request, timeout=settings.VISITOR_JOB_SECONDS)
        except subprocess.TimeoutExpired:
            timed_out = True
            _kill_group(proc)
            out, err = proc.communicate()
        _kill_group(proc)  # whatever the worker started goes with it
        reply = _parse(out) if not timed_out else None
        if reply is None:
            return JobResult(refusal=_stopped(settings, proc.returncode, timed_out, err[-4000:]))
        if not reply.get("ok"):
            refusal = str(reply.get("refusal") or "the job failed")
            return JobResult(
                refusal=_stopped(settings, None, False, b"MemoryError") if refusal == "memory" else refusal
            )
        return JobResult(value=reply.get("value"))
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _parse(out: bytes) -> dict[str, Any] | None:
    if not out or len(out) > REPLY_BYTES:
        return None
    try:
        reply = json.loads(out)
    except ValueError:
        return None
    return reply if isinstance(reply, dict) else None


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
