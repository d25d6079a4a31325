"""Build the command line that confines one `run_python` child, and probe once whether it works here.

The child is exec-wrapped, outermost first:

    prlimit (rlimits)  ->  bwrap (namespaces, mounts)  ->  setpriv (uid 65534)  ->  python -c <child.py>

What is enforced where:
- `prlimit`: CPU seconds (TOOL_TIMEOUT; SIGXCPU then SIGKILL), address space (SANDBOX_MEMORY_MB),
  processes/threads of the uid (no fork bombs), size of any written file, open files, no core dumps.
  Inherited by everything the child starts.
- `bwrap`: new PID, network, IPC and UTS namespaces (no interface but a down loopback: no sockets
  reach anything); a new mount namespace whose root is an empty tmpfs holding read-only binds of
  /usr (+ /lib*, /bin symlinks), a few /etc files, the Python install and the venv, the task's
  attachments (read-only, at their own absolute paths), fresh /proc and /dev, and size-capped tmpfs
  mounts: /tmp (holding the empty working directory /tmp/work) and /dev/shm, all of which vanish with
  the namespace. `--clearenv` + a minimal allowlist; `--new-session` (no TIOCSTI on the parent's
  tty); `--die-with-parent`; no_new_privs. Files the harness extracted (tools.paths workspace) are
  bound read-only like attachments.
- `setpriv`: drops to uid/gid 65534 with no supplementary groups, no capabilities (bounding set
  cleared) and no_new_privs, so RLIMIT_NPROC applies and root-owned files stay unwritable.
- The parent (`runner.py`): wall-clock deadline then SIGKILL of the process group (bwrap leads it;
  its death tears the PID namespace down), byte caps on stdout/stderr, a kill once a child has
  printed 16 MiB, decoding with replacement and control-character stripping.
- Warm spares (`pool.py`) are the same sandboxes started ahead of time; each is used once.

Not enforced: no seccomp filter (the child may make any syscall, but only over its own processes and
its own mounts), no cgroup (memory is bounded by address space, not RSS; RLIMIT_NPROC counts all
processes of uid 65534, so concurrent sandboxes share that budget).

When bwrap cannot create namespaces here, SANDBOX_MODE=degraded keeps only prlimit, setpriv (when
root), a scrubbed environment and a fresh temporary directory: no filesystem or network isolation.
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

    def prlimit_args(self) -> list[str]:
        """`prlimit ... --` prefix; the hard CPU limit is one second above the soft one (SIGXCPU first)."""
        mem = self.memory_mb * 1024 * 1024
        return ["/usr/bin/prlimit", f"--cpu={self.cpu_seconds}:{self.cpu_seconds + 1}", f"--as={mem}",
                f"--nproc={self.processes}", f"--fsize={self.file_bytes}", f"--nofile={self.open_files}",
                "--core=0", "--"]


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


def _attachment_ops(mounts: Mounts, path: str) -> None:
    """Bind an attachment read-only at its absolute path (and real path); copy it in when not world-readable."""
    real = os.path.realpath(path)
    if not os.path.exists(real):
        return
    if os.path.isdir(real) and not _world_readable_dir(real):
        # A root-only directory (e.g. made by mkdtemp): bound as is, uid 65534 could not enter it.
        for file in files_of(real):
            _attachment_ops(mounts, file)
        return
    for dest in dict.fromkeys([os.path.abspath(path), real]):
        if dest.startswith(("/proc/", "/dev/", "/sys/")) or dest in ("/", "/tmp", WORKDIR):
            continue
        if os.path.isfile(real) and not os.stat(real).st_mode & 0o004:
            # Root-only file: the uid-65534 child could not read a bind of it; bwrap copies it instead.
            fd = os.open(real, os.O_RDONLY | os.O_CLOEXEC)
            mounts.pass_fds.append(fd)
            mounts.add("--perms", "0444", "--ro-bind-data", str(fd), dest, dest=dest, mirrors=False)
        else:
            mounts.add("--ro-bind", real, dest, dest=dest)


def bwrap_args(attachments: list[str], *, drop_with_setpriv: bool) -> Mounts:
    """The bwrap prefix (up to and including the setpriv drop) for one child."""
    m = Mounts(args=["/usr/bin/bwrap", "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts",
                     "--die-with-parent", "--new-session", "--clearenv"])
    if not drop_with_setpriv:  # unprivileged: a user namespace maps the caller to uid 65534
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
    m.add("--perms", "0777", "--dir", WORKDIR, dest=WORKDIR, mirrors=False)
    for name, value in child_env(WORKDIR, "/tmp").items():
        m.args += ["--setenv", name, value]
    m.args += ["--chdir", WORKDIR, "--"]
    if drop_with_setpriv:
        m.args += setpriv_args()
    return m


def setpriv_args() -> list[str]:
    """Drop to nobody: no groups, no capabilities, no privilege gain through setuid binaries."""
    return ["/usr/bin/setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups",
            "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs", "--"]


def python_args() -> list[str]:
    """The interpreter with the bootstrap: -E/-s ignore PYTHON* variables and the user site, -B writes no .pyc."""
    return [sys.executable, "-E", "-s", "-B", "-X", "utf8", "-c", CHILD_SOURCE]


def missing_binaries() -> list[str]:
    """Wrapper binaries absent from this machine."""
    return [b for b in ("/usr/bin/bwrap", "/usr/bin/prlimit", "/usr/bin/setpriv") if not os.access(b, os.X_OK)]


@lru_cache(maxsize=4)
def probe_namespaces(drop_with_setpriv: bool) -> str | None:
    """Run the full strict wrapper chain once on `pass`; None when it works, else why not (cached)."""
    if shutil.which("bwrap") is None or missing_binaries():
        return "missing " + ", ".join(missing_binaries() or ["bwrap"])
    mounts = bwrap_args([], drop_with_setpriv=drop_with_setpriv)
    cmd = Limits(cpu_seconds=10, memory_mb=1024).prlimit_args() + mounts.args + python_args()
    try:
        proc = subprocess.run(cmd, input=b"import sys; print(sys.prefix)", capture_output=True, timeout=20,
                              env={"PATH": "/usr/bin:/bin"}, start_new_session=True)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{type(exc).__name__}: {exc}"
    if proc.returncode != 0:
        return (proc.stderr or proc.stdout).decode("utf-8", "replace").strip()[:300] or f"exit code {proc.returncode}"
    return None
