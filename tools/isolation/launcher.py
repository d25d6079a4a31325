"""The bwrap backend: build the command line that confines one `run_python` child, and probe it once.

The child is exec-wrapped, outermost first:

    prlimit (rlimits)  ->  bwrap (namespaces, mounts)  ->  setpriv (the call's uid)  ->  python -c <child.py>

as root; unprivileged there is no setpriv and prlimit runs inside bwrap (see `spawn.py`).

What is enforced where:
- `prlimit`: CPU seconds (TOOL_TIMEOUT; SIGXCPU then SIGKILL), address space (SANDBOX_MEMORY_MB),
  processes/threads of the call (no fork bombs: counted on the call's own uid as root, inside the
  call's user namespace otherwise), size of any written file, open files, no core dumps.
  Inherited by everything the child starts.
- `bwrap`: new PID, network, IPC and UTS namespaces (no interface but a down loopback: no sockets
  reach anything); a new mount namespace whose root is an empty tmpfs holding read-only binds of
  /usr (+ /lib*, /bin symlinks), a few /etc files, the Python install and the venv, the task's
  attachments (regular files only, read-only, at their own absolute paths), the run's workspace
  (read-only), fresh /proc and /dev, and size-capped tmpfs mounts: /tmp (holding the empty working
  directory /tmp/work) and /dev/shm, all of which vanish with the namespace. `--clearenv` + a minimal
  allowlist; `--new-session` (no TIOCSTI on the parent's tty); `--die-with-parent`; no_new_privs.
- `setpriv` (when the app is root): drops to a uid of the call's own (`uids.py`) with no
  supplementary groups, no capabilities and no_new_privs, so RLIMIT_NPROC counts this call only and
  root-owned files stay unwritable. Unprivileged, a user namespace maps the caller to uid 65534.
- The parent (`runner.py`): wall-clock deadline then SIGKILL of the process group (bwrap leads it;
  its death tears the PID namespace down), byte caps on stdout/stderr, a kill once a child has
  printed 16 MiB, decoding with replacement and control-character stripping.
- Warm spares (`pool.py`) are the same sandboxes started ahead of time; each is used once.

Not enforced here: no seccomp filter (the child may make any syscall, but only over its own processes
and its own mounts), no cgroup (memory is bounded per process by address space, not in total).
Where bwrap cannot create namespaces, `landlock_backend.py` confines without them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

NOBODY = 65534
TMPFS_BYTES = 128 * 1024 * 1024
SHM_BYTES = 64 * 1024 * 1024
MAX_PROCESSES = 64
MAX_OPEN_FILES = 256
MAX_FILE_BYTES = 64 * 1024 * 1024
DISK_MB = 256
MAX_DIR_FILES = 500
WORKDIR = "/tmp/work"
CHILD_SOURCE = (Path(__file__).with_name("child.py")).read_text(encoding="utf-8")

# What Python and the scientific stack need from /etc; nothing else of the host's /etc is visible.
ETC_FILES = ("/etc/ld.so.cache", "/etc/localtime", "/etc/timezone", "/etc/mime.types")
TOP_LINKS = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")


def child_env(workdir: str, tmpdir: str) -> dict[str, str]:
    """The whole environment of the child: nothing of the parent's (no API keys, no paths)."""
    return {
        "PATH": "/usr/bin:/bin",
        "HOME": workdir,
        "TMPDIR": tmpdir,
        "LANG": "C.UTF-8",
        "MPLBACKEND": "Agg",
        "MPLCONFIGDIR": f"{workdir}/.matplotlib",
        "OPENBLAS_NUM_THREADS": "1",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
    }


@dataclass(frozen=True)
class Limits:
    """Per-child resource limits (see the module docstring for where each is enforced)."""

    cpu_seconds: int
    memory_mb: int
    processes: int = MAX_PROCESSES
    open_files: int = MAX_OPEN_FILES
    file_bytes: int = MAX_FILE_BYTES
    disk_mb: int = DISK_MB
    """All files of the call together (landlock, degraded: sampled by the runner; bwrap: its /tmp tmpfs)."""

    def prlimit_args(self, processes: int | None = None, processes_hard: str | None = None) -> list[str]:
        """`prlimit ... --` prefix; the hard CPU limit is one second above the soft one (SIGXCPU first).

        `processes` overrides the process count when the uid is shared with other processes (see
        `landlock_backend.process_budget`); `processes_hard` leaves room above it for the parent to
        raise it later (only where seccomp keeps the child from raising it itself).
        """
        mem = self.memory_mb * 1024 * 1024
        nproc = self.processes if processes is None else processes
        return ["/usr/bin/prlimit", f"--cpu={self.cpu_seconds}:{self.cpu_seconds + 1}", f"--as={mem}",
                f"--nproc={nproc}:{processes_hard or nproc}", f"--fsize={self.file_bytes}",
                f"--nofile={self.open_files}", "--core=0", "--"]


