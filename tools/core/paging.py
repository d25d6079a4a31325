"""Pages and find over any long text: no reader drops the tail, and every cut says which call reads on.

A long text (a web page, a PDF, a spreadsheet, a tool's output) becomes a `Document`: its text cut
into pages of at most a page budget, at line breaks where possible. A reply shows one page with
`page N of M` and the exact call that reads the next one; `find` returns every case-insensitive
match with its context and the page it sits on. The run's `PageCache` (`RunServices.pages`) keeps
every document a run has read, so paging through a web page and finding in it download it once.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from tools.core.errors import ToolFailure
from tools.core.findtext import query_pattern, visible_text

if TYPE_CHECKING:
    from pathlib import Path

    from tools.core.services import RunServices

FIND_CONTEXT = 300
"""Characters of context shown on each side of a match."""
FIND_MAX_MATCHES = 12


def split_pages(text: str, size: int) -> list[tuple[int, int]]:
    """(start, end) offsets of pages of at most `size` characters, cut at a line break (else a space) near the end."""
    if size <= 0:
        raise ValueError("page size must be positive")
    spans, start, n = [], 0, len(text)
    while start < n:
        end = min(n, start + size)
        if end < n:
            window = text[start + size // 2:end]  # never cut before the page is half full
            cut = window.rfind("\n")
            if cut < 0:
                cut = window.rfind(" ")
            if cut >= 0:
                end = start + size // 2 + cut + 1
        spans.append((start, end))
        start = end
    return spans or [(0, 0)]


@dataclass
class Document:
    """A text read in pages: where it came from, how the next page is asked for, and its page spans."""

    source: str
    """What the model named (a URL, a path): find_in_page accepts it back."""
    text: str
    next_call: str
    """The call reading page {page}, e.g. 'fetch_webpage(url="…", page={page})'."""
    max_chars: int
    """The most a whole reply may hold (MAX_FILE_SIZE): head, page text and footer together."""
    head: str = ""
    """Lines shown above every page (URL, title, revision), not counted in the pages."""
    provisional: bool = False
    """The text is still growing (a long PDF being parsed between calls): never kept in the page cache."""
    spans: list[tuple[int, int]] = field(init=False)

    def __post_init__(self) -> None:
        self.head = self.head.rstrip("\n")
        # The footer's longest form (big page numbers) and the head are kept free in every reply.
        overhead = len(self.head) + len(self._footer(99998, 99999, 10**8, 10**8, 10**8)) + 40
        self.spans = split_pages(self.text, max(50, self.max_chars - overhead))

    @property
    def pages(self) -> int:
        """How many pages the text has."""
        return len(self.spans)

    def page_of(self, offset: int) -> int:
        """The page (1-based) holding character `offset`."""
        for number, (start, end) in enumerate(self.spans, start=1):
            if start <= offset < end:
                return number
        return self.pages

    def call_for(self, page: int) -> str:
        """The exact call that reads `page`."""
        return self.next_call.replace("{page}", str(page))

    def _footer(self, number: int, pages: int, start: int, end: int, total: int) -> str:
        if number < pages:
            return (f"…[page {number} of {pages}; characters {start + 1}–{end} of {total}. "
                    f"Next: {self.call_for(number + 1)}; to jump to a word: "
                    f"find_in_page(source=\"{self.source}\", query=\"…\")]")
        return f"[page {number} of {pages}{', the last' if pages > 1 else ''}]"

    def page(self, number: int) -> str:
        """Page `number` as a reply: head, `page N of M`, the text, and how to read on."""
        number = _page_number(number)
        if number > self.pages:
            raise ToolFailure(f"{self.source} has only {self.pages} page{'s' if self.pages != 1 else ''}; ask for "
                              f"page 1 to {self.pages}, e.g. {self.call_for(self.pages)}.", "bad_arguments")
        start, end = self.spans[number - 1]
        parts = [self.head] if self.head else []
        if self.pages > 1:
            parts.append(f"[page {number} of {self.pages}]")
        parts.append(self.text[start:end].strip("\n"))
        parts.append(self._footer(number, self.pages, start, end, len(self.text)))
        return "\n\n".join(parts)


def _page_number(page: object) -> int:
    try:
        number: int = int(page)  # type: ignore[call-overload]
    except (TypeError, ValueError):
        raise ToolFailure(f"page must be a whole number (1 for the first page), not {page!r}.",
                          "bad_arguments") from None
    if number < 1:
        raise ToolFailure(f"page must be 1 or more, not {number}.", "bad_arguments")
    return number


@dataclass(frozen=True)
class Match:
    """One occurrence of the query: where it is and what surrounds it."""

    offset: int
    page: int
    context: str


def find(doc: Document, query: str, context: int = FIND_CONTEXT, limit: int = FIND_MAX_MATCHES) -> str:
    """Every case-insensitive match of `query` in `doc` with context and page number, capped with a count of the rest.

    The visible text is searched (link targets are not; a phrase may span a link). The words are matched
    as a phrase (any whitespace between them, joined parts such as "Grey-headed" joined); when the phrase
    does not occur, places where all the words occur close together are returned instead, then each word.
    """
    pattern, words = query_pattern(query)
    if pattern is None:
        raise ToolFailure("the query is empty. Pass the word or phrase to look for.", "bad_arguments")
    seen = _Seen(doc)  # the text a reader sees: link targets are not searched
    found = seen.matches(pattern, context)
    how = "the phrase"
    if not found and len(words) > 1:
        keys = [w for w in words if len(w) > 2 and re.match(r"\w", w)] or words
        found = seen.near_all(keys, context)
        how = "all the words within a few hundred characters"
        if not found:
            found = seen.matches(re.compile("|".join(re.escape(w) for w in keys), re.IGNORECASE), context)
            how = "any of the words (the phrase and all the words together do not occur)"
    if not found:
        raise ToolFailure(f"{query!r} does not occur in {doc.source} "
                          f"({doc.pages} page{'s' if doc.pages != 1 else ''}). "
                          "Try a shorter or different word, a synonym, or another page or source.", "no_results")
    header = (f"{len(found)} match{'es' if len(found) != 1 else ''} for {query!r} ({how}) in {doc.source} "
              f"({doc.pages} page{'s' if doc.pages != 1 else ''}):")
    closing = f"\nRead a whole page with {doc.call_for(found[0].page)}."
    lines, used = [header], len(header) + len(closing) + 400  # room for the count of the rest
    shown = 0
    pdf_pages = _pdf_page_starts(doc.text)
    for match in found[:limit]:
        entry = (f"\n{shown + 1}. page {match.page} of {doc.pages}{_pdf_label(pdf_pages, match.offset)}:"
                 f"\n…{match.context}…")
        if shown and used + len(entry) > doc.max_chars:
            break  # the reply stays within MAX_FILE_SIZE; the rest are counted below
        lines.append(entry)
        used += len(entry) + 1
        shown += 1
    if len(found) > shown:
        rest = found[shown:]
        pages = sorted({m.page for m in rest})
        lines.append(f"\n…[{len(rest)} more match{'es' if len(rest) != 1 else ''} on page"
                     f"{'s' if len(pages) != 1 else ''} {', '.join(map(str, pages[:30]))}"
                     f"{', …' if len(pages) > 30 else ''}; read one with {doc.call_for(pages[0])}, or search a "
                     "narrower phrase]")
    lines.append(closing)
    return "\n".join(lines)


_PDF_PAGE = re.compile(r"^--- Page (\d+) ---$", re.MULTILINE)


def _pdf_page_starts(text: str) -> list[tuple[int, int]]:
    """(offset, PDF page number) of every '--- Page N ---' header a PDF's text carries."""
    return [(m.start(), int(m.group(1))) for m in _PDF_PAGE.finditer(text)]


