"""The landlock backend: confinement without namespaces or privilege, for hosts that refuse user namespaces.

The child is exec-wrapped, outermost first:

    prlimit (rlimits)  ->  setpriv (root only: the call's uid)  ->  python -c <landlock + seccomp + child.py>

and, before reading its program, the interpreter confines itself for good (a failure exits with code
97 and runs nothing):
- Landlock (`landlock.py`): read/execute only /usr (and the /lib*, /bin it links to), the Python
  install, the venv and a few /etc files; read only the attachments (regular files) and the run's
  workspace; read-write only its own fresh working directory (HOME, TMPDIR inside it), /dev/null
  and /dev/full. No /proc, /sys, /home, and no host /tmp, /var/tmp or /dev/shm (multiprocessing's
  locks use unnamed shared semaphores instead, `semaphores.py`). No TCP connect/bind, no signals to or
  abstract UNIX sockets of processes outside the call: ABI >= 6 is required (Linux 6.12), else the
  backend is unavailable (`probe_landlock` says why) and `auto` falls through.
- seccomp (`seccomp.py`): no socket() at all (only a connected AF_UNIX stream socketpair), no
  chmod/chown/utime/xattr changes, no System V IPC, message queues or memfd, no ptrace, no
  mount/unshare/setns, no new namespaces, no io_uring, no signals to other process groups or the app,
  pid-taking scheduling calls on the calling thread only; setsid/setpgid do nothing, so the runner's
  kill of the call's process group reaches every process the call started.
- the parent (`runner.py`, `disk.py`): the working directory (and files the call holds open, deleted
  or not) is measured while the call runs; past SANDBOX_DISK_MB the call's process group is killed
  and the model reads "disk limit ... reached". RLIMIT_FSIZE caps each file. The directory is
  removed after the call: nothing the call wrote survives it.
- rlimits as for bwrap. As root, a uid of the call's own makes RLIMIT_NPROC a per-call budget (it keeps
  CAP_DAC_READ_SEARCH, see `launcher.setpriv_args`). Unprivileged, the uid is the app's: the process
  budget is the uid's task count when the call starts (or its spare is taken) plus the per-call
  allowance, so a fork bomb cannot starve a call started after it; a call already running may see
  its forks fail while a bomb runs next to it.

Not isolated compared with bwrap: stat() of any path (names, sizes); the kernel's view of all
processes' existence (kill(pid, 0) is refused outside the call, but pid numbers are global); the disk
limit is sampled (a burst between two samples can overshoot it by what the disk writes in 0.2 s).
"""

from __future__ import annotations

import os
import resource
import shutil
import subprocess
import tempfile
from functools import lru_cache
from pathlib import Path

from tools.isolation.launcher import (
    CHILD_SOURCE,
    ETC_FILES,
    NOBODY,
    TOP_LINKS,
    Limits,
    python_args,
    python_paths,
    setpriv_args,
)

_HERE = Path(__file__).parent
CONFINE_EXIT = 97
_PRELUDE = f"""
def _confine(argv):
    import ctypes
    groups = {{"r": [], "w": [], "f": [], "F": [], "p": []}}
    for arg in argv:
        kind, _, value = arg.partition(":")
        groups[kind].append(value)
    ctypes.CDLL(None).prctl(1, 9, 0, 0, 0)  # PR_SET_PDEATHSIG SIGKILL: the call dies with the app
    restrict(groups["r"], groups["w"], groups["f"], groups["F"])
    install(int(groups["p"][0]))


try:
    _confine(__import__("sys").argv[1:])
    del __import__("sys").argv[1:]
except BaseException as _exc:
    __import__("sys").stderr.write(f"sandbox confinement failed: {{_exc}}\\n")
    __import__("os")._exit({CONFINE_EXIT})
"""
CHILD_SOURCE_LANDLOCK = "\n".join([(_HERE / "landlock.py").read_text(encoding="utf-8"),
                                   (_HERE / "seccomp.py").read_text(encoding="utf-8"), _PRELUDE,
                                   (_HERE / "semaphores.py").read_text(encoding="utf-8"), CHILD_SOURCE])
READ_WRITE_DEVICES = ("/dev/null", "/dev/full")
READ_DEVICES = ("/dev/zero", "/dev/urandom", "/dev/random")


