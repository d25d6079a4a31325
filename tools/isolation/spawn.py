"""Start one confined child with a backend (bwrap, landlock, degraded), and end it with everything it started.

A `Child` owns what the call holds besides the process: its uid lease (root only, see `uids.py`) and
its working directory (landlock, degraded; bwrap's is a tmpfs that vanishes with it). `close()` kills
every process of the call, then gives both back (the folder is deleted, then the uid released, in the
background: the call's reply does not wait for it). The interpreter waits for its program on stdin, so
a child can be started ahead of time as a warm spare (`pool.py`).
"""

from __future__ import annotations

import contextlib
import os
import resource
import shutil
import signal
import subprocess
import threading
from dataclasses import dataclass, field
from typing import Literal

from tools.isolation.landlock_backend import landlock_command, make_workdir, process_budget
from tools.isolation.launcher import Limits, bwrap_command, child_env, python_args, setpriv_args
from tools.isolation.uids import UidLease, lease

Backend = Literal["bwrap", "landlock", "degraded"]


@dataclass
class Child:
    """A started sandbox: its process (leader of its own process group) and what the call holds."""

    proc: subprocess.Popen[bytes]
    backend: Backend
    lease: UidLease | None = None
    workdir: str | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def uid(self) -> int | None:
        """The uid the call runs as when it has one of its own (the app is root)."""
        return self.lease.uid if self.lease else None

    def refresh_budget(self, limits: Limits) -> None:
        """Recount an unprivileged landlock spare's process budget when it is taken (it was set at its start).

        The budget sits on top of what the app's uid runs (`process_budget`); counted when the spare
        started, a fork bomb since then could have used it up. (bwrap needs no recount: its limit is
        counted inside the call's own user namespace, or on the call's own uid as root.)
        """
        if self.backend == "landlock" and self.lease is None:
            budget = process_budget(limits, None)
            with contextlib.suppress(OSError):
                hard = resource.prlimit(self.proc.pid, resource.RLIMIT_NPROC)[1]
                resource.prlimit(self.proc.pid, resource.RLIMIT_NPROC, (min(budget, hard), hard))

    def kill(self) -> None:
        """SIGKILL the call's process group (bwrap: its PID namespace goes down with it)."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        if self.backend == "degraded" and self.uid is not None:
            _kill_uid(self.uid)  # nothing keeps a degraded child in its group: sweep its uid

    def close(self) -> None:
        """Kill the call's processes, reap the leader, close the pipes, release the uid and the workdir."""
        self.kill()
        for pipe in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if pipe is not None:
                with contextlib.suppress(OSError):
                    pipe.close()
        self.proc.wait()
        if self.workdir:
            # Deleting 10,000 small files takes seconds on a busy disk: off the reply's path. The uid is held
            # until its files are gone, so no later call running as that uid ever sees them.
            _retire(self.workdir, self.lease)
        elif self.lease is not None:
            self.lease.release()


def _remove_then_release(workdir: str, held: UidLease | None) -> None:
    shutil.rmtree(workdir, ignore_errors=True)
    if held is not None:
        held.release()


def _retire(workdir: str, held: UidLease | None) -> None:
    """The call's folder gone from its path at once (renamed), deleted in the background, then the uid released."""
    gone = f"{workdir}.removing"
    try:
        os.rename(workdir, gone)
    except OSError:
        gone = workdir  # delete it where it is
    threading.Thread(target=_remove_then_release, args=(gone, held), name="sandbox-cleanup").start()


def _kill_uid(uid: int) -> None:
    """Kill every process of `uid` (kill(-1) as that uid reaches exactly its processes); twice for forks in flight."""
    for _ in range(2):
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child only switches uid and signals
            try:
                os.setgroups([])
                os.setresgid(uid, uid, uid)
                os.setresuid(uid, uid, uid)
                os.kill(-1, signal.SIGKILL)
            finally:
                os._exit(0)
        os.waitpid(pid, 0)


def _popen(cmd: list[str], *, cwd: str, env: dict[str, str], pass_fds: list[int]) -> subprocess.Popen[bytes]:
    try:
        return subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                cwd=cwd, env=env, start_new_session=True, pass_fds=pass_fds)
    finally:
        for fd in pass_fds:  # bwrap has its copies of the attachment descriptors
            os.close(fd)


def spawn(backend: Backend, attachments: list[str], workspace: str | None, limits: Limits) -> Child:
    """Start a child of `backend` whose interpreter waits for its program on stdin.

    `attachments` must be regular files (`attachments.select`); `workspace` is bound read-only.
    """
    held = lease() if os.geteuid() == 0 else None
    workdir = None
    try:
        if backend == "bwrap":
            command = bwrap_command(attachments, workspace, limits, uid=held.uid if held else None)
            proc = _popen(command.args, cwd="/", env={"PATH": "/usr/bin:/bin"}, pass_fds=command.pass_fds)
        elif backend == "landlock":
            workdir = make_workdir(held.uid if held else None)
            cmd = landlock_command(attachments, workspace, workdir, limits, held.uid if held else None)
            proc = _popen(cmd, cwd=workdir, env=child_env(workdir, os.path.join(workdir, "tmp")), pass_fds=[])
        else:
            if held is None:
                raise PermissionError("the degraded sandbox runs only when the app is root")
            workdir = make_workdir(held.uid)
            cmd = limits.prlimit_args() + setpriv_args(held.uid) + python_args()
            proc = _popen(cmd, cwd=workdir, env=child_env(workdir, os.path.join(workdir, "tmp")), pass_fds=[])
    except BaseException:
        if held is not None:
            held.release()
        if workdir:
            shutil.rmtree(workdir, ignore_errors=True)
        raise
    return Child(proc, backend, held, workdir)
