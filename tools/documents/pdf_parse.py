"""A long PDF parsed across calls: no single call runs past TOOL_TIMEOUT, and nothing parsed is lost.

Parsing a PDF of hundreds of pages can take longer than one tool call may. The first call starts
the parse in a background thread (one per file and run) and waits for it until its own deadline; if
it is not finished, the reply is the pages parsed so far, marked as such, with the call that reads on.
Later calls (the next page, find_in_page) wait on the same parse instead of starting again; once it
has finished, its text is an ordinary cached Document.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

from tools.core.errors import ToolFailure
from tools.core.paging import Document, find
from tools.core.services import RunServices
from tools.documents.isolated import parse_document
from tools.documents.pdf_reader import pages_folder


class PdfParse:
    """One PDF being parsed in a daemon thread: the parts so far, and whether (and how) it ended."""

    def __init__(self, path: Path, label: str) -> None:
        self.path, self.label = path, label
        self.parts: list[str] = []
        self.error: ToolFailure | None = None
        self.done = threading.Event()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, daemon=True, name=f"pdf-{path.name[:20]}")

    def start(self) -> PdfParse:
        """Begin parsing (the file is read into memory first, so the run may delete it meanwhile)."""
        self._thread.start()
        return self

    def _run(self) -> None:
        def keep(part: str) -> None:
            with self._lock:
                self.parts.append(part)

        try:  # in the budgeted worker; its pages stream back as they are parsed
            parse_document("pdf", self.path.read_bytes(), self.label, keep,
                           pages_dir=pages_folder())
        except ToolFailure as exc:
            self.error = exc
        except Exception as exc:  # noqa: BLE001 - a damaged file must end the parse, not hang its readers
            self.error = ToolFailure(f"{self.label} could not be parsed ({type(exc).__name__}: {str(exc)[:120]}). "
                                     "Try read_file on it, or find another copy.", "corrupt_file")
        finally:
            self.done.set()

    def wait(self, deadline: float) -> bool:
        """Wait for the parse until the monotonic `deadline`; True when it has finished."""
        return self.done.wait(max(0.0, deadline - time.monotonic()))

    def text(self) -> tuple[str, int]:
        """The text parsed so far and how many PDF pages it holds."""
        with self._lock:
            parts = list(self.parts)
        return "\n".join(parts), sum(1 for p in parts if p.startswith("--- Page "))


def pdf_parse(run: RunServices, path: Path, label: str) -> PdfParse:
    """The run's parse of `path` (as it is now on disk), started on first use."""
    stat = path.stat()
    key = f"{path.resolve()}:{stat.st_mtime_ns}:{stat.st_size}"
    parses = run.pdf_parses
    with _lock:
        if key not in parses:
            parses[key] = PdfParse(path, label).start()
        return parses[key]


_lock = threading.Lock()


def pdf_document(run: RunServices, path: Path, label: str, next_call: str, max_chars: int, deadline: float,
                   source: str | None = None, head: str = "") -> Document:
    """The PDF at `path` as a Document: the whole text when parsed by `deadline`, else the pages so far (provisional).

    `next_call` reads page {page} (parse_pdf's or fetch_webpage's); `source` is what find_in_page takes back.
    """
    parse = pdf_parse(run, path, label)
    name = source or str(path)
    if parse.wait(deadline):
        if parse.error is not None:
            raise parse.error
        cache, stat = run.pages, path.stat()
        key = f"pdf:{next_call}:{path}:{max_chars}:{stat.st_mtime_ns}:{stat.st_size}"
        doc = cache.get_or_make(key, lambda: Document(name, parse.text()[0], next_call, max_chars, head=head))
        cache.put(f"path:{path}:{stat.st_mtime_ns}:{stat.st_size}", doc)  # find_in_page(path) reads this one
        return doc
    text, pages = parse.text()
    call = next_call.replace("{page}", "N")
    note = (f"(a long PDF still being parsed: PDF pages 1–{pages} so far; parsing goes on between calls, so no call "
            f"runs past TOOL_TIMEOUT. Call {call} or find_in_page again to read on)")
    return Document(name, text, next_call, max_chars, head=f"{head}\n{note}".strip(), provisional=True)


def find_in(doc: Document, query: str) -> str:
    """`find` over `doc`; in a PDF still being parsed, a miss says the rest is not parsed yet."""
    try:
        found = find(doc, query)
    except ToolFailure as exc:
        if not doc.provisional or exc.kind != "no_results":
            raise
        raise ToolFailure(f"{query!r} does not occur in the pages of {doc.source} parsed so far; the rest of this long "
                          "PDF is still being parsed. Call find_in_page again in a moment.", "no_results") from None
    return found + ("\n(the PDF is still being parsed: later pages are not searched yet; call again to search them)"
                    if doc.provisional else "")


def read_page(doc: Document, page: int) -> str:
    """Page `page` of `doc`; for a PDF still being parsed, a page not parsed yet says to ask again."""
    if doc.provisional and isinstance(page, int) and page > doc.pages:
        return (f"{doc.source}: reply page {page} is not parsed yet ({doc.pages} reply pages so far; this long PDF is "
                f"still being parsed). Call {doc.call_for(page)} again in a moment, or read {doc.call_for(doc.pages)}.")
    return doc.page(page)
