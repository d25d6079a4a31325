"""Task ids are names the harness writes files under (traces, attachments, run records): a safe set only.

A task id comes from data a visitor may control (a local GAIA folder's metadata, an uploaded split) or
from a remote API; `../../x` used to spend a whole run and then fail to write its trace. Every id is
checked when the task is loaded, before any run can start: letters, digits, `.`, `_` and `-`, starting
with a letter or digit, at most 128 characters (GAIA's ids are UUIDs).
"""

from __future__ import annotations

import re

_SAFE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


def is_safe_task_id(task_id: object) -> bool:
    """Whether `task_id` is a string of the safe set (usable as a file name anywhere)."""
    return isinstance(task_id, str) and _SAFE.fullmatch(task_id) is not None


def task_id_problem(task_id: object) -> str | None:
    """None for a safe id; else what is wrong with it, for the message that refuses the task."""
    if is_safe_task_id(task_id):
        return None
    shown = repr(task_id)[:60]
    return (f"task id {shown} is refused: a task id may hold only letters, digits, '.', '_' and '-' (starting with a "
            "letter or digit, at most 128 characters)")
