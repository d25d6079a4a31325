"""Bytes to text without mojibake, and HTML to readable markdown (trafilatura, markdownify fallback)."""

from __future__ import annotations

import codecs
import re


def decode_text(data: bytes) -> tuple[str, str]:
    """(text, encoding): BOMs first, then UTF-8, then charset-normalizer's guess, else Windows-1252/Latin-1."""
    for bom, encoding in ((codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF16_LE, "utf-16"),
                          (codecs.BOM_UTF16_BE, "utf-16"), (codecs.BOM_UTF32_LE, "utf-32")):
        if data.startswith(bom):
            return data.decode(encoding, errors="replace"), encoding
    try:
        return data.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        pass
    if len(data) >= 200:  # detection needs some text; on a few bytes it guesses exotic code pages
        try:
            from charset_normalizer import from_bytes

            matches = list(from_bytes(data[:200_000]))
            if matches:
                best = min(matches, key=lambda m: m.chaos)
                # Ties between Western code pages are common; the most widespread one is the best bet.
                western = [m for m in matches if m.encoding in ("cp1252", "latin_1") and m.chaos <= best.chaos + 0.01]
                chosen = (western or [best])[0].encoding
                return data.decode(chosen, errors="replace"), chosen
        except ImportError:
            pass
    try:
        return data.decode("cp1252"), "cp1252"
    except UnicodeDecodeError:
        return data.decode("latin-1"), "latin-1"


def clean_text(text: str) -> str:
    """Strip NULs and stray control characters (keep tab, newline, carriage return, form feed)."""
    return "".join(c for c in text if c >= " " or c in "\t\n\r\f")


def html_to_markdown(html: str, url: str | None = None, main_content_only: bool = True, links: bool = False) -> str:
    """Readable markdown of an HTML page: the main content via trafilatura, else the whole page via markdownify.

    With `links`, links stay as `[text](absolute URL)` and images as `![alt](absolute URL)` (the alt
    text, else the title, else the file name), so the model can follow a link or look at an image.
    """
    text = None
    if main_content_only:
        try:
            import trafilatura

            text = trafilatura.extract(html, url=url, output_format="markdown", include_tables=True,
                                       include_links=links, include_images=links, include_comments=False,
                                       favor_recall=True)
        except Exception:  # noqa: BLE001 - trafilatura fails on odd markup; markdownify still works
            text = None
    if not text or len(text.strip()) < 200:
        fallback = _markdownify(html, keep_images=links)
        if not text or len(fallback.strip()) > len(text.strip()):
            text = fallback
    text = _squeeze_blank_lines(text or "")
    return absolute_links(text, url) if links else text


def html_title(html: str) -> str | None:
    """The page's <title>, if any."""
    try:
        from bs4 import BeautifulSoup

        title = BeautifulSoup(html, "html.parser").title
        return title.get_text(" ", strip=True) if title else None
    except Exception:  # noqa: BLE001
        return None


_MD_LINK = re.compile(r"(!?)\[((?:[^\[\]]|\[[^\]]*\])*)\]\(\s*<?([^)\s>]*)>?(\s+\"[^\"]*\")?\s*\)")


def absolute_links(markdown: str, base_url: str | None) -> str:
    """Markdown whose links and images point at absolute URLs, every image with an alt text (else its file name).

    Inline `data:` images (pixels, nothing to fetch) and `javascript:` links are dropped.
    """
    from urllib.parse import unquote, urljoin, urlsplit

    def fix(match: re.Match[str]) -> str:
        bang, text, target = match.group(1), match.group(2).strip(), match.group(3)
        if target.lower().startswith(("data:", "javascript:")):
            return "" if bang else text
        url = urljoin(base_url, target) if base_url else target
        if bang and not text:
            text = unquote(urlsplit(target).path.rstrip("/").rsplit("/", 1)[-1]) or "image"
        return f"{bang}[{text}]({url})"

    return _MD_LINK.sub(fix, markdown)


def _markdownify(html: str, keep_images: bool = False) -> str:
    from bs4 import BeautifulSoup
    from markdownify import markdownify

    soup = BeautifulSoup(html, "html.parser")
    for tag in soup(["script", "style", "noscript", "template", "svg", "iframe", "head"]):
        tag.decompose()
    return markdownify(str(soup), heading_style="ATX", strip=[] if keep_images else ["img"])


def _squeeze_blank_lines(text: str) -> str:
    lines, blank = [], 0
    for line in text.splitlines():
        line = line.rstrip()
        blank = blank + 1 if not line else 0
        if blank <= 1:
            lines.append(line)
    return "\n".join(lines).strip()
