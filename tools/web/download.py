"""fetch_webpage: one http(s) URL as readable text.

HTML becomes markdown of the main content (trafilatura, markdownify fallback); PDFs go through the
parse_pdf parser; other text types are decoded; binaries (images, audio, spreadsheets, archives)
are saved to the workspace with a pointer to the tool that reads them. Downloads are size-capped
blocked domains (GAIA answer mirrors) are refused, and every hop is checked by tools.web.netguard
(public addresses only) before it is requested.

Files (everything but HTML pages) stream into the run's workspace up to MAX_DOWNLOAD_MB: a
`Content-Length` past it is refused before reading, a stream that passes it is cut, and the reply
says the size and the limit. A saved file is named from the URL, else from `Content-Disposition`
(export URLs); text, CSV, TSV, JSON and XML files are shown AND saved, so run_python can open them.
"""

from __future__ import annotations

import functools
import mimetypes
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlsplit

import httpx

from tools.core.errors import ToolFailure
from tools.core.paths import human_size
from tools.core.workspace import Workspace, process_workspace
from tools.documents.filetypes import TOOL_ADVICE, classify
from tools.documents.textio import clean_text, decode_text, html_title, html_to_markdown
from tools.search.base import USER_AGENT, blocked_by
from tools.web.decoders import decoded_chunks
from tools.web.netguard import NetPolicy, guarded_get

MAX_DOWNLOAD_BYTES = 5 * 1024 * 1024
_TEXT_TYPES = ("text/", "application/json", "application/ld+json", "application/xml", "application/javascript",
               "application/x-javascript", "application/rss+xml", "application/atom+xml")
_READER_FOR = {"excel": "parse_excel", "docx": "read_file", "pptx": "read_file", "zip": "read_file",
               "text": "read_file"}


@dataclass
class Download:
    """The (possibly cut) body of a response and what the server said about it."""

    url: str
    content_type: str
    body: bytes
    truncated: bool
    charset: str | None = None
    file: Path | None = None
    """Where the body was streamed in the run's workspace (files, not HTML pages)."""
    disposition: str = ""
    """The file name the server gave in Content-Disposition, if any."""
    limit: int = 0
    """The byte limit the download ran under."""


def check_url(url: str, blocked: list[str]) -> str:
    """The URL to request (https:// added when no scheme is given); ToolFailure for non-http(s) or blocked URLs.

    Addresses are checked later, per hop, by `tools.web.netguard` (a name can resolve anywhere).
    """
    url = (url or "").strip()
    if not url:
        raise ToolFailure("no URL given. Pass a full http(s) URL, e.g. https://en.wikipedia.org/wiki/Python.",
                          "bad_arguments")
    if url.startswith(("/", "./", "~")):
        raise ToolFailure(f"{url} looks like a local file path, not a web address. Use read_file on it.",
                          "bad_arguments")
    scheme = urlsplit(url).scheme.lower()
    if not scheme or (scheme not in ("http", "https") and "://" not in url and "." in url.split(":", 1)[0]):
        url, scheme = "https://" + url, "https"
    if scheme not in ("http", "https"):
        raise ToolFailure(f"only http:// and https:// URLs can be fetched, not {scheme}:. For a local file use "
                          "read_file with its path.", "bad_arguments")
    if not urlsplit(url).hostname:
        raise ToolFailure(f"{url} has no host name. Pass a full URL such as https://example.org/page.", "bad_arguments")
    prefix = blocked_by(url, blocked)
    if prefix:
        raise ToolFailure(f"{url} is on a blocked domain ({prefix}): it mirrors benchmark answers and may not be used. "
                          "Find the information in an original source.", "blocked")
    return url