def _pdf_label(starts: list[tuple[int, int]], offset: int) -> str:
    """' (PDF p. 37)' for a match on the PDF's page 37; '' for texts that are not PDFs."""
    number = next((page for at, page in reversed(starts) if at <= offset), None)
    return f" (PDF p. {number})" if number is not None else ""



class _Seen:
    """A document's visible text (tools.core.findtext) with matches mapped back to the document's pages."""

    def __init__(self, doc: Document) -> None:
        self.doc = doc
        self.text, self.offsets = visible_text(doc.text)

    def _match(self, start: int, end: int, context: int) -> Match:
        where = self.offsets[start] if start < len(self.offsets) else len(self.doc.text)
        return Match(where, self.doc.page_of(where), " ".join(self.text[max(0, start - context):end + context].split()))

    def matches(self, pattern: re.Pattern[str], context: int) -> list[Match]:
        return [self._match(m.start(), m.end(), context) for m in pattern.finditer(self.text)]

    def near_all(self, words: list[str], context: int) -> list[Match]:
        """Windows around the rarest word where every other word occurs within `context` characters."""
        hits = {w: [m.start() for m in re.finditer(re.escape(w), self.text, re.IGNORECASE)] for w in words}
        if not all(hits.values()):
            return []
        anchor = min(hits, key=lambda w: len(hits[w]))
        return [self._match(at, at + len(anchor), context) for at in hits[anchor]
                if all(any(abs(p - at) <= context for p in hits[w]) for w in words if w != anchor)]


