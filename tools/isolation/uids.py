"""One uid per sandboxed call (when the app runs as root), so limits counted per user hold per call.

RLIMIT_NPROC counts the processes of a *user*: when every call ran as uid 65534, a fork bomb in one
call used up the budget of all the others. A lease gives a call (or a warm spare) a uid of its own
from a block no account uses; an exclusive `flock` on a per-uid file in a root-only directory keeps
two app processes on the same machine (say two test sessions) from leasing the same uid. The lease is
released when the call's processes are gone (the runner kills them first).
"""

from __future__ import annotations

import fcntl
import os
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

UID_BASE = 1_900_000_000
"""First uid of the block; far above any account, below the 'nobody'-like 4294967294."""
UID_COUNT = 4096
_LOCK_DIR = Path(tempfile.gettempdir()) / "run_python-uids"
_lock = threading.Lock()
_next = 0


@dataclass
class UidLease:
    """A uid held by one call until `release()`; `uid` is also the call's gid."""

    uid: int
    _fd: int | None

    def release(self) -> None:
        """Give the uid back (idempotent)."""
        if self._fd is not None:
            os.close(self._fd)  # closing drops the flock
            self._fd = None


def _lock_dir() -> Path:
    _LOCK_DIR.mkdir(mode=0o700, exist_ok=True)
    st = _LOCK_DIR.lstat()
    if st.st_uid != 0 or st.st_mode & 0o077 or not _LOCK_DIR.is_dir():
        raise PermissionError(f"{_LOCK_DIR} must be a root-owned 0700 directory")
    return _LOCK_DIR


def lease() -> UidLease:
    """A uid no other live call (in any process of this machine) holds; root only."""
    global _next
    directory = _lock_dir()
    with _lock:
        start = _next
        _next = (_next + 1) % UID_COUNT
    for i in range(UID_COUNT):
        uid = UID_BASE + (start + i) % UID_COUNT
        fd = os.open(directory / str(uid), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue
        return UidLease(uid, fd)
    raise OSError(f"all {UID_COUNT} sandbox uids are in use")
