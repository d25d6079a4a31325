"""Shared helpers of the sandbox tests (no tests here): run code through the real tool and executor."""

from __future__ import annotations

import os
import time
from pathlib import Path

from config import load_settings
from tools.executor import ToolOutcome, run_tool
from tools.sandbox import make_sandbox_tools

NOBODY = 65534


def run(code: str, attachments: list[str | Path] = (), timeout: float = 10, **overrides: object) -> ToolOutcome:
    """Run `code` with `run_python` exactly as the agent does (executor, run config with attachments)."""
    settings = load_settings(TOOL_TIMEOUT=timeout, **overrides)
    tool = make_sandbox_tools(settings)[0]
    config = {"configurable": {"attachments": [str(p) for p in attachments]}}
    return run_tool(tool, {"code": code}, settings, config=config)


def nobody_pids() -> list[int]:
    """Live processes whose real uid is 65534 (sandbox children)."""
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            status = Path(f"/proc/{entry}/status").read_text()
        except OSError:
            continue
        uid_line = next((ln for ln in status.splitlines() if ln.startswith("Uid:")), "")
        if uid_line.split()[1:2] == [str(NOBODY)]:
            pids.append(int(entry))
    return pids


def wait_no_nobody(seconds: float = 3.0) -> list[int]:
    """Wait until no sandbox process is left; return the leftovers (empty when all are gone)."""
    deadline = time.monotonic() + seconds
    while (left := nobody_pids()) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left
