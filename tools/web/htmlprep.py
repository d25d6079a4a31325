"""An HTML page made safe and faithful to convert: bounded in size and nesting, links resolved, math once.

Every HTML→markdown route (tools.documents.textio) converts the page this module prepares, so the things the
converters get wrong are settled once, on the DOM, before any of them runs:

- size and nesting are capped before parsing (a page of 800,000 nested <div>s is flattened, not parsed);
- links and images are resolved against the page's real base (the final URL after redirects, then
  `<base href>`), with entities decoded once by the parser, and replaced by opaque tokens that no
  converter rewrites; `restore_links` puts the real URLs back, in `<…>` form when they hold parentheses;
- a MediaWiki formula (hidden MathML, TeX annotation, image alt) becomes its TeX once, `$…$`;
- lists and paragraphs inside table cells (infobox values) become inline text the converters keep;
- hidden elements, navigation boxes and edit links (boilerplate) are dropped.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import unquote, urljoin, urlsplit

MAX_HTML_CHARS = 4_000_000
"""HTML beyond this is cut before parsing (the download cap is about the same)."""
MAX_DEPTH = 100
"""Deeper nesting than this is flattened before parsing (libxml2 stops at 256; converters recurse)."""

_TAG = re.compile(r"<(/?)([a-zA-Z][a-zA-Z0-9:-]*)\b[^>]*?(/?)>")
_VOID = frozenset("area base br col embed hr img input link meta param source track wbr".split())
_DROP = ("script", "style", "noscript", "template", "svg", "iframe", "object", "canvas")
_BOILERPLATE = ("navbox", "vertical-navbox", "mw-editsection", "mw-jump-link", "catlinks", "navbox-styles",
                "mw-empty-elt", "printfooter", "sistersitebox")
_TOKEN = "http://link{}.invalid/"
_TOKEN_RE = re.compile(r"http://link(\d+)\.invalid/")
_MD_TARGET = re.compile(r"\]\(\s*<?http://link(\d+)\.invalid/>?(?:\s+\"[^\"]*\")?\s*\)")
_DISPLAYSTYLE = re.compile(r"^\{\\displaystyle\s*(.*)\}$", re.DOTALL)


def bound_html(html: str, max_chars: int = MAX_HTML_CHARS, max_depth: int = MAX_DEPTH) -> str:
    """`html`, when nested deeper than `max_depth`, with the over-deep tags removed, then cut to `max_chars`.

    The tags removed are those of the element names found below `max_depth` (their text stays); if the
    page is still too deep, every tag goes and the text is what remains. Linear scans, no parsing.
    """
    html = html[:4 * max_chars]  # markup that flattening removes may take room; the text is cut after it
    too_deep = _deep_names(html, max_depth)
    if not too_deep:
        return html[:max_chars]
    names = "|".join(sorted(re.escape(n) for n in too_deep))
    flatter = re.sub(rf"</?(?:{names})\b[^>]*>", " ", html, flags=re.IGNORECASE)
    if _deep_names(flatter, max_depth):
        flatter = "<html><body><pre>" + re.sub(r"<[^>]*>", " ", flatter) + "</pre></body></html>"
    return re.sub(r"\s{200,}", " ", flatter)[:max_chars]


def _deep_names(html: str, max_depth: int) -> set[str]:
    depth, names = 0, set()
    for match in _TAG.finditer(html):
        closing, name, self_closing = match.group(1), match.group(2).lower(), match.group(3)
        if name in _VOID or self_closing:
            continue
        if closing:
            depth = max(0, depth - 1)
            continue
        depth += 1
        if depth > max_depth:
            names.add(name)
    return names


@dataclass
class Prepared:
    """The prepared page: its HTML (links as tokens) and the real URL behind each token."""

    html: str
    base: str | None
    urls: list[str] = field(default_factory=list)
    rewrite: Callable[[str], str] | None = None

    def restore_links(self, markdown: str) -> str:
        """Markdown with every token back to its URL: `[t](url)`, or `[t](<url>)` when the URL holds ( ) or spaces."""

        def target(match: re.Match[str]) -> str:
            url = self.url(int(match.group(1)))
            return f"](<{url}>)" if re.search(r"[()\s<>]", url) else f"]({url})"

        markdown = _MD_TARGET.sub(target, markdown)
        return _TOKEN_RE.sub(lambda m: self.url(int(m.group(1))), markdown)

    def url(self, index: int) -> str:
        """The URL behind token `index` (rewritten by `rewrite`, e.g. into an archive's capture URL)."""
        url = self.urls[index] if 0 <= index < len(self.urls) else ""
        return self.rewrite(url) if self.rewrite and url.lower().startswith(("http://", "https://")) else url


def prepare(html: str, url: str | None, rewrite: Callable[[str], str] | None = None) -> Prepared:
    """Parse the bounded page and settle links, math, table cells and boilerplate on its DOM (see the module)."""
    import lxml.html
    from lxml import etree

    bounded = bound_html(html)
    try:
        root = lxml.html.document_fromstring(bounded or "<html></html>")
    except (etree.ParserError, ValueError):
        return Prepared("", url, rewrite=rewrite)
    base = _base_url(root, url)
    _drop_noise(root)
    _math_as_tex(root)
    _unwrap_layout_tables(root)
    _flatten_cells(root)
    prepared = Prepared("", base, rewrite=rewrite)
    _tokenise_links(root, prepared)
    prepared.html = lxml.html.tostring(root, encoding="unicode")
    return prepared


def _base_url(root: object, url: str | None) -> str | None:
    """The final URL of the response, then the first `<base href>` joined to it (HTML's rule)."""
    for node in root.iter("base"):  # type: ignore[attr-defined]
        href = (node.get("href") or "").strip()
        if href:
            return urljoin(url or "", href) if url else href
    return url


def _drop_noise(root: object) -> None:
    """Scripts, styles, hidden elements (display:none), navigation boxes and edit links."""
    doomed = []
    for node in root.iter():  # type: ignore[attr-defined]
        tag = node.tag if isinstance(node.tag, str) else ""
        classes = set((node.get("class") or "").split())
        style = (node.get("style") or "").replace(" ", "").lower()
        if (tag in _DROP or "display:none" in style or node.get("hidden") is not None
                or classes.intersection(_BOILERPLATE) or node.get("role") == "navigation" or tag in ("nav", "footer")):
            doomed.append(node)
    for node in doomed:
        if node.getparent() is not None:
            _remove_keep_tail(node)


def _remove_keep_tail(node: object) -> None:
    parent = node.getparent()  # type: ignore[attr-defined]
    tail = node.tail  # type: ignore[attr-defined]
    if tail:
        previous = node.getprevious()  # type: ignore[attr-defined]
        if previous is not None:
            previous.tail = (previous.tail or "") + tail
        else:
            parent.text = (parent.text or "") + tail
    parent.remove(node)


def _math_as_tex(root: object) -> None:
    """A MediaWiki formula (MathML + TeX annotation + fallback image) or a bare <math> as `$TeX$`, once."""
    formulas = [n for n in root.iter() if isinstance(n.tag, str) and (  # type: ignore[attr-defined]
        "mwe-math-element" in (n.get("class") or "").split() or n.tag == "math")]
    for node in formulas:
        if node.getparent() is None or _inside(node, formulas):
            continue
        tex = ""
        for annotation in node.iter("annotation"):
            if "tex" in (annotation.get("encoding") or ""):
                tex = annotation.text_content()
        if not tex:
            tex = node.get("alttext") or next((i.get("alt") or "" for i in node.iter("img")), "")
        tex = " ".join(tex.split())
        match = _DISPLAYSTYLE.match(tex)
        text = f"${(match.group(1) if match else tex).strip()}$" if tex else node.text_content()
        _replace_with_text(node, text)


def _inside(node: object, candidates: list[object]) -> bool:
    parent = node.getparent()  # type: ignore[attr-defined]
    while parent is not None:
        if parent in candidates:
            return True
        parent = parent.getparent()
    return False


def _replace_with_text(node: object, text: str) -> None:
    node.tail = text + (node.tail or "")  # type: ignore[attr-defined]
    _remove_keep_tail(node)


def _unwrap_layout_tables(root: object) -> None:
    """Tables used for page layout (no header cell; a nested table or a long cell) become plain blocks."""
    for table in list(root.iter("table")):  # type: ignore[attr-defined]
        own_cells = [c for c in table.iter("td", "th") if _owner_table(c) is table]
        if any(c.tag == "th" for c in own_cells):
            continue
        nested = any(t is not table for t in table.iter("table"))
        if not nested and not any(len(c.text_content()) > 300 for c in own_cells):
            continue
        for cell in own_cells:
            cell.tag = "div"
        for part in [p for p in table.iter("tr", "tbody", "thead", "tfoot") if _owner_table(p) is table]:
            part.drop_tag()
        table.tag = "div"


def _owner_table(node: object) -> object:
    parent = node.getparent()  # type: ignore[attr-defined]
    while parent is not None and parent.tag != "table":
        parent = parent.getparent()
    return parent


def _flatten_cells(root: object) -> None:
    """Lists, line breaks and blocks inside leaf <td>/<th> as inline text separated by '; ' (infobox values)."""
    for cell in [c for c in root.iter("td", "th")  # type: ignore[attr-defined]
                 if not any(True for _ in c.iter("table"))]:
        for item in list(cell.iter("li")):
            if item.getnext() is not None:
                item.tail = "; " + (item.tail or "")
        for br in list(cell.iter("br")):
            _replace_with_text(br, "; ")
        for block in list(cell.iter("ul", "ol", "li", "p", "div", "dl", "dd", "dt")):
            block.tail = " " + (block.tail or "")
            block.drop_tag()
        for node in cell.iter():  # one line per cell: the layout's newlines and indentation go
            node.text = _one_line(node.text)
            if node is not cell:
                node.tail = _one_line(node.tail)


def _one_line(text: str | None) -> str | None:
    return re.sub(r"\s*\n\s*|\s{2,}", " ", text) if text else text


def _tokenise_links(root: object, prepared: Prepared) -> None:
    """Each href/src resolved against the base and swapped for a token; script links and inline images dropped."""
    base = prepared.base
    for node in list(root.iter("a", "img")):  # type: ignore[attr-defined]
        attribute = "href" if node.tag == "a" else "src"
        raw = (node.get(attribute) or "").strip()
        if node.tag == "img" and not raw:
            raw = (node.get("data-src") or "").strip()
        if not raw:
            continue
        if raw.lower().startswith(("javascript:", "data:", "vbscript:")):
            if node.tag == "a":
                node.drop_tag()
            else:
                _remove_keep_tail(node)
            continue
        resolved = urljoin(base, raw) if base else raw
        if node.tag == "img" and not (node.get("alt") or "").strip():
            name = unquote(urlsplit(resolved).path.rstrip("/").rsplit("/", 1)[-1])
            node.set("alt", (node.get("title") or "").strip() or name or "image")
        node.set(attribute, _TOKEN.format(len(prepared.urls)))
        prepared.urls.append(resolved)