def _read_roots() -> list[str]:
    roots = ["/usr"] + [os.path.realpath(t) for t in TOP_LINKS if os.path.exists(t)] + python_paths()
    return [r for r in dict.fromkeys(roots) if not any(r != q and r.startswith(q + "/") for q in roots)]


def policy_args(attachments: list[str], workspace: str | None, workdir: str, app_pid: int) -> tuple[str, ...]:
    """The child's argv after `-c`: what it may read (r, f), write (w, F), and the app's pid (p)."""
    args = [f"r:{p}" for p in _read_roots()]
    args += [f"f:{p}" for p in ETC_FILES + READ_DEVICES if os.path.exists(p)]
    for path in attachments:
        args += [f"f:{p}" for p in dict.fromkeys([os.path.abspath(path), os.path.realpath(path)])]
    if workspace and os.path.isdir(workspace):
        args.append(f"r:{os.path.realpath(workspace)}")
    args += [f"w:{workdir}"] + [f"F:{d}" for d in READ_WRITE_DEVICES]
    return (*args, f"p:{app_pid}")


def tasks_of_uid(uid: int) -> int:
    """Tasks (processes and threads) the kernel counts against `uid`'s RLIMIT_NPROC, as far as /proc shows."""
    count = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            status = Path(f"/proc/{entry}/status").read_text()
        except OSError:
            continue
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        if fields.get("Uid", "").split()[:1] == [str(uid)]:
            count += int(fields.get("Threads", "1").strip() or 1)
    return count


def process_budget(limits: Limits, uid: int | None) -> int:
    """RLIMIT_NPROC for a child: its allowance on a uid of its own, else on top of what the app's uid runs."""
    return limits.processes if uid is not None else tasks_of_uid(os.getuid()) + limits.processes


def landlock_command(attachments: list[str], workspace: str | None, workdir: str, limits: Limits,
                     uid: int | None) -> list[str]:
    """The full command of one landlock child whose working directory is `workdir` (made by the caller)."""
    # Unprivileged, the soft budget is refreshed when a spare is taken (`Child.refresh_budget`); seccomp
    # keeps the child itself from raising it to the open hard limit.
    hard = resource.getrlimit(resource.RLIMIT_NPROC)[1]  # unprivileged, the app's own hard limit is the ceiling
    open_hard = "unlimited" if hard == resource.RLIM_INFINITY else str(hard)
    prefix = limits.prlimit_args(process_budget(limits, uid), None if uid is not None else open_hard)
    if uid is not None:
        prefix += setpriv_args(uid, read_all=True)
    return prefix + python_args(CHILD_SOURCE_LANDLOCK, policy_args(attachments, workspace, workdir, os.getpid()))


def make_workdir(uid: int | None) -> str:
    """A fresh, empty working directory (with `tmp/` for TMPDIR) owned by the child's uid."""
    workdir = tempfile.mkdtemp(prefix="run_python-")
    os.mkdir(os.path.join(workdir, "tmp"))
    if uid is not None:
        for path in (workdir, os.path.join(workdir, "tmp")):
            os.chown(path, uid, uid)
    return workdir


@lru_cache(maxsize=4)
def probe_landlock(as_root: bool) -> str | None:
    """Run the landlock chain once on a program that must be refused a host file; None when it confines."""
    from tools.isolation.landlock import MIN_ABI, landlock_abi  # the app side imports it as an ordinary module

    if (abi := landlock_abi()) < 1:
        return "Landlock is not enabled in this kernel (needs Linux >= 6.12 with lsm=landlock)"
    if abi < MIN_ABI:
        return (f"Landlock ABI {abi} has no signal scoping (ABI >= {MIN_ABI}, Linux >= 6.12, is needed: without it "
                "a call could signal the app's threads)")
    uid = NOBODY if as_root else None  # per-call uids are leased for calls, not for this probe
    workdir = make_workdir(uid)
    try:
        cmd = landlock_command([], None, workdir, Limits(cpu_seconds=10, memory_mb=1024), uid)
        code = b"try:\n    open('/etc/hostname').read()\n    print('open')\nexcept OSError:\n    print('confined')"
        proc = subprocess.run(cmd, input=code, capture_output=True, timeout=20, cwd=workdir,
                              env={"PATH": "/usr/bin:/bin"}, start_new_session=True)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{type(exc).__name__}: {exc}"
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    if proc.stdout.strip() != b"confined":
        return (proc.stderr or proc.stdout).decode("utf-8", "replace").strip()[-300:] or f"exit code {proc.returncode}"
    return None

