"""Shared helpers of the sandbox tests (no tests here): run code through the real tool and executor.

`leftover_pids()` looks only at processes this test process started: importing this module makes
the test process a child subreaper, so a sandboxed process that detaches (a daemon, an orphan of a
killed group) is re-parented here rather than to init, and stays findable among our descendants.
Processes of other users or other test sessions on the machine are never looked at.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import time
from collections.abc import Sequence
from pathlib import Path

from langchain_core.runnables import RunnableConfig

from config import load_settings
from tools.core.executor import run_tool
from tools.core.outcome import ToolOutcome
from tools.isolation import LANDLOCK_LABEL, make_sandbox_tools
from tools.isolation.pool import SPARES
from tools.isolation.uids import UID_BASE

BACKENDS = ["bwrap", "landlock"]
"""The backends every abuse payload is held to (both work on the test machine; each is forced)."""

_PR_SET_CHILD_SUBREAPER = 36
ctypes.CDLL(None).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def run(code: str, attachments: Sequence[str | Path] = (), timeout: float = 30, backend: str = "bwrap",
        **overrides: object) -> ToolOutcome:
    """Run `code` with `run_python` exactly as the agent does (executor, run config with attachments).

    `timeout` (TOOL_TIMEOUT) is 30 s: a benign program ends long before it even on a loaded machine
    (walking the visible filesystem took over 10 s beside two CPU hogs); tests of the limit pass a small one.
    """
    settings = load_settings(TOOL_TIMEOUT=timeout, SANDBOX_MODE=backend, **overrides)
    tool = make_sandbox_tools(settings)[0]
    config: RunnableConfig = {"configurable": {"attachments": [str(p) for p in attachments]}}
    return run_tool(tool, {"code": code}, settings, config=config)


def body(out: ToolOutcome) -> str:
    """The observation without the backend's label line (landlock results open with one)."""
    return out.output.replace(LANDLOCK_LABEL + "\n", "", 1)


def _status(pid: int | str) -> dict[str, str]:
    try:
        lines = Path(f"/proc/{pid}/status").read_text().splitlines()
    except OSError:
        return {}
    return {k: v.strip() for k, _, v in (ln.partition(":") for ln in lines)}


def _ancestors(pid: int) -> list[int]:
    chain = []
    for _ in range(256):
        ppid = int(_status(pid).get("PPid", "0") or 0)
        if ppid <= 1:
            break
        chain.append(ppid)
        pid = ppid
    return chain


BASELINE: set[int] = set()
"""Descendants that were alive before the current test began (a session's llama.cpp server, an app under test):
not the test's leftovers. Set by the autouse fixture in tests/tools/conftest.py."""


def leftover_pids() -> list[int]:
    """Live (non-zombie) processes the test started: descendants, minus the warm spares' and BASELINE's trees."""
    me, spares = os.getpid(), set(SPARES.spare_pids())
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == me or int(entry) in BASELINE:
            continue
        status = _status(entry)
        if status.get("State", "").startswith("Z") and int(status.get("PPid", 0)) == me \
                and int(status.get("Uid", "0").split()[0]) >= UID_BASE:
            with contextlib.suppress(ChildProcessError):  # a sandbox orphan re-parented here: no Popen reaps it
                os.waitpid(int(entry), os.WNOHANG)
        if not status or status.get("State", "").startswith(("Z", "X")):
            continue
        chain = _ancestors(int(entry))
        # A new child of a process that ran before the test (a module's Chromium starting a utility
        # process at any time) is that process's business, not a leftover of the test.
        ours = chain[: chain.index(me)] if me in chain else []
        if me in chain and not (spares | BASELINE) & ({int(entry)} | set(ours)):
            pids.append(int(entry))
    return pids


def wait_no_leftovers(seconds: float = 10.0) -> list[int]:
    """Wait until no process the test started is left running; return the leftovers (empty when all are gone).

    Generous on purpose: on a loaded machine a warm spare the pool is starting shows up until it registers,
    and a killed tree takes seconds to go; a true leftover stays past any wait.
    """
    deadline = time.monotonic() + seconds
    while (left := leftover_pids()) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left
