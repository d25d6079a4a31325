"""fetch_webpage and find_in_page: a web page (or a file) read in pages, and every place a word occurs in it.

Each URL is downloaded once per run: the run's page cache (tools.core.paging) keeps the text, so reading
page 2, finding a word, or the wayback tool reading a snapshot do not download it again. Downloads go
through tools.web.download (size cap, blocked domains, every hop's address checked by tools.web.netguard).
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from pathlib import Path

from langchain_core.tools import BaseTool

from config import Settings
from tools.core.context import ToolContext
from tools.core.context_tool import context_tool
from tools.core.paging import Document, file_document, latest_reading, named_document
from tools.core.paths import human_size, resolve_path
from tools.core.services import RunServices
from tools.core.workspace import Workspace
from tools.documents.pdf_parse import find_in, pdf_document, read_page
from tools.search import blocked_prefixes
from tools.search.base import USER_AGENT
from tools.web.download import Download, check_url, download, page_text
from tools.web.netguard import NetPolicy

_SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*://", re.IGNORECASE)


@dataclass(frozen=True)
class WebReader:
    """Downloads model-chosen URLs under the operator's rules and keeps each run's documents in its cache."""

    blocked: list[str]
    policy: NetPolicy
    timeout_s: float
    max_chars: int
    user_agent: str = USER_AGENT
    max_download_bytes: int = 50 * 2**20
    """MAX_DOWNLOAD_MB: the largest file streamed into the run's workspace."""

    @classmethod
    def from_settings(cls, settings: Settings) -> WebReader:
        """The reader the settings describe.

        Blocked domains, allowed hosts, timeout, page size, file cap, and FETCH_USER_AGENT: web pages get
        a browser's User-Agent, never HTTP_USER_AGENT's contact (that goes only to the APIs asking for one).
        """
        return cls(blocked_prefixes(settings.BLOCKED_DOMAINS), NetPolicy.parse(settings.FETCH_ALLOWED_HOSTS),
                   max(2.0, settings.TOOL_TIMEOUT - 1.0), settings.MAX_FILE_SIZE, settings.FETCH_USER_AGENT,
                   int(settings.MAX_DOWNLOAD_MB * 2**20))

    def get(self, url: str, work: Workspace | None = None) -> Download:
        """The response body of `url` under the reader's rules (blocked domains, addresses, size, User-Agent).

        With `work`, a file that is not an HTML page streams into that workspace (up to MAX_DOWNLOAD_MB).
        """
        return download(url, self.timeout_s, self.blocked, policy=self.policy, user_agent=self.user_agent,
                        workspace=work, max_file_bytes=self.max_download_bytes)

    def document(self, url: str, run: RunServices, head_prefix: str = "") -> Document:
        """The page at `url` as a Document, downloaded the first time this run asks for it.

        `head_prefix` (lines shown above the page's URL and title) applies when this call downloads it.
        """
        target = check_url(url, self.blocked)
        cache, work = run.pages, run.workspace
        started = time.monotonic()
        pdfs = run.downloaded_pdfs

        def make() -> Document:
            if target in pdfs:  # a long PDF still being parsed: downloaded once, read on from the saved file
                path, head = pdfs[target]
            else:
                page = self.get(target, work)
                content = page_text(page, work)
                if content.pdf is None:
                    return Document(target, content.text, f'fetch_webpage(url="{target}", page={{page}})',
                                    self.max_chars, head=head_prefix + content.head)
                path, head = content.pdf, head_prefix + content.head
                pdfs[target] = (path, head)
            return pdf_document(run, path, f"PDF ({human_size(path.stat().st_size)})",
                                f'fetch_webpage(url="{target}", page={{page}})', self.max_chars,
                                started + self.timeout_s - 1.0, source=target, head=head)

        return cache.get_or_make(f"url:{target}", make)

    def file(self, path: Path, run: RunServices) -> Document:
        """The file at `path` as last read in this run (by read_file, parse_pdf, ...), else as read_file reads it."""
        from tools.documents.files import read_path

        found = latest_reading(run, path)
        if found is not None:
            return found
        if path.suffix.lower() == ".pdf":
            return pdf_document(run, path, path.name, f'parse_pdf(path="{path}", page={{page}})', self.max_chars,
                                time.monotonic() + self.timeout_s - 1.0)
        return file_document(run, path, "read_file", lambda: read_path(path, workspace=run.workspace,
                                                                       seconds=self.timeout_s),
                             self.max_chars)


def looks_like_url(source: str) -> bool:
    """True for 'https://…' and for scheme-less addresses such as 'en.wikipedia.org/wiki/X'."""
    text = source.strip()
    if _SCHEME.match(text):
        return True
    first = text.split("/", 1)[0]
    return "/" in text and "." in first and not text.startswith((".", "~")) and not Path(text).exists()


def make_fetch_tools(settings: Settings) -> list[BaseTool]:
    """Build fetch_webpage and find_in_page (one page cache per run)."""
    reader = WebReader.from_settings(settings)

    @context_tool
    def fetch_webpage(_ctx: ToolContext, url: str, page: int = 1) -> str:
        """Fetch a web page (http or https) and return its text as markdown, one page of it at a time.

        Links are kept as [text](URL) so you can follow them (as [text](<URL>) when the URL holds
        parentheses: the URL is what is inside the angle brackets), images as ![alt](URL) so you can
        look at them. PDFs are returned as text with their PDF page numbers ('--- Page N ---') and saved
        locally. Every reply says "page N of M" and gives the call that reads the next page; use
        find_in_page to jump to a word instead of reading every page. Files that are not text (images,
        audio, spreadsheets) are saved locally and the reply says which tool opens them.

        Args:
            url: The full address of the page, e.g. https://en.wikipedia.org/wiki/Mercedes_Sosa.
            page: Which page of the text to read (1 is the first); a reply tells you how many there are.
        """
        return read_page(reader.document(url, _ctx.services), page)

    @context_tool
    def find_in_page(_ctx: ToolContext, source: str, query: str) -> str:
        """Find every place a word or phrase occurs in a web page or file, with the text around it and its page number.

        Use it on a long page instead of reading every page: then read the page it names with
        fetch_webpage(url, page=N) or read_file(path, page=N). Matching ignores case and searches the
        text as read (not the addresses of links); when the exact phrase does not occur, places where
        all its words occur close together are returned.

        Args:
            source: A web address (fetched if it was not read yet), the path of a file (an attachment
                or a file a tool saved), or "browser" for the page open in the browser.
            query: The word or phrase to look for, e.g. "Nobel Prize" or "1987".
        """
        raw = (source or "").strip()
        run = _ctx.services
        doc = named_document(run, raw) or (
            reader.document(raw, run) if looks_like_url(raw) else reader.file(resolve_path(raw, _ctx), run))
        return find_in(doc, query)

    return [fetch_webpage, find_in_page]