def download(url: str, timeout_s: float, blocked: list[str], max_bytes: int = MAX_DOWNLOAD_BYTES,
             policy: NetPolicy | None = None, user_agent: str = USER_AGENT, workspace: Workspace | None = None,
             max_file_bytes: int | None = None) -> Download:
    """GET `url` (each redirect hop checked first) reading at most `max_bytes`; failures become ToolFailure.

    With a `workspace`, a response that is not an HTML page streams into it instead, up to `max_file_bytes`.
    """
    deadline = time.monotonic() + timeout_s
    headers = {"User-Agent": user_agent, "Accept": "text/html,application/xhtml+xml,application/pdf,*/*;q=0.8",
               "Accept-Language": "en-US,en;q=0.9"}
    try:
        with guarded_get(url, policy or NetPolicy(), timeout=timeout_s, headers=headers,
                         check=functools.partial(_check_hop, blocked=blocked)) as (response, final):
            if response.status_code >= 400:
                raise ToolFailure(_status_message(response.status_code, response.reason_phrase, final,
                                                  response.headers.get("memento-datetime")), "http_error")
            content_type = response.headers.get("content-type", "").split(";")[0].strip().lower()
            if workspace is not None and "html" not in content_type:
                return _stream_to_file(response, final, content_type, workspace,
                                       max_file_bytes or max_bytes, deadline, timeout_s)
            chunks, size, truncated = [], 0, False
            for chunk in decoded_chunks(response, final):  # decoded in bounded pieces: a bomb stops at the cap
                chunks.append(chunk)
                size += len(chunk)
                if size >= max_bytes:
                    truncated = True
                    break
                if time.monotonic() > deadline:
                    raise ToolFailure(f"{url} was still downloading after {timeout_s:.0f}s "
                                      f"({human_size(size)} so far). Try a lighter page or another source.", "timeout")
            return Download(final, content_type, b"".join(chunks)[:max_bytes], truncated, response.charset_encoding,
                            limit=max_bytes)
    except httpx.TimeoutException:
        raise ToolFailure(f"{url} did not answer within {timeout_s:.0f}s. Try again later or use another source.",
                          "timeout") from None
    except httpx.HTTPError as exc:
        raise ToolFailure(f"could not connect to {url} ({type(exc).__name__}: {str(exc)[:120]}). Check the address, "
                          "or use web_search to find another source.", "network_error") from None


def _stream_to_file(response: httpx.Response, url: str, content_type: str, workspace: Workspace, limit: int,
                    deadline: float, timeout_s: float) -> Download:
    """The body written chunk by chunk into the workspace (its disk budget reserved as it grows), cut at `limit`."""
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise ToolFailure(f"{url} is {human_size(int(declared))} (its Content-Length), over the download limit of "
                          f"{human_size(limit)} (MAX_DOWNLOAD_MB); it was not downloaded. Look for a smaller version, "
                          "a summary page, or another source.", "size_limit")
    disposition = disposition_name(response.headers.get("content-disposition", ""))
    probe = Download(url, content_type, b"", False, disposition=disposition)
    target = workspace.subdir("download") / _file_name(probe)
    size, truncated = 0, False
    with target.open("wb") as out:
        for chunk in decoded_chunks(response, url):
            if size + len(chunk) > limit:
                chunk, truncated = chunk[:limit - size], True
            workspace.reserve(len(chunk), f"downloading {target.name}")
            out.write(chunk)
            size += len(chunk)
            if truncated:
                break
            if time.monotonic() > deadline:
                raise ToolFailure(f"{url} was still downloading after {timeout_s:.0f}s ({human_size(size)} so far). "
                                  "Try a smaller file or another source.", "timeout")
    return Download(url, content_type, target.read_bytes(), truncated, response.charset_encoding, file=target,
                    disposition=disposition, limit=limit)


_DISPOSITION_STAR = re.compile(r"filename\*\s*=\s*([\w-]+)'[^']*'([^;]+)", re.IGNORECASE)
_DISPOSITION = re.compile(r'filename\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;]+))', re.IGNORECASE)


def disposition_name(header: str) -> str:
    """The file name in a Content-Disposition header (RFC 6266: filename* preferred), reduced to a safe base name."""
    name = ""
    star = _DISPOSITION_STAR.search(header or "")
    if star:
        try:
            name = unquote(star.group(2).strip(), encoding=star.group(1), errors="replace")
        except LookupError:  # an unknown charset name
            name = unquote(star.group(2).strip())
    else:
        plain = _DISPOSITION.search(header or "")
        if plain:
            name = plain.group(1) if plain.group(1) is not None else plain.group(2)
    name = Path(name.strip().strip('"').replace("\\", "/")).name  # never a path: only the last part
    safe = "".join(c if c.isalnum() or c in "-_. ()" else "_" for c in name).strip(". ")
    return safe[:100]


