"""The disk a whole call uses: every file under its working directory plus the files its processes hold open.

RLIMIT_FSIZE bounds one file; a call may write many (20 files of 32 MiB each are 640 MiB of the host's
disk). The landlock and degraded backends have no tmpfs of their own (bwrap's /tmp is a size-capped
tmpfs), so the runner samples this total with the memory and kills the call past SANDBOX_DISK_MB, or
past MAX_FILES directory entries (which also keeps each sample's walk short).
Allocated blocks are counted (a sparse file costs what it holds), each inode once (hard links), and
files the call deleted but keeps open (`/proc/<pid>/fd`, no link left) are counted too: unlinking a
file does not free its space while a descriptor holds it. Open files that are still linked elsewhere
(attachments, the interpreter) are the host's, not the call's.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass

MAX_FILES = 10_000
"""Directory entries a call may make in all (an inode bomb of empty files costs no bytes but slows every walk)."""


@dataclass(frozen=True)
class DiskUse:
    """What the call has written: allocated bytes and directory entries (the walk stops past MAX_FILES)."""

    bytes: int
    files: int


def _walk(root: str, seen: set[tuple[int, int]]) -> tuple[int, int]:
    total, entries, todo = 0, 0, [root]
    while todo and entries <= MAX_FILES:
        try:
            with os.scandir(todo.pop()) as it:
                for entry in it:
                    entries += 1
                    with contextlib.suppress(OSError):
                        st = entry.stat(follow_symlinks=False)
                        if stat.S_ISDIR(st.st_mode):
                            todo.append(entry.path)
                        if (st.st_dev, st.st_ino) not in seen:
                            seen.add((st.st_dev, st.st_ino))
                            total += st.st_blocks * 512
        except OSError:
            continue
    return total, entries


def _open_files(pids: Iterable[int], device: int, seen: set[tuple[int, int]]) -> int:
    total = 0
    for pid in pids:
        with contextlib.suppress(OSError):
            for fd in os.listdir(f"/proc/{pid}/fd"):
                with contextlib.suppress(OSError):
                    st = os.stat(f"/proc/{pid}/fd/{fd}")
                    # Deleted (no link left): only the call can have made it; linked ones are in the walk,
                    # or the host's.
                    if stat.S_ISREG(st.st_mode) and st.st_nlink == 0 and st.st_dev == device \
                            and (st.st_dev, st.st_ino) not in seen:
                        seen.add((st.st_dev, st.st_ino))
                        total += st.st_blocks * 512
    return total


def call_disk_use(workdir: str, pids: Iterable[int]) -> DiskUse:
    """The call's working directory's files plus the open (maybe deleted) files of `pids`."""
    try:
        device = os.stat(workdir).st_dev
    except OSError:
        return DiskUse(0, 0)
    seen: set[tuple[int, int]] = set()
    written, files = _walk(workdir, seen)
    return DiskUse(written + _open_files(pids, device, seen), files)
