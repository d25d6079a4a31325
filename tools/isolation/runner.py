"""Run one program in a confined child: spawn, feed, capture with byte caps, enforce the deadline, classify.

A cold child is spawned in the calling thread, which also waits for it: bwrap's `--die-with-parent`
(and the landlock child's parent-death signal) is tied to the thread that forked it, so a short-lived
helper thread would kill the child. Once the child's leader exits, the rest of its process group is
killed too: nothing a call started outlives it. Warm
spares come from the pool's long-lived spawner thread (`pool.py`). Only the pipe readers and the
stdin writer are extra threads. Nothing the child prints is ever evaluated or unpickled.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import select
import signal
import threading
import time
from dataclasses import dataclass, field
from typing import IO, Literal, cast

from tools.isolation.attachments import select as select_attachments
from tools.isolation.disk import MAX_FILES, call_disk_use
from tools.isolation.landlock_backend import CONFINE_EXIT
from tools.isolation.launcher import Limits
from tools.isolation.memory import PAGE, SAMPLE_SECONDS, call_pids, process_table
from tools.isolation.pool import SPARES, attachment_key
from tools.isolation.spawn import Backend, Child, spawn

Reason = Literal["ok", "timeout", "memory", "output_limit", "file_size", "disk", "signal", "exit_code", "error"]
Ending = Literal["exited", "timeout", "output", "memory", "disk"]

# Kill the child once it has printed this much in total: an endless print loop must not run to the deadline.
KILL_AFTER_BYTES = 16 * 1024 * 1024
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


@dataclass
class SandboxResult:
    """What one child did: its (capped, cleaned) output and why it ended."""

    stdout: str
    stderr: str
    reason: Reason
    returncode: int | None
    duration_s: float
    stdout_dropped: int = 0
    """Bytes of stdout beyond the cap that were read and discarded."""
    stderr_dropped: int = 0
    detail: str = ""
    """Human-readable exit reason, e.g. 'killed by signal SIGKILL'."""
    backend: Backend = "bwrap"
    uid: int | None = None
    """The call's own uid when the app is root (None: the app's uid, or 65534 in a user namespace)."""
    notes: list[str] = field(default_factory=list)
    """Attachments left out of the sandbox, and why."""


class _CappedReader(threading.Thread):
    """Drains one pipe, keeping the first `cap` bytes; trips `overflow` past KILL_AFTER_BYTES."""

    def __init__(self, pipe: IO[bytes], cap: int, overflow: threading.Event, wakeup: int) -> None:
        super().__init__(daemon=True)
        # Popen pipes (bufsize=-1) are BufferedReaders; read1 returns what is there without waiting for 64 KiB.
        self.pipe = cast(io.BufferedReader, pipe)
        self.cap, self.overflow, self.wakeup = cap, overflow, wakeup
        self.kept = bytearray()
        self.total = 0

    def run(self) -> None:
        try:
            while chunk := self.pipe.read1(65536):
                self.total += len(chunk)
                room = self.cap - len(self.kept)
                if room > 0:
                    self.kept += chunk[:room]
                if self.total > KILL_AFTER_BYTES:
                    self.overflow.set()
                    os.write(self.wakeup, b"!")
                    break
        except (OSError, ValueError):
            pass


def _writer(pipe: IO[bytes], data: bytes) -> None:
    try:
        pipe.write(data)
    except (BrokenPipeError, OSError, ValueError):
        pass  # the child died before reading its program; its exit status says why
    finally:
        with contextlib.suppress(OSError):
            pipe.close()


def clean(data: bytes) -> str:
    """Decode with replacement and strip NULs and control characters (keeps newlines and tabs)."""
    text = data.decode("utf-8", "replace").replace("\r\n", "\n")
    return _CONTROL.sub("", text)


def run_sandboxed(code: str, *, limits: Limits, wall_seconds: float, attachments: list[str] | None = None,
                  workspace: str | None = None, backend: Backend = "bwrap", output_cap: int = 64_000,
                  warm: bool = True) -> SandboxResult:
    """Execute `code` in a fresh confined Python process of `backend` and return its output and exit reason.

    Only regular-file `attachments` are bound (read-only); the others are listed in the result's
    notes. `workspace` (the run's own directory) is bound read-only. With `warm`, an idle spare started
    earlier for the same backend, attachments and limits is used when there is one (see `pool.py`),
    and a replacement is requested after the run.
    """
    chosen = select_attachments(list(attachments or []))
    key = (backend, attachment_key(chosen.files + ([workspace] if workspace else [])), limits)
    child = SPARES.take(key) if warm else None
    if child is not None:
        child.refresh_budget(limits)
    try:
        if child is None:
            child = spawn(backend, chosen.files, workspace, limits)  # in this thread (see the module docstring)
    except OSError as exc:
        return SandboxResult("", str(exc), "error", None, 0.0, detail=f"could not start the sandbox: {exc}",
                             backend=backend, notes=chosen.notes)
    try:
        result = _supervise(child, code, limits=limits, wall_seconds=wall_seconds, output_cap=output_cap)
    finally:
        child.close()
        if warm:
            SPARES.request(key, lambda: spawn(backend, chosen.files, workspace, limits))
    result.backend, result.uid, result.notes = backend, child.uid, chosen.notes
    return result


def _supervise(child: Child, code: str, *, limits: Limits, wall_seconds: float, output_cap: int) -> SandboxResult:
    """Feed `code` to the started child, capture its output under the caps and deadline, classify its end."""
    proc = child.proc
    start = time.monotonic()
    overflow = threading.Event()
    assert proc.stdin and proc.stdout and proc.stderr
    wake_r, wake_w = os.pipe2(os.O_CLOEXEC | os.O_NONBLOCK)
    readers = [_CappedReader(proc.stdout, output_cap, overflow, wake_w),
               _CappedReader(proc.stderr, output_cap, overflow, wake_w)]
    writer = threading.Thread(target=_writer, args=(proc.stdin, code.encode("utf-8", "replace")), daemon=True)
    for t in (*readers, writer):
        t.start()
    try:
        ending = _wait(child, start + wall_seconds, wake_r, limits)
    finally:
        child.kill()  # whatever the leader left running (an orphan holding the pipes) goes with it
        proc.wait()
        for t in readers:
            t.join(timeout=2.0)
        writer.join(timeout=1.0)
        os.close(wake_r)
        os.close(wake_w)
    duration = time.monotonic() - start
    out, err = readers
    result = SandboxResult(clean(bytes(out.kept)), clean(bytes(err.kept)), "ok", proc.returncode, duration,
                           stdout_dropped=max(0, out.total - len(out.kept)),
                           stderr_dropped=max(0, err.total - len(err.kept)))
    _classify(result, timed_out=ending == "timeout", overflow=overflow.is_set(), limits=limits,
              wall_seconds=wall_seconds)
    if ending == "memory":
        result.reason = "memory"
        result.detail = (f"memory limit of {limits.memory_mb} MiB for the whole call "
                         "(all its processes together) reached")
    if ending == "disk":
        result.reason = "disk"
        result.detail = (f"disk limit of {limits.disk_mb} MiB or {MAX_FILES:,} files for the whole call (all the "
                         "files it wrote together) reached; the process group was killed")
    if (child.backend == "landlock" and proc.returncode == CONFINE_EXIT
            and "sandbox confinement failed" in result.stderr):
        result.reason, result.detail = "error", "the sandbox could not confine the child, so nothing ran"
    return result


def _over_limit(child: Child, limits: Limits) -> Ending | None:
    """Whether the call's processes together hold more memory, or (outside bwrap) more disk, than allowed."""
    table = process_table()
    pids = call_pids(child.proc.pid, table)
    if sum(table[pid][2] for pid in pids) * PAGE > limits.memory_mb * 2**20:
        return "memory"
    if child.workdir:
        use = call_disk_use(child.workdir, pids)
        if use.bytes > limits.disk_mb * 2**20 or use.files > MAX_FILES:
            return "disk"
    return None


def _wait(child: Child, deadline: float, wakeup: int, limits: Limits) -> Ending:
    """Block until the child exits, the deadline passes, a reader trips `wakeup` or the call passes a cap.

    Polling a pidfd wakes at once when the child exits (no sleep-loop latency) and, since only this
    thread reaps the child, its pid (the group id) cannot be recycled before the kill below. Between
    events the call's total resident memory and written disk are sampled (`memory.py`, `disk.py`).
    """
    proc = child.proc
    pidfd = os.pidfd_open(proc.pid)
    try:
        poller = select.poll()
        poller.register(pidfd, select.POLLIN)
        poller.register(wakeup, select.POLLIN)
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                child.kill()
                return "timeout"
            events = poller.poll(min(remaining, SAMPLE_SECONDS) * 1000)
            if any(fd == pidfd for fd, _ in events):
                return "exited"
            if events:  # a reader saw runaway output
                child.kill()
                return "output"
            if (over := _over_limit(child, limits)) is not None:
                child.kill()
                return over
    finally:
        os.close(pidfd)


def _classify(r: SandboxResult, *, timed_out: bool, overflow: bool, limits: Limits, wall_seconds: float) -> None:
    code = r.returncode
    tail = r.stderr[-2000:]
    if timed_out:
        r.reason, r.detail = "timeout", f"wall-clock limit of {wall_seconds:g}s reached; the process group was killed"
    elif overflow:
        r.reason, r.detail = "output_limit", (f"printed more than {KILL_AFTER_BYTES // 2**20} MiB; "
                                              "the process was killed")
    elif code == 0:
        r.reason, r.detail = "ok", "exit code 0"
    elif code in (-signal.SIGXCPU, 128 + signal.SIGXCPU) or (code in (-signal.SIGKILL, 128 + signal.SIGKILL)
                                                              and r.duration_s >= limits.cpu_seconds):
        r.reason, r.detail = "timeout", f"CPU-time limit of {limits.cpu_seconds}s reached"
    elif "MemoryError" in tail or "std::bad_alloc" in tail or "Cannot allocate memory" in tail \
            or "out of memory" in tail.lower():
        r.reason, r.detail = "memory", f"memory limit of {limits.memory_mb} MiB (address space) reached"
    elif code in (-signal.SIGXFSZ, 128 + signal.SIGXFSZ) or "File too large" in tail:
        r.reason, r.detail = "file_size", f"file-size limit of {limits.file_bytes // 2**20} MiB reached"
    elif code is not None and (code < 0 or code > 128):
        signum = -code if code < 0 else code - 128
        try:
            name = signal.Signals(signum).name
        except ValueError:
            name = str(signum)
        r.reason, r.detail = "signal", f"killed by signal {name}"
        if signum in (signal.SIGSEGV, signal.SIGABRT, signal.SIGBUS) and not tail.strip():
            r.detail += " (possibly the memory limit)"
    else:
        r.reason, r.detail = "exit_code", f"exit code {code}"
