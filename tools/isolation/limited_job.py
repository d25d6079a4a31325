"""One job in a killable subprocess with hard limits: the mechanism behind visitor jobs and document parsing.

A parser given a hostile file (a PDF page of gigapixels, a docx of hundreds of MB of XML) can take a
machine's memory and a core for minutes; inside the app it would take every session down with it. So
the job runs `python -m <module>` in a new process group with, outermost first:
- prlimit: address space, CPU seconds, the size of any file written, 256 open files, no core dump;
- a wall-clock deadline, then SIGKILL of the whole group;
- a reply cap (REPLY_BYTES): a longer reply is refused, not parsed;
- a fixed environment (no API key, no HF token, offline) and a folder of its own as cwd and TMPDIR.
The worker answers in JSON lines: any number of `{"part": ...}` lines (streamed to `on_part` as they
come) and one final reply object. What stopped a job that did not reply is said in words
(`JobLimits` names the settings behind each limit). `visitors.jobs` (visitor jobs) and
`tools.documents.isolated` (a run's documents) are the two users.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from config import PROJECT_ROOT

REPLY_BYTES = 16 * 2**20
_BOOT = "import runpy, sys; sys.path.insert(0, sys.argv[1]); runpy.run_module(sys.argv[2], run_name='__main__')"


@dataclass(frozen=True)
class JobLimits:
    """What one job may take; the `*_name`s are the settings a refusal names (empty: a fixed figure)."""

    memory_mb: int
    seconds: float
    file_mb: int
    seconds_name: str = ""
    memory_name: str = ""
    file_name: str = ""


@dataclass(frozen=True)
class WorkerReply:
    """The worker's final reply object, or `stopped`: why it gave none (a limit, a crash)."""

    reply: dict[str, Any] | None = None
    stopped: str = ""


def _named(text: str, name: str) -> str:
    return f"{text} ({name})" if name else text


def stopped_reason(limits: JobLimits, code: int | None, timed_out: bool, err: bytes) -> str:
    """Which limit ended a job that gave no reply, in words a user (or the model) can act on."""
    if timed_out or code in (-signal.SIGXCPU, -signal.SIGKILL):
        return f"it took longer than {_named(f'{limits.seconds:g} s', limits.seconds_name)}, so it was stopped"
    if b"MemoryError" in err or b"Cannot allocate memory" in err or b"bad_alloc" in err:
        return (f"it needed more than {_named(f'{limits.memory_mb:,} MiB of memory', limits.memory_name)}, "
                "so it was stopped")
    if code == -signal.SIGXFSZ:
        return f"it wrote a file over {_named(f'{limits.file_mb} MB', limits.file_name)}, so it was stopped"
    return f"the worker ended without a reply (exit code {code})"


def _command(limits: JobLimits, module: str) -> list[str]:
    seconds = max(1, int(limits.seconds))
    rlimits = [f"--as={limits.memory_mb * 2**20}", f"--cpu={seconds}:{seconds + 1}",
               f"--fsize={limits.file_mb * 2**20}", "--nofile=256", "--core=0"]
    return ["/usr/bin/prlimit", *rlimits, "--", sys.executable, "-E", "-s", "-c", _BOOT, str(PROJECT_ROOT), module]


def _environment(folder: Path) -> dict[str, str]:
    return {"PATH": "/usr/bin:/bin", "HOME": str(Path.home()), "TMPDIR": str(folder / "tmp"), "LANG": "C.UTF-8",
            "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "GRADIO_ANALYTICS_ENABLED": "False",
            "MPLBACKEND": "Agg", "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def run_worker(module: str, request: dict[str, Any], limits: JobLimits, folder: Path,
               on_part: Callable[[Any], None] | None = None) -> WorkerReply:
    """Run `module` on `request` under `limits` in `folder` (which must exist; the caller removes it)."""
    (folder / "tmp").mkdir(exist_ok=True)
    with (folder / "stderr").open("w+b") as err:
        try:
            proc = subprocess.Popen(_command(limits, module), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                    stderr=err, cwd=folder, env=_environment(folder), start_new_session=True)
        except OSError as exc:  # no prlimit: nothing runs without its limits
            return WorkerReply(stopped=f"the budgeted worker cannot start ({exc.strerror}); install util-linux "
                                       "(prlimit)")
        timed_out = threading.Event()

        def expire() -> None:
            timed_out.set()
            _kill_group(proc)

        timer = threading.Timer(limits.seconds, expire)
        timer.start()
        try:
            reply = _converse(proc, json.dumps(request).encode(), on_part)
            proc.wait()
        finally:
            timer.cancel()
            _kill_group(proc)  # whatever the worker started goes with it
        if reply is not None and not timed_out.is_set():
            return WorkerReply(reply=reply)
        err.seek(max(0, err.seek(0, os.SEEK_END) - 4000))
        return WorkerReply(stopped=stopped_reason(limits, proc.returncode, timed_out.is_set(), err.read()))


def _converse(proc: subprocess.Popen[bytes], request: bytes, on_part: Callable[[Any], None] | None) -> Any:
    """Send the request; hand each part on and return the final reply (None: none, or over REPLY_BYTES)."""
    assert proc.stdin is not None and proc.stdout is not None
    with contextlib.suppress(BrokenPipeError):
        proc.stdin.write(request)
        proc.stdin.close()
    total, reply = 0, None
    while line := proc.stdout.readline(REPLY_BYTES + 1):
        total += len(line)
        if total > REPLY_BYTES:
            _kill_group(proc)
            return None
        parsed = _parse(line)
        if isinstance(parsed, dict) and set(parsed) == {"part"}:
            if on_part is not None:
                on_part(parsed["part"])
        elif parsed is not None:
            reply = parsed
    return reply


def _parse(line: bytes) -> dict[str, Any] | None:
    try:
        reply = json.loads(line)
    except ValueError:
        return None
    return reply if isinstance(reply, dict) else None


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
