"""The in-process document readers by name: what the document worker runs for a request.

`tools.documents.isolated` names a reader in each request; the worker (or, inside a process that is
itself the budget, `isolated` directly) runs it here. The readers import no tool and no isolation, so
the dispatch sits below both and the budgeted parse cannot come back round to itself.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

from tools.documents.excel_reader import read_spreadsheet
from tools.documents.office import docx_to_text, pptx_to_text
from tools.documents.pdf_reader import pdf_parts

Reader = Literal["docx", "pptx", "pdf", "excel"]


def read(reader: str, source: Path | bytes | str, label: str, **options: Any) -> Iterator[str]:
    """The parts of `source` as `reader` makes them, in this process and unbounded (the caller holds the limits).

    `label` is how a PDF names itself in its header line.
    """
    path = Path(source) if isinstance(source, str) else source
    if reader == "pdf":
        pages_dir = options.pop("pages_dir", None)
        yield from pdf_parts(path, label, pages_dir=Path(pages_dir) if pages_dir else None, **options)
        return
    if not isinstance(path, Path):
        raise TypeError(f"{reader} reads a file, not bytes")
    if reader in ("docx", "pptx"):
        yield (docx_to_text if reader == "docx" else pptx_to_text)(path)
    elif reader == "excel":
        yield read_spreadsheet(path, **options)
    else:
        raise LookupError(f"no document reader {reader!r}")
