"""A run's documents parsed in the budgeted worker: a hostile download costs one killed process, not the app.

A document a run downloads or is given (PDF, Word, PowerPoint, spreadsheet) is parsed by
`tools.documents.worker` through `tools.isolation.limited_job` under DOCUMENT_LIMITS, after `documents.bounded` has
judged its headers by content. Whatever the headers do not tell (a page's content streams, a sheet
of styled cells) meets the address-space, CPU and wall-clock limits, and comes back to the model as a
short failure that says which limit stopped it, never as a crash or a core held after the call.
The worker gets no settings and no secret; a PDF's parts stream back as they are parsed, so a long
PDF still reads page by page between calls (tools.documents.pdf_parse).
"""

from __future__ import annotations

import dataclasses
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tools.core.errors import ToolFailure
from tools.documents.readers import Reader, read
from tools.isolation import limited_job as budgeted
from tools.isolation.limited_job import JobLimits

DOCUMENT_LIMITS = JobLimits(memory_mb=2048, seconds=300, file_mb=256)
"""One document's parse: 2 GiB of address space (the visitor figure), 5 minutes (a long PDF parses in the
background across calls; a synchronous read gets its call's TOOL_TIMEOUT), 256 MB per written file (a scanned
page rendered for OCR)."""
_inline = False


def document_limits(seconds: float | None) -> JobLimits:
    """DOCUMENT_LIMITS with the wall and CPU time of one synchronous call (`seconds`: its TOOL_TIMEOUT)."""
    return DOCUMENT_LIMITS if seconds is None else dataclasses.replace(DOCUMENT_LIMITS, seconds=seconds,
                                                                       seconds_name="TOOL_TIMEOUT")


def parse_inline() -> None:
    """Parse documents in this process from now on: it is itself a budgeted worker (no worker inside a worker)."""
    global _inline
    _inline = True


def parse_document(reader: Reader, source: Path | bytes, label: str, on_part: Callable[[str], None] | None = None,
                   limits: JobLimits = DOCUMENT_LIMITS, **options: Any) -> str:
    """The text `reader` makes of `source` (its parts joined by newlines), parsed in the budgeted worker.

    `label` names the document in a failure; `on_part` gets each part as it is parsed (a PDF's header
    line, then each page). ToolFailure when the document is refused, unreadable, or stopped by a limit.
    """
    parts: list[str] = []

    def keep(part: str) -> None:
        parts.append(part)
        if on_part is not None:
            on_part(part)

    if _inline:
        for part in read(reader, source, label, **options):
            keep(part)
        return "\n".join(parts)
    folder = Path(tempfile.mkdtemp(prefix=f"gaia-document-{reader}-"))
    try:
        if isinstance(source, bytes):
            (folder / "document").write_bytes(source)
            source = folder / "document"
        request = {"reader": reader, "path": str(source), "label": label, "options": options}
        done = budgeted.run_worker("tools.documents.worker", request, limits, folder, keep)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    if done.reply is None:
        raise ToolFailure(f"{label} could not be parsed: {done.stopped}. The file is probably built to exhaust a "
                          "parser; find another copy or another source.", "size_limit")
    if not done.reply.get("ok"):
        raise ToolFailure(str(done.reply.get("failure") or "the document could not be parsed"),
                          done.reply.get("kind") or "corrupt_file")
    return "\n".join(parts)