@dataclass
class Mounts:
    """bwrap mount arguments; creates missing parent directories world-traversable (bwrap's are 0700)."""

    args: list[str] = field(default_factory=list)
    mirrored: list[str] = field(default_factory=list)
    """Destinations showing a host path (binds, symlinks): everything below them already exists."""
    made: list[str] = field(default_factory=list)
    """Destinations created empty (dirs, tmpfs, /proc, /dev): subdirectories must be made."""
    pass_fds: list[int] = field(default_factory=list)

    def _exists(self, path: str) -> bool:
        return path in self.made or any(path == p or path.startswith(p + "/") for p in self.mirrored)

    def add(self, *op: str, dest: str, mirrors: bool = True) -> None:
        """Append one bwrap operation whose destination is `dest`, making its missing parents first."""
        parts = Path(dest).parts[1:-1]
        for i in range(1, len(parts) + 1):
            parent = "/" + "/".join(parts[:i])
            if not self._exists(parent):
                self.args += ["--perms", "0755", "--dir", parent]
                self.made.append(parent)
        self.args += list(op)
        (self.mirrored if mirrors else self.made).append(dest)


def python_paths() -> list[str]:
    """The venv and the base install the interpreter runs from (real paths, deduplicated)."""
    paths = []
    for p in (sys.prefix, sys.base_prefix, str(Path(sys.executable).resolve().parent.parent)):
        real = os.path.realpath(p)
        if real not in paths and not real.startswith("/usr/") and real != "/usr":
            paths.append(real)
    # Drop paths nested in another one.
    return [p for p in paths if not any(p != q and p.startswith(q + "/") for q in paths)]


def _world_readable_dir(path: str) -> bool:
    return os.stat(path).st_mode & 0o005 == 0o005


def files_of(directory: str, limit: int = MAX_DIR_FILES) -> list[str]:
    """Regular files under `directory` (at most `limit`), for directories the child could not traverse."""
    found: list[str] = []
    for root, _dirs, files in os.walk(directory):
        found += [os.path.join(root, f) for f in sorted(files)]
        if len(found) >= limit:
            return found[:limit]
    return found


def _bind_file(mounts: Mounts, real: str, dest: str) -> None:
    if os.stat(real).st_mode & 0o004:
        mounts.add("--ro-bind", real, dest, dest=dest)
    else:
        # Root-only file: the sandbox uid could not read a bind of it; bwrap copies it in instead.
        fd = os.open(real, os.O_RDONLY | os.O_CLOEXEC)
        mounts.pass_fds.append(fd)
        mounts.add("--perms", "0444", "--ro-bind-data", str(fd), dest, dest=dest, mirrors=False)


def _attachment_ops(mounts: Mounts, path: str) -> None:
    """Bind a regular-file attachment read-only at its absolute path and its real path."""
    real = os.path.realpath(path)
    for dest in dict.fromkeys([os.path.abspath(path), real]):
        if not dest.startswith(("/proc/", "/dev/", "/sys/")) and dest not in ("/", "/tmp", WORKDIR):
            _bind_file(mounts, real, dest)


def _workspace_ops(mounts: Mounts, workspace: str) -> None:
    """Bind the run's workspace read-only; a directory the sandbox uid cannot enter is bound file by file."""
    real = os.path.realpath(workspace)
    if not os.path.isdir(real) or real in ("/", "/tmp") or real.startswith(("/proc/", "/dev/", "/sys/")):
        return
    if _world_readable_dir(real):
        mounts.add("--ro-bind", real, real, dest=real)
        return
    for file in files_of(real):  # e.g. made by mkdtemp (0700): bound as is, the sandbox uid could not enter it
        if os.path.isfile(file) and not os.path.islink(file):
            _bind_file(mounts, file, file)


