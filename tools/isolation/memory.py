"""The memory a whole call uses: resident memory summed over every process the call started.

RLIMIT_AS bounds each process, and a call may start many (64 processes of 1 GiB each is 64 GiB). The
runner therefore samples the call's total every few hundred milliseconds and kills the call once it
passes SANDBOX_MEMORY_MB. A call's processes are the leader's descendants (bwrap: its PID namespace)
plus every member of the leader's process group (landlock: seccomp keeps them all in it, even when
they detach). No cgroup is needed; the price is a sampling window in which a burst can overshoot.
"""

from __future__ import annotations

import os
from collections import defaultdict

PAGE = os.sysconf("SC_PAGE_SIZE")
SAMPLE_SECONDS = 0.2


def process_table() -> dict[int, tuple[int, int, int]]:
    """Every process visible in /proc: pid -> (ppid, process group, resident pages)."""
    table = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        # After the command: state ppid pgrp session ... rss is the 24th field of the line (22nd here).
        table[int(entry)] = (int(fields[1]), int(fields[2]), int(fields[21]))
    return table


def call_pids(leader: int, table: dict[int, tuple[int, int, int]] | None = None) -> set[int]:
    """`leader`, its descendants and the members of its process group (the call's processes)."""
    table = process_table() if table is None else table
    children: dict[int, list[int]] = defaultdict(list)
    for pid, (ppid, _pgrp, _rss) in table.items():
        children[ppid].append(pid)
    members = {pid for pid, (_ppid, pgrp, _rss) in table.items() if pgrp == leader}
    todo = [leader, *members]
    seen: set[int] = set()
    while todo:
        pid = todo.pop()
        if pid not in seen and pid in table:
            seen.add(pid)
            todo += children[pid]
    return seen


def call_resident_bytes(leader: int) -> int:
    """Resident bytes of `leader`, its descendants and the members of its process group."""
    table = process_table()
    return sum(table[pid][2] for pid in call_pids(leader, table)) * PAGE
