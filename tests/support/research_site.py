"""Loopback doubles for the research tools: long articles, a MediaWiki Action API, Wayback availability, arXiv Atom.

Each double is a route (a function of the Request) for `LocalWebServer`, answering the way the real
service does for the parameters the tools send — and checking them, so a tool that asks wrongly gets
a wrong answer, as it would from the real service.

    wiki = MediaWikiDouble({"Sosa": [WikiRevision(1, "2020-01-01T00:00:00Z", "Ann", "<p>…</p>")]})
    with LocalWebServer({"/w/api.php": wiki}) as server: ...
"""

from __future__ import annotations

import html as html_lib
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from tests.support.web_server import Reply, Request

FILLER = ("The committee met again in the spring and reviewed the archive of letters, maps and minutes that the "
          "society had kept since its founding; nothing in this paragraph answers any question. ")


def long_article(title: str, paragraphs: int, facts: dict[int, str] | None = None, extra_html: str = "") -> str:
    """An HTML article of `paragraphs` filler paragraphs (~1 KB each), with `facts` {index: sentence} among them."""
    facts = facts or {}
    body = []
    for index in range(paragraphs):
        text = facts.get(index) or f"Paragraph {index}. " + FILLER * 5
        body.append(f"<p>{html_lib.escape(text)}</p>")
    return (f"<!doctype html><html><head><title>{html_lib.escape(title)}</title></head><body>"
            f"<nav><a href='/'>Home</a></nav><article><h1>{html_lib.escape(title)}</h1>"
            + "\n".join(body) + extra_html + "</article></body></html>")


def multipage_pdf(pages: list[str]) -> bytes:
    """A PDF with one page per text (fpdf2), each long enough to look like a real page."""
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_font("Helvetica", size=10)
    for text in pages:
        pdf.add_page()
        pdf.multi_cell(0, 5, text)
    return bytes(pdf.output())


@dataclass(frozen=True)
class WikiRevision:
    """One revision of an article in the MediaWiki double."""

    revid: int
    timestamp: str
    user: str
    html: str
    comment: str = ""
    hidden: frozenset[str] = frozenset()
    """Fields an admin suppressed ({"user", "comment"}): the API answers `userhidden: true` and leaves the field out."""

    @property
    def size(self) -> int:
        return len(self.html.encode())


def _ts(text: str) -> datetime:
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ")