def _check_hop(url: str, blocked: list[str]) -> None:
    """A redirect hop must not land on a blocked domain either."""
    check_url(url, blocked)


def _status_message(status: int, reason: str, url: str, archived: str | None = None) -> str:
    if archived:  # a web archive replaying the status it captured (Memento-Datetime): the live site is not involved
        return (f"HTTP {status} {reason} for {url}: this capture is an archived error page (the site answered "
                f"{status} when it was archived, {archived}); the live site was not asked. Try another date, "
                "or the address in another form.")
    advice = {404: "the page does not exist: check the URL or search for the page's current address",
              403: "the site refuses automated access: try another source for the same information",
              401: "the page needs a login: try another source",
              429: "the site is rate limiting: wait or use another source",
              410: "the page was removed: search for an archived copy or another source"}
    hint = advice.get(status, "the server failed: try again later or use another source" if status >= 500
                       else "try another URL or source")
    return f"HTTP {status} {reason} for {url}: {hint}."


@dataclass(frozen=True)
class PageText:
    """A download as the model reads it: head lines (URL, title, where a file was saved) and the whole text."""

    head: str
    text: str
    pdf: Path | None = None
    """A PDF saved in the workspace: its text is parsed from there (tools.documents.pdf_parse), `text` is empty."""


def render(page: Download, workspace: Workspace | None = None) -> str:
    """The downloaded body as one text (head, then the whole text); see `page_text`."""
    from tools.documents.pdf import pdf_to_text

    content = page_text(page, workspace)
    return content.head + "\n\n" + (pdf_to_text(content.pdf) if content.pdf is not None else content.text)


def page_text(page: Download, workspace: Workspace | None = None, base_url: str | None = None,
              rewrite: Callable[[str], str] | None = None) -> PageText:
    """The downloaded body as text for the model (HTML with links and images, PDF, text) or a pointer to a saved file.

    Nothing is cut here: fetch_webpage pages the text. A PDF is saved into the run's workspace (its
    text is parsed from there, `PageText.pdf`) so parse_pdf and find_in_page can open it by path; so is a
    text, CSV, TSV, JSON or XML file, so run_python can open it. HTML links resolve against `base_url`
    (default: the final URL of the response) and then go through `rewrite` (an archive wraps them in capture URLs).
    """
    work = workspace or process_workspace()
    body = page.body
    if not body:
        raise ToolFailure(f"{page.url} returned an empty body (content type {page.content_type or 'unknown'}). "
                          "Try another source for the same information.", "empty_page")
    note = (f"\n…[download stopped at {human_size(len(body))}; the rest of the page was not read]"
            if page.truncated else "")
    if page.truncated and page.file is not None:
        note = (f"\n…[download cut at {human_size(len(body))}, the download limit (MAX_DOWNLOAD_MB); the rest of the "
                "file was not read]")
    path_part = urlsplit(page.url).path.lower()
    if (page.content_type == "application/pdf" or body[:5] == b"%PDF-"
            or (path_part.endswith(".pdf") and not _is_texty(page))):
        if page.truncated:
            if page.file is not None:
                page.file.unlink(missing_ok=True)
            raise ToolFailure(f"the PDF at {page.url} is larger than {human_size(len(body))}, the download limit "
                              f"({human_size(page.limit or len(body))}, MAX_DOWNLOAD_MB); a cut PDF cannot be read. "
                              "Look for a smaller version or an HTML page with the same content.", "size_limit")
        saved = _save(page, work, ".pdf")
        return PageText(f"URL: {page.url}\nSaved to {saved} ({human_size(len(body))}; parse_pdf and find_in_page open "
                        "it by this path too)", "", pdf=saved)
    if "html" in page.content_type or (not page.content_type and b"<html" in body[:2000].lower()):
        html = _decode(page)
        title = html_title(html)
        text = html_to_markdown(html, url=base_url or page.url, links=True, rewrite=rewrite)
        head = f"URL: {page.url}" + (f"\nTitle: {title}" if title else "")
        return PageText(head, (text or "(no readable text found on the page; it may need JavaScript)") + note)
    if _is_texty(page):
        return PageText(_saved_head(page, work), clean_text(_decode(page)) + note)
    return _save_binary(page, work)


