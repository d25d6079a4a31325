"""Shared helpers of the sandbox tests (no tests here): run code through the real tool and executor."""

from __future__ import annotations

import os
import time
from pathlib import Path

from config import load_settings
from tools.executor import ToolOutcome, run_tool
from tools.sandbox import make_sandbox_tools
from tools.sandbox.pool import SPARES

NOBODY = 65534


def run(code: str, attachments: list[str | Path] = (), timeout: float = 10, **overrides: object) -> ToolOutcome:
    """Run `code` with `run_python` exactly as the agent does (executor, run config with attachments)."""
    settings = load_settings(TOOL_TIMEOUT=timeout, **overrides)
    tool = make_sandbox_tools(settings)[0]
    config = {"configurable": {"attachments": [str(p) for p in attachments]}}
    return run_tool(tool, {"code": code}, settings, config=config)


def _status(pid: int | str) -> dict[str, str]:
    try:
        lines = Path(f"/proc/{pid}/status").read_text().splitlines()
    except OSError:
        return {}
    return {k: v.strip() for k, _, v in (ln.partition(":") for ln in lines)}


def _descends_from(pid: int, ancestors: set[int]) -> bool:
    for _ in range(64):
        ppid = int(_status(pid).get("PPid", "0") or 0)
        if ppid in ancestors:
            return True
        if ppid <= 1:
            return False
        pid = ppid
    return False


def nobody_pids() -> list[int]:
    """Live processes whose real uid is 65534 (sandbox children), except the idle warm spares."""
    spares = set(SPARES.spare_pids())
    pids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and _status(entry).get("Uid", "").split()[:1] == [str(NOBODY)]:
            if not _descends_from(int(entry), spares):
                pids.append(int(entry))
    return pids


def wait_no_nobody(seconds: float = 3.0) -> list[int]:
    """Wait until no sandbox process is left; return the leftovers (empty when all are gone)."""
    deadline = time.monotonic() + seconds
    while (left := nobody_pids()) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left
