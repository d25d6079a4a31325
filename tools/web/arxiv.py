"""arxiv_search: papers from the arXiv API (Atom feed at ARXIV_API_URL, an operator setting trusted as configured).

Each hit gives the arXiv id, title, authors, published date, primary category and the abs and PDF
URLs; the PDF then reads with fetch_webpage (paged, PDF page numbers kept) and find_in_page.
"""

from __future__ import annotations

import re
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass

from langchain_core.tools import BaseTool, tool

from config import Settings
from tools.core.errors import MissingDependency, ToolFailure
from tools.search.base import ProviderError, request

MAX_RESULTS = 10
RETRY_PAUSE_S = 1.0
"""Pause before asking again after an empty feed."""
_ATOM = "{http://www.w3.org/2005/Atom}"
_ARXIV = "{http://arxiv.org/schemas/atom}"
_FIELD = re.compile(r"\b(ti|au|abs|co|jr|cat|rn|id|all):", re.IGNORECASE)
_ID = re.compile(r"^(?:arxiv:)?(\d{4}\.\d{4,5}(?:v\d+)?|[a-z-]+(?:\.[A-Z]{2})?/\d{7}(?:v\d+)?)$", re.IGNORECASE)


@dataclass(frozen=True)
class Paper:
    """One arXiv entry."""

    arxiv_id: str
    title: str
    authors: list[str]
    published: str
    category: str
    abs_url: str
    pdf_url: str
    summary: str


def search_params(query: str) -> dict[str, str | int]:
    """The API's parameters.

    An id lookup for 'arXiv:2101.00001', field syntax as given, else every word in all fields.
    """
    text = query.strip()
    if _ID.match(text):
        return {"id_list": _ID.match(text).group(1), "max_results": 1}  # type: ignore[union-attr]
    if _FIELD.search(text):
        expression = text
    else:
        words = re.findall(r"[\w'-]+", text)
        expression = " AND ".join(f"all:{w}" for w in words)
    return {"search_query": expression, "start": 0, "max_results": MAX_RESULTS, "sortBy": "relevance"}


def feed_errors(xml: str) -> list[str]:
    """The explanations of an arXiv error feed's entries ('incorrect id format for 1234.12345'), if it is one."""
    try:
        root = ET.fromstring(xml)
    except ET.ParseError:
        return []
    return [_text(e, "summary") or _text(e, "title") for e in root.findall(f"{_ATOM}entry")
            if "/api/errors" in _text(e, "id")]


def parse_feed(xml: str) -> list[Paper]:
    """The entries of an arXiv Atom feed; ToolFailure when it is not one, or when it reports an error."""
    try:
        root = ET.fromstring(xml)
    except ET.ParseError as exc:
        raise ToolFailure(f"the arXiv API answered with something that is not an Atom feed ({exc}). Try again.",
                          "http_error") from None
    errors = feed_errors(xml)
    if errors:  # the API reports a bad query as entries whose id is under /api/errors
        raise _refused(errors)
    papers = []
    for entry in root.findall(f"{_ATOM}entry"):
        abs_url = _text(entry, "id")
        if not abs_url or "/abs/" not in abs_url:
            continue
        pdf = next((link.get("href", "") for link in entry.findall(f"{_ATOM}link")
                    if link.get("title") == "pdf" or link.get("type") == "application/pdf"), "")
        category = entry.find(f"{_ARXIV}primary_category")
        papers.append(Paper(
            arxiv_id=abs_url.rsplit("/abs/", 1)[1], title=_text(entry, "title"),
            authors=[_text(a, "name") for a in entry.findall(f"{_ATOM}author")],
            published=_text(entry, "published")[:10],
            category=category.get("term", "") if category is not None else "",
            abs_url=abs_url, pdf_url=pdf or abs_url.replace("/abs/", "/pdf/"), summary=_text(entry, "summary")))
    return papers


def _refused(errors: list[str]) -> ToolFailure:
    return ToolFailure(f"the arXiv API refused the query: {'; '.join(errors)[:300]}. Fix the query: an id looks like "
                       "2101.00001 or hep-th/9711200, field syntax like 'au:Smith AND ti:graphene'.", "bad_arguments")


def _text(node: ET.Element, name: str) -> str:
    found = node.find(f"{_ATOM}{name}")
    return " ".join((found.text or "").split()) if found is not None else ""


def _describe(number: int, paper: Paper) -> str:
    authors = ", ".join(paper.authors[:8]) + (f" and {len(paper.authors) - 8} more" if len(paper.authors) > 8 else "")
    summary = paper.summary if len(paper.summary) <= 300 else paper.summary[:297] + "…"
    return (f"{number}. {paper.title}\n   arXiv:{paper.arxiv_id} · {paper.category} · published {paper.published}\n"
            f"   Authors: {authors}\n   Abstract page: {paper.abs_url}\n   PDF: {paper.pdf_url}\n   {summary}")


def _search(api_url: str, text: str, timeout_s: float, user_agent: str) -> list[Paper]:
    """The papers for `text`; an empty feed is asked once more (the API answers one now and then)."""
    papers: list[Paper] = []
    for attempt in range(2):
        try:
            response = request("GET", api_url, timeout_s, accept="application/atom+xml", user_agent=user_agent,
                               params=search_params(text))
        except ProviderError as exc:
            errors = feed_errors(exc.body)
            if errors:  # HTTP 400 with an error feed: the query is wrong, not the service
                raise _refused(errors) from None
            raise ToolFailure(f"the arXiv API ({api_url}) did not answer: {exc}. Try again later, "
                              "or web_search with 'arxiv' and the title.", "network_error") from None
        papers = parse_feed(response.text)
        if papers:
            break
        if attempt == 0:
            time.sleep(RETRY_PAUSE_S)
    return papers


def make_arxiv_tools(settings: Settings) -> list[BaseTool]:
    """Build arxiv_search; MissingDependency when ARXIV_API_URL is empty."""
    if not settings.ARXIV_API_URL:
        raise MissingDependency(["arxiv_search"], "ARXIV_API_URL is empty; set it to the arXiv API, e.g. "
                                                  "https://export.arxiv.org/api/query.")
    timeout_s = max(2.0, settings.TOOL_TIMEOUT - 1.0)

    @tool
    def arxiv_search(query: str) -> str:
        """Search arXiv for scientific papers: id, title, authors, published date, category, abstract and PDF links.

        Use keywords (title words, an author's surname, a topic), arXiv field syntax such as
        'au:Smith AND ti:graphene', or an id such as 2101.00001. Then read a paper with
        fetch_webpage(pdf URL) or search it with find_in_page.

        Args:
            query: Keywords, arXiv search syntax, or an arXiv id.
        """
        text = (query or "").strip()
        if not text:
            raise ToolFailure("the query is empty. Pass keywords, e.g. \"attention is all you need\".", "bad_arguments")
        papers = _search(settings.ARXIV_API_URL, text, timeout_s, settings.HTTP_USER_AGENT)
        if not papers:
            raise ToolFailure(f"arXiv found no papers for {text!r}. Use fewer or different keywords (a distinctive "
                              "title word, an author's surname), or web_search.", "no_results")
        return f"arXiv results for {text!r}:\n" + "\n".join(_describe(i, p) for i, p in enumerate(papers, start=1))

    return [arxiv_search]