@dataclass
class MediaWikiDouble:
    """The MediaWiki Action API for the articles given (revisions in any order), formatversion=2 JSON.

    `action=query&prop=revisions` (titles, redirects, rvstart/rvend/rvdir/rvlimit/rvcontinue, rvprop,
    rvslots) and `action=parse&oldid=N`.
    """

    articles: dict[str, list[WikiRevision]]
    redirects: dict[str, str] = field(default_factory=dict)
    page_size: int = 500
    """Revisions per answer before `continue` (the API's limit for rvlimit=max)."""
    calls: list[dict[str, str]] = field(default_factory=list)
    interwiki: dict[str, str] = field(default_factory=dict)
    """Interwiki prefixes ('fr', 'wikt') -> URL pattern with $1: such titles answer `query.interwiki`, no pages."""

    def __call__(self, request: Request) -> Reply:
        params = {k: v[0] for k, v in request.query.items()}
        self.calls.append(params)
        if params.get("format") != "json" or params.get("formatversion") != "2":
            return Reply.json({"error": {"code": "badformat", "info": "format=json&formatversion=2 expected"}})
        if params.get("action") == "parse":
            return self._parse(params)
        if params.get("action") == "query" and params.get("prop") == "revisions":
            return self._revisions(params)
        return Reply.json({"error": {"code": "badparams", "info": f"unsupported request {params}"}})

    def _parse(self, params: dict[str, str]) -> Reply:
        revid = int(params.get("oldid") or 0)
        for title, revisions in self.articles.items():
            for rev in revisions:
                if rev.revid == revid:
                    return Reply.json({"parse": {"title": title, "pageid": 1, "revid": revid, "text": rev.html}})
        return Reply.json({"error": {"code": "nosuchrevid", "info": f"There is no revision with ID {revid}."}})

    def _revisions(self, params: dict[str, str]) -> Reply:
        asked = params.get("titles", "")
        prefix, _, rest = asked.partition(":")
        if rest and prefix.lower() in self.interwiki:  # the API's answer for titles=fr:Paris (iwurl=1 adds url)
            link = {"title": asked, "iw": prefix.lower()}
            if params.get("iwurl"):
                link["url"] = self.interwiki[prefix.lower()].replace("$1", rest.replace(" ", "_"))
            return Reply.json({"batchcomplete": True, "query": {"interwiki": [link]}})
        query: dict[str, Any] = {}
        title = asked[:1].upper() + asked[1:].replace("_", " ")
        if title != asked:
            query["normalized"] = [{"fromencoded": False, "from": asked, "to": title}]
        if params.get("redirects") and title in self.redirects:
            query["redirects"] = [{"from": title, "to": self.redirects[title]}]
            title = self.redirects[title]
        if title not in self.articles:
            query["pages"] = [{"ns": 0, "title": title, "missing": True}]
            return Reply.json({"batchcomplete": True, "query": query})
        older = params.get("rvdir", "older") == "older"
        revisions = sorted(self.articles[title], key=lambda r: r.timestamp, reverse=older)
        start, end = params.get("rvstart"), params.get("rvend")
        if start:
            revisions = [r for r in revisions
                         if (_ts(r.timestamp) <= _ts(start) if older else _ts(r.timestamp) >= _ts(start))]
        if end:
            revisions = [r for r in revisions
                         if (_ts(r.timestamp) >= _ts(end) if older else _ts(r.timestamp) <= _ts(end))]
        offset = self._resume_at(revisions, params.get("rvcontinue"))
        limit = (self.page_size if params.get("rvlimit", "1") == "max"
                 else min(int(params.get("rvlimit", "1")), self.page_size))
        chunk = revisions[offset:offset + limit]
        props = set(params.get("rvprop", "ids|timestamp").split("|"))
        page = {"pageid": 1, "ns": 0, "title": title, "revisions": [self._rev(r, props, params) for r in chunk]}
        answer: dict[str, Any] = {"query": {**query, "pages": [page]}}
        if offset + limit < len(revisions):
            following = revisions[offset + limit]  # the real API resumes at 'timestamp|revid' of the next revision
            stamp = following.timestamp.replace("-", "").replace(":", "").replace("T", "").rstrip("Z")
            answer["continue"] = {"rvcontinue": f"{stamp}|{following.revid}", "continue": "||"}
        else:
            answer["batchcomplete"] = True
        return Reply.json(answer)

    @staticmethod
    def _resume_at(revisions: list[WikiRevision], token: str | None) -> int:
        if not token:
            return 0
        stamp, _, revid = token.partition("|")
        if not (stamp.isdigit() and revid.isdigit()):
            raise ValueError(f"badcontinue: {token!r} is not 'timestamp|revid'")
        return next((i for i, r in enumerate(revisions) if r.revid == int(revid)), len(revisions))

    @staticmethod
    def _rev(rev: WikiRevision, props: set[str], params: dict[str, str]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if "ids" in props:
            out.update(revid=rev.revid, parentid=rev.revid - 1)
        for name in ("timestamp", "user", "size", "comment"):
            if name in props and name in rev.hidden:
                out[f"{name}hidden"] = True
            elif name in props:
                out[name] = getattr(rev, name)
        if "content" in props and params.get("rvslots") == "main":
            out["slots"] = {"main": {"contentmodel": "wikitext", "content": rev.html}}
        return out


def wayback_double(snapshots: dict[str, list[tuple[str, str]]], statuses: dict[str, str] | None = None,
                   empty_answers: int = 0) -> Callable[[Request], Reply]:
    """The availability API: {url: [(timestamp YYYYMMDDhhmmss, snapshot URL)]} -> the snapshot closest to `timestamp`.

    Like the real one, `status` is the HTTP status the site answered when captured (`statuses` by timestamp;
    "200" otherwise), and the first `empty_answers` answers are `"archived_snapshots": {}` even for archived
    URLs (the API does this now and then).
    """
    left = [empty_answers]

    def answer(request: Request) -> Reply:
        url = (request.query.get("url") or [""])[0]
        stamp = (request.query.get("timestamp") or [""])[0]
        found = snapshots.get(url) or []
        if left[0] > 0:
            left[0] -= 1
            return Reply.json({"url": url, "archived_snapshots": {}})
        if not found or not stamp.isdigit():
            return Reply.json({"url": url, "archived_snapshots": {}})
        wanted = datetime.strptime(stamp[:8].ljust(8, "0"), "%Y%m%d")
        ts, snap = min(found, key=lambda s: abs((datetime.strptime(s[0], "%Y%m%d%H%M%S") - wanted).total_seconds()))
        return Reply.json({"url": url, "archived_snapshots": {"closest": {
            "status": (statuses or {}).get(ts, "200"), "available": True, "url": snap, "timestamp": ts}}})

    return answer


@dataclass(frozen=True)
class ArxivPaper:
    """One entry of the arXiv double."""

    arxiv_id: str
    title: str
    authors: tuple[str, ...]
    published: str
    category: str
    summary: str
    pdf_url: str = ""


def arxiv_double(papers: list[ArxivPaper]) -> Callable[[Request], Reply]:
    """The arXiv API: `search_query` of `all:word AND …` (or `ti:`/`au:`) or `id_list`, answered as an Atom feed."""

    def matches(paper: ArxivPaper, expression: str) -> bool:
        for term in expression.split(" AND "):
            field_name, _, word = term.strip().partition(":")
            haystack = {"ti": paper.title, "au": " ".join(paper.authors), "abs": paper.summary}.get(
                field_name, f"{paper.title} {' '.join(paper.authors)} {paper.summary}")
            if word.strip('"').lower() not in haystack.lower():
                return False
        return True

    def answer(request: Request) -> Reply:
        ids = (request.query.get("id_list") or [""])[0]
        expression = (request.query.get("search_query") or [""])[0]
        found = [p for p in papers if p.arxiv_id == ids] if ids else [p for p in papers if matches(p, expression)]
        entries = "".join(_entry(p) for p in found)
        feed = ('<?xml version="1.0" encoding="UTF-8"?>\n<feed xmlns="http://www.w3.org/2005/Atom" '
                'xmlns:arxiv="http://arxiv.org/schemas/atom" xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/">'
                f'<title>arXiv Query: {html_lib.escape(expression or ids)}</title>'
                f'<opensearch:totalResults>{len(found)}</opensearch:totalResults>{entries}</feed>')
        return Reply(200, feed, "application/atom+xml; charset=utf-8")

    return answer


def _entry(paper: ArxivPaper) -> str:
    esc = html_lib.escape
    authors = "".join(f"<author><name>{esc(a)}</name></author>" for a in paper.authors)
    pdf = paper.pdf_url or f"http://arxiv.org/pdf/{paper.arxiv_id}"
    return (f"<entry><id>http://arxiv.org/abs/{paper.arxiv_id}</id><published>{paper.published}</published>"
            f"<title>{esc(paper.title)}</title><summary>{esc(paper.summary)}</summary>{authors}"
            f'<link href="http://arxiv.org/abs/{paper.arxiv_id}" rel="alternate" type="text/html"/>'
            f'<link title="pdf" href="{esc(pdf)}" rel="related" type="application/pdf"/>'
            f'<arxiv:primary_category term="{paper.category}" scheme="http://arxiv.org/schemas/atom"/></entry>')

