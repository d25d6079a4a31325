"""The `run_python` tool: the model's code runs in a confined child process (see `launcher.py`)."""

from __future__ import annotations

import math

from langchain_core.tools import BaseTool

from config import Settings
from tools.core.context import ToolContext
from tools.core.context_tool import context_tool
from tools.core.errors import ToolFailure
from tools.isolation.launcher import Limits
from tools.isolation.modes import choose_backend
from tools.isolation.runner import SandboxResult, run_sandboxed
from tools.isolation.spawn import Backend

DEGRADED_LABEL = "[sandbox: degraded — no namespace isolation]"
LANDLOCK_LABEL = "[sandbox: landlock+seccomp]"
LABELS: dict[Backend, str] = {"bwrap": "", "landlock": LANDLOCK_LABEL, "degraded": DEGRADED_LABEL}
"""The line that opens every result of a backend (bubblewrap, the normal case, goes unlabelled)."""
STDERR_TAIL = 3000
STDOUT_TAIL_ON_ERROR = 2000


def strip_fences(code: str) -> str:
    """Remove a markdown code fence the model may have wrapped around the program."""
    text = code.strip()
    if text.startswith("```") and text.endswith("```") and "\n" in text:
        text = text[3:-3]
        first, _, rest = text.partition("\n")
        return rest if first.strip().isidentifier() or not first.strip() else text
    return code


def format_result(r: SandboxResult) -> str:
    """The observation: stdout on success; otherwise raise ToolFailure with the exit reason, stdout and stderr.

    It opens with the backend's label (landlock, degraded) and the notes on attachments left out.
    """
    label = "".join(line + "\n" for line in [LABELS[r.backend], *r.notes] if line)
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
        "disk": "Write less to disk (keep data in memory, write only the results you need).",
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
    """Build `run_python` on the backend SANDBOX_MODE selects here (probed once, cached; see `modes.py`)."""
    backend = choose_backend(settings)
    limits = Limits(cpu_seconds=max(1, math.ceil(settings.TOOL_TIMEOUT)), memory_mb=settings.SANDBOX_MEMORY_MB,
                    disk_mb=settings.SANDBOX_DISK_MB)
    wall = settings.TOOL_TIMEOUT
    output_cap = max(4 * settings.MAX_FILE_SIZE, 16_000)

    @context_tool
    def run_python(_ctx: ToolContext, code: str) -> str:
        """Run a Python 3 program in an isolated sandbox and return what it prints.

        Use it for arithmetic, counting, dates, string puzzles and data analysis. print() every value
        you need (the value of a final bare expression is printed too). Available: the standard library,
        numpy, pandas, openpyxl. The task's attached files (and files read_file extracted from an
        archive) can be read at their absolute paths; the working directory is an empty scratch folder.
        There is no network and no access to other files; each call starts fresh (no variables survive
        between calls).

        Args:
            code: the complete Python program to run.
        """
        code = strip_fences(code)
        if not code.strip():
            raise ToolFailure("no code given: pass a complete Python program that print()s its result.",
                              "bad_arguments")
        # Files read_file extracted from archives (or fetch_webpage downloaded) live in the workspace.
        result = run_sandboxed(code, limits=limits, wall_seconds=wall, attachments=[str(p) for p in _ctx.attachments],
                               workspace=str(_ctx.work.root), backend=backend, output_cap=output_cap)
        return format_result(result)

    return [run_python]