class PageCache:
    """The documents one run has read, by source: each is produced (downloaded, parsed) once per run.

    Concurrent calls for the same source wait for the first one instead of downloading again.
    """

    def __init__(self) -> None:
        self._docs: dict[str, Document] = {}
        self._locks: dict[str, threading.Lock] = {}
        self._lock = threading.Lock()
        self.made = 0
        """How many documents were produced (not served from the cache)."""

    def get(self, key: str) -> Document | None:
        """The cached document for `key`, if any."""
        with self._lock:
            return self._docs.get(key)

    def put(self, key: str, doc: Document) -> None:
        """Remember `doc` under `key` (an alias such as a redirect target or the source the model used)."""
        with self._lock:
            self._docs[key] = doc

    def get_or_make(self, key: str, make: Callable[[], Document]) -> Document:
        """The document for `key`, made by `make` the first time (a failure is not cached)."""
        with self._lock:
            if key in self._docs:
                return self._docs[key]
            lock = self._locks.setdefault(key, threading.Lock())
        with lock:
            with self._lock:
                if key in self._docs:
                    return self._docs[key]
            doc = make()
            with self._lock:
                if not doc.provisional:
                    self._docs[key] = doc
                self.made += 1
            return doc


def _version(path: Path) -> str:
    stat = path.stat()  # a file rewritten during the run (run_python output) is read again
    return f"{stat.st_mtime_ns}:{stat.st_size}"


def file_document(run: RunServices, path: Path, reader: str, produce: Callable[[], str], max_chars: int) -> Document:
    """The document the tool `reader` makes of the file `path` (`produce()` gives its text), made once per run.

    Its next-page hint names `reader(path="…", page=N)`. It is also remembered as the latest reading of
    `path`, which find_in_page searches.
    """
    cache = run.pages
    version = _version(path)

    def make() -> Document:
        return Document(str(path), produce(), f'{reader}(path="{path}", page={{page}})', max_chars)

    doc = cache.get_or_make(f"file:{reader}:{path}:{max_chars}:{version}", make)
    cache.put(f"path:{path}:{version}", doc)
    return doc


def latest_reading(run: RunServices, path: Path) -> Document | None:
    """The document a tool last made of `path` in this run, if the file has not changed since."""
    return run.pages.get(f"path:{path}:{_version(path)}")


def read_paged(run: RunServices, path: Path, reader: str, produce: Callable[[], str], max_chars: int,
               page: int = 1) -> str:
    """Page `page` of the file `path` as the tool `reader` reads it (see `file_document`)."""
    return file_document(run, path, reader, produce, max_chars).page(page)


def page_long_output(text: str, tool_name: str, run: RunServices, max_chars: int) -> tuple[str, int]:
    """A tool output longer than `max_chars`, saved in the run's workspace and shown as its first page.

    Returns (reply, characters not shown). The reply says which read_file call reads the next page, so
    nothing a tool produced is lost to the output cap.
    """
    if len(text) <= max_chars:
        return text, 0
    data = text.encode("utf-8")
    try:
        work = run.workspace
        work.reserve(len(data), f"keeping the long output of {tool_name}")
        target = (work.subdir("output") / f"{tool_name}.txt").resolve()
        target.write_bytes(data)
    except (ToolFailure, OSError) as exc:  # no room to keep it: cut with a marker saying so
        cut = len(text) - max_chars
        return text[:max_chars] + f"\n…[truncated: {cut} of {len(text)} characters cut ({exc}); ask for a narrower " \
                                  "part]", cut
    doc = Document(str(target), text, f'read_file(path="{target}", page={{page}})', max_chars,
                   head=f"(the output of {tool_name} is {len(text)} characters; saved to {target})")
    cache, version = run.pages, _version(target)
    cache.put(f"path:{target}:{version}", doc)
    cache.put(f"file:read_file:{target}:{max_chars}:{version}", doc)
    start, end = doc.spans[0]
    return doc.page(1), len(text) - (end - start)


def remember_named(run: RunServices, name: str, doc: Document) -> None:
    """Make `doc` what find_in_page(source=`name`) searches in this run (e.g. "browser": the current page)."""
    run.pages.put(f"named:{name}", doc)


def named_document(run: RunServices, name: str) -> Document | None:
    """The document remembered under `name` in this run (see `remember_named`), if any."""
    return run.pages.get(f"named:{name.strip().lower()}")
