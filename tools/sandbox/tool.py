"""The `run_python` tool: the model's code runs in a confined child process (see `launcher.py`)."""

from __future__ import annotations

import math
import os

from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, tool

from config import Settings
from tools.errors import ToolFailure
from tools.context import ToolContext
from tools.errors import MissingDependency
from tools.sandbox.launcher import Limits, missing_binaries, probe_namespaces
from tools.sandbox.runner import Mode, SandboxResult, run_sandboxed

DEGRADED_LABEL = "[sandbox: degraded — no namespace isolation]"
STDERR_TAIL = 3000
STDOUT_TAIL_ON_ERROR = 2000


def sandbox_mode(settings: Settings) -> Mode:
    """Check the prerequisites for SANDBOX_MODE; raise MissingDependency when strict mode cannot run here."""
    if settings.SANDBOX_MODE == "degraded" and not os.access("/usr/bin/prlimit", os.X_OK):
        raise MissingDependency(["run_python"], "prlimit is missing: install util-linux (apt-get install util-linux).")
    problem = probe_namespaces(os.geteuid() == 0)
    if problem is None:
        return "strict"
    if settings.SANDBOX_MODE == "degraded":
        return "degraded"
    fix = ("install bubblewrap and util-linux (apt-get install bubblewrap util-linux)" if missing_binaries()
           else "enable user namespaces (sysctl kernel.unprivileged_userns_clone=1) or run as root")
    raise MissingDependency(["run_python"], f"the Python sandbox cannot isolate the child here ({problem}); "
                                            f"{fix}, or set SANDBOX_MODE=degraded to run without namespaces.")


def strip_fences(code: str) -> str:
    """Remove a markdown code fence the model may have wrapped around the program."""
    text = code.strip()
    if text.startswith("```") and text.endswith("```") and "\n" in text:
        text = text[3:-3]
        first, _, rest = text.partition("\n")
        return rest if first.strip().isidentifier() or not first.strip() else text
    return code


def format_result(r: SandboxResult, *, mode: Mode) -> str:
    """The observation: stdout on success; otherwise raise ToolFailure with the exit reason, stdout and stderr."""
    label = DEGRADED_LABEL + "\n" if mode == "degraded" else ""
    out = r.stdout
    if r.stdout_dropped:
        out += f"\n…[stdout truncated: {r.stdout_dropped} more bytes were printed]"
    if r.reason == "ok":
        if out.strip():
            return label + out
        note = "(no output: print() the values you need)"
        if r.stderr.strip():
            note += "\n[stderr]\n" + r.stderr[-STDERR_TAIL:]
        return label + note
    hint = {
        "timeout": "Make the code faster or work on less data.",
        "memory": "Use less memory (smaller data, chunked reading, fewer copies).",
        "output_limit": "Print less: a summary, head(), or only the final values.",
        "file_size": "Write smaller files.",
    }.get(r.reason, "Fix the error shown in stderr and run again.")
    parts = [f"{label}run_python stopped: {r.detail}. {hint}"]
    if len(out) > STDOUT_TAIL_ON_ERROR:  # keep room for stderr, which explains the failure
        out = f"…[{len(out) - STDOUT_TAIL_ON_ERROR} earlier characters of stdout cut]\n" + out[-STDOUT_TAIL_ON_ERROR:]
    if out.strip():
        parts.append("[stdout]\n" + out)
    if r.stderr.strip():
        parts.append("[stderr]\n" + r.stderr[-STDERR_TAIL:])
    raise ToolFailure("\n".join(parts), kind=r.reason)


def make_sandbox_tools(settings: Settings) -> list[BaseTool]:
    """Build `run_python`; strict mode requires working bubblewrap namespaces (checked once, cached)."""
    mode = sandbox_mode(settings)
    limits = Limits(cpu_seconds=max(1, math.ceil(settings.TOOL_TIMEOUT)), memory_mb=settings.SANDBOX_MEMORY_MB)
    wall = settings.TOOL_TIMEOUT
    output_cap = max(4 * settings.MAX_FILE_SIZE, 16_000)

    @tool
    def run_python(code: str, config: RunnableConfig) -> str:
        """Run a Python 3 program in an isolated sandbox and return what it prints.

        Use it for arithmetic, counting, dates, string puzzles and data analysis. print() every value
        you need (the value of a final bare expression is printed too). Available: the standard library,
        numpy, pandas, openpyxl. The task's attached files (and files read_file extracted from an
        archive) can be read at their absolute paths; the working directory is an empty scratch folder. There is no network and no access to other
        files; each call starts fresh (no variables survive between calls).

        Args:
            code: the complete Python program to run.
        """
        code = strip_fences(code)
        if not code.strip():
            raise ToolFailure("no code given: pass a complete Python program that print()s its result.", "bad_arguments")
        # Files read_file extracted from archives (or fetch_webpage downloaded) live in the workspace.
        ctx = ToolContext.of(config)
        attachments = [str(p) for p in ctx.attachments] + [str(ctx.work.root)]
        result = run_sandboxed(code, limits=limits, wall_seconds=wall, attachments=attachments,
                               mode=mode, output_cap=output_cap)
        return format_result(result, mode=mode)

    return [run_python]
