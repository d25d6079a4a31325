"""The budgeted worker: one preview or one task load, in a process of its own (`visitors/jobs.py` starts it).

Reads one JSON request on stdin — {"kind": "preview" | "load_tasks", "args": {...}, "settings": {...}} —
and writes one JSON reply on stdout: {"ok": true, "value": ...} or {"ok": false, "refusal": "..."}.
The parent holds the limits (address space, CPU seconds, file size via prlimit; a wall-clock kill of
the process group; a cap on the reply) and removes this process's folder afterwards. The settings
come without any secret (no API key, no HF token), so nothing here can spend a model or reach a
gated dataset; the environment is the parent's short allowlist and HF_HUB_OFFLINE is set.
Before a parser sees a file, `tools.documents.bounded` checks what it would expand to.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path
from typing import Any

from config import Settings, load_settings
from tools.documents.bounded import Caps, file_problem, split_problem


def _tool(settings: Settings, name: str) -> Any:
    """The one tool `name`, from the first factory that provides it (the registry's order)."""
    from tools.core.errors import MissingDependency
    from tools.core.registry import FACTORIES, call_factory

    for _tier, factory in FACTORIES:
        try:
            made = call_factory(factory, settings)
        except (MissingDependency, ImportError):
            continue
        found = next((t for t in made if t.name == name), None)
        if found is not None:
            return found
    raise LookupError(f"{name} is not available")


def preview(settings: Settings, args: dict[str, Any]) -> dict[str, Any]:
    """Run the reading tool `args["tool"]` on `args["path"]`, confined like a run, in a workspace of its own."""
    path = Path(args["path"])
    if (problem := file_problem(path, Caps.of(settings))) is not None:
        return {"ok": False, "refusal": f"{path.name} is not previewed: {problem}."}
    # Imported only now: a refusal costs a visitor's job a fraction of a second, not langchain's import.
    from tools.core.context import ToolContext
    from tools.core.executor import run_tool
    from tools.core.services import RunServices
    from tools.core.workspace import open_workspace

    with open_workspace(settings, "preview") as work:
        context = ToolContext(attachments=(path,), readable=tuple(Path(p) for p in args.get("readable", ())),
                              run_services=RunServices(work), confined=True)
        outcome = run_tool(_tool(settings, args["tool"]), {"path": str(path)}, settings, config=context.to_config())
    return {"ok": True, "value": {"ok": outcome.ok, "output": outcome.output[: args.get("max_chars", 20_000)],
                                  "duration_s": outcome.duration_s}}


def load_tasks(settings: Settings, args: dict[str, Any]) -> dict[str, Any]:
    """Load a local GAIA folder's split (after its metadata's size is checked); samples as plain JSON.

    `args` holds the parent's validated form: split, level (1-3 or None) and data_dir.
    """
    folder = Path(args["data_dir"]).expanduser()
    if (problem := split_problem(folder, Caps.of(settings))) is not None:
        return {"ok": False, "refusal": f"The folder's tasks are not loaded: {problem}."}
    from evaluation.dataset import load_split

    samples = load_split(args["split"], data_dir=folder, settings=settings, level=args["level"])
    return {"ok": True, "value": [dataclasses.asdict(s) | {"file_path": str(s.file_path) if s.file_path else None}
                                  for s in samples]}


JOBS = {"preview": preview, "load_tasks": load_tasks}


def main() -> int:
    """Serve one request from stdin; failures a visitor can act on come back as a refusal, bugs as their type."""
    from tools.documents.isolated import parse_inline

    parse_inline()  # this process is the budget: its documents are parsed here, not in a worker of its own
    request = json.loads(sys.stdin.read())
    settings = load_settings(**request["settings"])
    try:
        reply = JOBS[request["kind"]](settings, request["args"])
    except MemoryError:
        reply = {"ok": False, "refusal": "memory"}
    except Exception as exc:  # noqa: BLE001 - shown to the visitor (the parent strips server paths)
        reply = {"ok": False, "refusal": (str(exc) or type(exc).__name__)[:2000]}
    sys.stdout.write(json.dumps(reply, default=str))
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
