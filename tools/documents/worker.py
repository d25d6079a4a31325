"""The document worker: one document parsed in a process of its own (`tools/documents/isolated.py` starts it).

Reads one JSON request on stdin — {"reader": "docx" | "pptx" | "pdf" | "excel", "path", "label", "options": {...}}
— and writes JSON lines on stdout: one {"part": text} per part as it is parsed, then {"ok": true}, or
{"ok": false, "failure": message, "kind": error kind} for a ToolFailure the model can act on. The readers
are `tools.documents.readers`. The parent holds the limits (tools.isolation.limited_job); this process has no
settings, no secret and no network need.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from tools.core.errors import ToolFailure
from tools.documents.isolated import parse_inline
from tools.documents.readers import read


def main() -> int:
    """Serve one request from stdin; a ToolFailure comes back as the model's message, bugs as their type."""
    parse_inline()
    request = json.loads(sys.stdin.read())
    out = sys.stdout
    try:
        for part in read(request["reader"], request["path"], request["label"], **request.get("options", {})):
            out.write(json.dumps({"part": part}) + "\n")
            out.flush()
        reply: dict[str, Any] = {"ok": True}
    except ToolFailure as exc:
        reply = {"ok": False, "failure": str(exc), "kind": exc.kind}
    except MemoryError:
        raise
    except Exception as exc:  # noqa: BLE001 - a damaged file: the model is told what broke, and to find another copy
        if _out_of_memory(exc):  # lxml and zlib report the worker's memory cap as their own error, not MemoryError
            raise MemoryError(str(exc)) from exc
        reply = {"ok": False, "failure": f"{Path(request['path']).name} could not be parsed ({type(exc).__name__}: "
                                         f"{str(exc)[:120]}). Try another copy of the file.", "kind": "corrupt_file"}
    out.write(json.dumps(reply) + "\n")
    out.flush()
    return 0


def _out_of_memory(exc: BaseException) -> bool:
    text = f"{type(exc).__name__} {exc}".lower()
    return isinstance(exc, OSError) and exc.errno == 12 or "memory allocation failed" in text \
        or "cannot allocate memory" in text or "out of memory" in text


if __name__ == "__main__":
    sys.exit(main())