def _decode(page: Download) -> str:
    """The body as text: the charset the server declared, else detection."""
    if page.charset:
        try:
            return page.body.decode(page.charset, errors="replace")
        except LookupError:  # an unknown charset name
            pass
    return decode_text(page.body)[0]


def _is_texty(page: Download) -> bool:
    return page.content_type.startswith(_TEXT_TYPES) or page.content_type.endswith(("+json", "+xml"))


_DATA_SUFFIX = {"text/csv": ".csv", "text/tab-separated-values": ".tsv", "application/json": ".json",
                "text/plain": ".txt", "application/xml": ".xml", "text/xml": ".xml"}


def _saved_head(page: Download, workspace: Workspace) -> str:
    """The head of a text download, saved (as streamed, or written now) so run_python and read_file can open it."""
    saved = _save(page, workspace, _DATA_SUFFIX.get(page.content_type))
    return (f"URL: {page.url}\nContent-Type: {page.content_type or 'unknown'}\nSaved to {saved} "
            f"({human_size(len(page.body))}): open it with run_python (e.g. pandas.read_csv) or read_file")


def _file_name(page: Download, default_suffix: str | None = None) -> str:
    name = Path(unquote(urlsplit(page.url).path)).name
    if page.disposition and (not name or not Path(name).suffix):
        name = page.disposition  # an export URL (…/export?format=csv) names its file in Content-Disposition
    name = "".join(c if c.isalnum() or c in "-_. ()" else "_" for c in name).strip(". ") or "download"
    if not Path(name).suffix:
        name += default_suffix or mimetypes.guess_extension(page.content_type or "") or ".bin"
    if len(name) > 100:
        name = name[:90] + Path(name).suffix[:10]
    return name


def _save(page: Download, workspace: Workspace, suffix: str | None = None) -> Path:
    """Write the body into the run's workspace (counted against its disk budget); a streamed file is renamed."""
    name = _file_name(page, suffix)
    if page.file is not None and page.file.is_file():
        if page.file.name != name:
            page.file = page.file.rename(page.file.with_name(name))
        return page.file
    workspace.reserve(len(page.body), f"saving {name}")
    target = workspace.subdir("download") / name
    target.write_bytes(page.body)
    return target


def _save_binary(page: Download, workspace: Workspace) -> PageText:
    """Save a non-text download so another tool can open it; say which."""
    name = _file_name(page)
    if page.truncated:
        _, description = classify(Path(name), page.body[:4096])
        if page.file is not None:
            page.file.unlink(missing_ok=True)
        raise ToolFailure(f"{page.url} is a {description} ({page.content_type or 'unknown type'}) larger than "
                          f"{human_size(len(page.body))}, the download limit "
                          f"({human_size(page.limit or len(page.body))}"
                          ", MAX_DOWNLOAD_MB); it was not saved. Look for a smaller version or another source.",
                          "size_limit")
    if classify(Path(name), page.body[:4096])[0] in ("text", "csv", "json"):  # text sent as a generic type
        return PageText(_saved_head(page, workspace), clean_text(_decode(page)))
    target = _save(page, workspace)
    kind, description = classify(target, page.body[:4096])
    proper = {"docx": ".docx", "pptx": ".pptx", "excel": ".xlsx"}.get(kind)
    if proper and target.suffix.lower() not in (proper, ".xlsm", ".xls"):
        target = target.rename(target.with_suffix(proper))  # so the next tool sees what it is
        description = description.split(" (although")[0]
    tool = TOOL_ADVICE.get(kind) or f"call {_READER_FOR.get(kind, 'read_file')}(path) on it"
    return PageText(f"URL: {page.url}", f"Not a web page: {description} ({page.content_type or 'unknown type'}, "
                    f"{human_size(len(page.body))}), saved to {target}: {tool}.")