def bwrap_args(attachments: list[str], workspace: str | None, *, uid: int | None) -> Mounts:
    """The bwrap prefix (up to and including the setpriv drop to `uid`) for one child.

    `attachments` are regular files (see `attachments.select`); `uid` None means unprivileged: a user
    namespace maps the caller to uid 65534.
    """
    m = Mounts(args=["/usr/bin/bwrap", "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts",
                     "--die-with-parent", "--new-session", "--clearenv"])
    if uid is None:
        m.args += ["--unshare-user", "--uid", str(NOBODY), "--gid", str(NOBODY), "--cap-drop", "ALL"]
    m.add("--ro-bind", "/usr", "/usr", dest="/usr")
    for top in TOP_LINKS:
        if os.path.islink(top):
            m.add("--symlink", os.readlink(top), top, dest=top)
        elif os.path.isdir(top):
            m.add("--ro-bind", top, top, dest=top)
    for etc in ETC_FILES:
        if os.path.exists(etc):
            m.add("--ro-bind", etc, etc, dest=etc)
    # /tmp's tmpfs goes first: a venv or attachment that lives under /tmp is bound on top of it, not hidden.
    m.add("--perms", "1777", "--size", str(TMPFS_BYTES), "--tmpfs", "/tmp", dest="/tmp", mirrors=False)
    for py in python_paths():
        m.add("--ro-bind", py, py, dest=py)
    m.add("--proc", "/proc", dest="/proc", mirrors=False)
    m.add("--dev", "/dev", dest="/dev", mirrors=False)
    # multiprocessing's semaphores live in /dev/shm, which bwrap's /dev leaves root-only.
    m.add("--perms", "1777", "--size", str(SHM_BYTES), "--tmpfs", "/dev/shm", dest="/dev/shm", mirrors=False)
    for path in attachments:
        _attachment_ops(m, path)
    if workspace:
        _workspace_ops(m, workspace)
    m.add("--perms", "0777", "--dir", WORKDIR, dest=WORKDIR, mirrors=False)
    for name, value in child_env(WORKDIR, "/tmp").items():
        m.args += ["--setenv", name, value]
    m.args += ["--chdir", WORKDIR, "--"]
    if uid is not None:
        m.args += setpriv_args(uid)
    return m


def setpriv_args(uid: int, *, read_all: bool = False) -> list[str]:
    """Drop to `uid`: no groups, no capabilities, no privilege gain through setuid binaries.

    `read_all` keeps CAP_DAC_READ_SEARCH (ambient, so programs the child starts keep it too): the
    landlock backend has no mount namespace to show root-only attachments or a Python installed under
    a 0700 home, and Landlock, not file modes, decides what it may open.
    """
    caps = ["--inh-caps=-all,+dac_read_search", "--ambient-caps=+dac_read_search",
            "--bounding-set=-all,+dac_read_search"] if read_all else ["--inh-caps=-all", "--bounding-set=-all"]
    return ["/usr/bin/setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", *caps, "--no-new-privs", "--"]


def python_args(source: str = CHILD_SOURCE, argv: tuple[str, ...] = ()) -> list[str]:
    """The interpreter with the bootstrap: -E/-s ignore PYTHON* variables and the user site, -B writes no .pyc."""
    return [sys.executable, "-E", "-s", "-B", "-X", "utf8", "-c", source, *argv]


def bwrap_command(attachments: list[str], workspace: str | None, limits: Limits, *, uid: int | None) -> Mounts:
    """The whole command of one bwrap child (in `.args`), with the descriptors it must inherit.

    As root, prlimit wraps bwrap and the child drops to `uid`, whose processes RLIMIT_NPROC counts.
    Unprivileged, prlimit runs inside bwrap: there the kernel counts the processes of the call's user
    namespace alone (outside, every process of the app's uid would count, the app's threads too).
    """
    mounts = bwrap_args(attachments, workspace, uid=uid)
    if uid is None:
        mounts.args = mounts.args + limits.prlimit_args() + python_args()
    else:
        mounts.args = limits.prlimit_args() + mounts.args + python_args()
    return mounts


def missing_binaries() -> list[str]:
    """Wrapper binaries absent from this machine."""
    return [b for b in ("/usr/bin/bwrap", "/usr/bin/prlimit", "/usr/bin/setpriv") if not os.access(b, os.X_OK)]


@lru_cache(maxsize=4)
def probe_namespaces(as_root: bool) -> str | None:
    """Run the full bwrap wrapper chain once on a tiny program; None when it works, else why not (cached)."""
    if shutil.which("bwrap") is None or missing_binaries():
        return "missing " + ", ".join(missing_binaries() or ["bwrap"])
    cmd = bwrap_command([], None, Limits(cpu_seconds=10, memory_mb=1024), uid=NOBODY if as_root else None).args
    try:
        proc = subprocess.run(cmd, input=b"import sys; print(sys.prefix)", capture_output=True, timeout=20,
                              env={"PATH": "/usr/bin:/bin"}, start_new_session=True)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{type(exc).__name__}: {exc}"
    if proc.returncode != 0:
        return (proc.stderr or proc.stdout).decode("utf-8", "replace").strip()[:300] or f"exit code {proc.returncode}"
    return None
