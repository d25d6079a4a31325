"""scholarly_search, paper_lookup and orcid_works: papers beyond arXiv, by metadata and open-access copies.

Many publisher pages cannot be opened by a harness; their metadata (OpenAlex, Crossref), abstracts and
open-access copies (Unpaywall, OpenAlex's `best_oa_location`) can. A copy's URL then reads with
fetch_webpage and find_in_page like any PDF. Each service has its own setting; an empty one removes
only the tools that need it, with the reason in `python -m tools list`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from langchain_core.tools import BaseTool, tool

from config import Settings
from tools.core.context import ToolContext
from tools.core.context_tool import context_tool
from tools.core.errors import MissingDependency, ToolFailure
from tools.web.crossref import Crossref, Unpaywall
from tools.web.openalex import OpenAlex, Work, year_filters
from tools.web.orcid import Orcid, OrcidWork, normalise_orcid
from tools.web.service import BudgetSpent, Service, contact_email, tool_timeout

_DOI = re.compile(r"\b(10\.\d{4,9}/\S+)", re.IGNORECASE)
ABSTRACT_CHARS = 3000


def _service(settings: Settings, name: str, url: str, polite: bool) -> Service:
    return Service(name, url, tool_timeout(settings), settings.HTTP_USER_AGENT,
                   mailto=contact_email(settings) if polite else "")


def openalex_service(settings: Settings) -> Service:
    """OpenAlex: OPENALEX_API_KEY as `api_key`, no `mailto` (its polite pool is retired), the contact in the UA."""
    key = settings.OPENALEX_API_KEY.get_secret_value().strip() if settings.OPENALEX_API_KEY else ""
    return Service("OpenAlex", settings.OPENALEX_API_URL, tool_timeout(settings), settings.HTTP_USER_AGENT,
                   api_key=key)


@dataclass
class RunBudget:
    """Per run: why OpenAlex's list and search requests stopped (its daily budget spent), empty while they go.

    Each run keeps its own (`RunServices.kept(RunBudget)`).
    """

    spent: str = ""


def budget_advice(failure: BudgetSpent, keyed: bool) -> str:
    """The reply once the daily budget is spent: what still works, and the key that raises the budget."""
    key = ("" if keyed else " Set OPENALEX_API_KEY (free at https://openalex.org/settings/api) for about 1,000 "
           "searches a day instead of ~10.")
    return (f"{failure}. scholarly_search and title lookups will not ask OpenAlex again in this run; "
            "paper_lookup with a DOI still works (single-record lookups are free), and web_search or arxiv_search "
            f"can find the paper.{key}")


def _guarded(run: RunBudget, keyed: bool, call: Callable[[], str]) -> str:
    """`call`, refused at once when the run's budget is spent, and recording it when this call finds it spent."""
    if run.spent:
        raise ToolFailure(run.spent, "http_error")
    try:
        return call()
    except BudgetSpent as exc:
        run.spent = budget_advice(exc, keyed)
        raise ToolFailure(run.spent, "http_error") from None


def find_doi(text: str) -> str:
    """The DOI in `text` ('10.1371/journal.pone.0033693', a doi.org URL, 'doi:…'), or ''."""
    found = _DOI.search(text or "")
    return found.group(1).rstrip(".,;)]}>\"'") if found else ""


def _authors(work: Work, limit: int = 10, orcids: bool = False) -> str:
    names = [a.name + (f" (ORCID {a.orcid.rsplit('/', 1)[-1]})" if orcids and a.orcid else "")
             for a in work.authors[:limit]]
    more = len(work.authors) - limit
    return ", ".join(names) + (f" and {more} more" if more > 0 else "") if names else "(none listed)"


def describe_hit(number: int, work: Work) -> str:
    """One scholarly_search hit."""
    lines = [f"{number}. {work.title}", f"   Authors: {_authors(work)}",
             f"   Year: {work.year or '?'} · Venue: {work.venue or '?'} · Type: {work.type or '?'} · "
             f"Cited by: {work.cited_by if work.cited_by is not None else '?'}",
             f"   DOI: {work.doi or '(none)'} · OpenAlex: {work.openalex_id}"]
    if work.oa_pdf or work.oa_landing:
        lines.append(f"   Open-access copy: {work.oa_pdf or work.oa_landing}")
    return "\n".join(lines)


def describe_paper(work: Work, sources: list[str]) -> str:
    """The paper_lookup reply."""
    where = ", ".join(p for p in (f"vol. {work.volume}" if work.volume else "", f"no. {work.issue}" if work.issue
                                  else "", f"pp. {work.pages}" if work.pages else "") if p)
    lines = [f"Title: {work.title}", f"Authors: {_authors(work, 40, orcids=True)}",
             f"Journal: {work.venue or '(not given)'}" + (f", {where}" if where else ""),
             f"Published: {work.published or work.year or '(not given)'}", f"Type: {work.type or '(not given)'}",
             f"DOI: {work.doi or '(none)'}" + (f" · OpenAlex: {work.openalex_id}" if work.openalex_id else "")]
    if work.references is not None:
        lines.append(f"References: {work.references}")
    if work.cited_by is not None:
        lines.append(f"Cited by: {work.cited_by}")
    if work.license:
        lines.append(f"License: {work.license}")
    if work.oa_pdf:
        lines.append(f"Open-access PDF: {work.oa_pdf} (read it with fetch_webpage or find_in_page)")
    if work.oa_landing:
        lines.append(f"Open-access landing page: {work.oa_landing}")
    if not (work.oa_pdf or work.oa_landing):
        lines.append("Open-access copy: none known")
    abstract = work.abstract if len(work.abstract) <= ABSTRACT_CHARS else work.abstract[:ABSTRACT_CHARS] + "…"
    lines.append(f"Abstract: {abstract}" if abstract else "Abstract: (none in the records)")
    lines.append(f"Sources: {'; '.join(sources)}")
    return "\n".join(lines)


def describe_works(orcid: str, name: str, works: list[OrcidWork]) -> str:
    """The orcid_works reply: the count first, then the person, then the works newest first."""
    lines = [f"{len(works)} works", f"ORCID {orcid}: {name or '(no public name)'}"]
    for number, work in enumerate(works, start=1):
        details = " · ".join(p for p in (work.type, work.date or work.year, work.journal,
                                         f"DOI {work.doi}" if work.doi else "") if p)
        lines.append(f"{number}. {work.title or '(untitled)'}" + (f" — {details}" if details else ""))
    return "\n".join(lines)


class Papers:
    """paper_lookup's sources: Crossref by DOI, OpenAlex by title or for what Crossref lacks, Unpaywall for copies."""

    def __init__(self, settings: Settings) -> None:
        self.openalex = OpenAlex(openalex_service(settings))
        self.crossref = Crossref(_service(settings, "Crossref", settings.CROSSREF_API_URL, True)) \
            if settings.CROSSREF_API_URL else None
        email = settings.UNPAYWALL_EMAIL.strip()
        self.unpaywall = Unpaywall(_service(settings, "Unpaywall", settings.UNPAYWALL_API_URL, False), email) \
            if email and settings.UNPAYWALL_API_URL else None

    def lookup(self, text: str) -> str:
        """The paper_lookup reply for a DOI or a title."""
        doi = find_doi(text)
        work, alex, sources = (self._by_doi(doi) if doi else self._by_title(text))
        if alex is not None:
            if not work.abstract and alex.abstract:
                work.abstract = alex.abstract
                sources.append("abstract: OpenAlex abstract_inverted_index")
            work.openalex_id = work.openalex_id or alex.openalex_id
            work.cited_by = work.cited_by if work.cited_by is not None else alex.cited_by
        copy = self.unpaywall.best_copy(work.doi) if self.unpaywall is not None and work.doi else None
        if copy is not None:
            work.oa_pdf, work.oa_landing = copy[0], copy[1]
            work.license = work.license or copy[2]
            sources.append("open-access copy: Unpaywall")
        elif alex is not None and (alex.oa_pdf or alex.oa_landing):
            work.oa_pdf, work.oa_landing = alex.oa_pdf, alex.oa_landing
            sources.append("open-access copy: OpenAlex best_oa_location")
        return describe_paper(work, sources)

    def _by_doi(self, doi: str) -> tuple[Work, Work | None, list[str]]:
        work = self.crossref.work(doi) if self.crossref is not None else None
        alex = self.openalex.by_doi(doi)
        if work is None and alex is None:
            raise ToolFailure(f"no record of the DOI {doi} in Crossref or OpenAlex. Check the DOI (it starts with "
                              "10.), or pass the paper's title instead.", "not_found")
        if work is None:
            return alex, alex, ["metadata: OpenAlex (Crossref has no record)"]  # type: ignore[return-value]
        return work, alex, ["metadata: Crossref"]

    def _by_title(self, title: str) -> tuple[Work, Work | None, list[str]]:
        match, seen = self.openalex.by_title(title)
        if match is None:
            near = "; ".join(f"{w.title!r} ({w.year}, DOI {w.doi or 'none'})" for w in seen[:5])
            raise ToolFailure(f"OpenAlex has no work titled exactly {title!r}." + (f" Closest hits: {near}. Call "
                              "paper_lookup with one of their DOIs," if near else " Try") +
                              " or use scholarly_search with fewer words.", "not_found")
        if match.doi and self.crossref is not None:
            work = self.crossref.work(match.doi)
            if work is not None:
                return work, match, ["metadata: Crossref (found by title on OpenAlex)"]
        return match, match, ["metadata: OpenAlex"]


def make_scholarly_tools(settings: Settings) -> list[BaseTool]:
    """Build scholarly_search and paper_lookup (OpenAlex, with Crossref and Unpaywall when set)."""
    if not settings.OPENALEX_API_URL:
        raise MissingDependency(["scholarly_search", "paper_lookup"], "OPENALEX_API_URL is empty; set it to "
                                                                      "https://api.openalex.org")
    return _openalex_tools(settings)


def make_orcid_tools(settings: Settings) -> list[BaseTool]:
    """Build orcid_works (the ORCID public API)."""
    if not settings.ORCID_API_URL:
        raise MissingDependency(["orcid_works"], "ORCID_API_URL is empty; set it to https://pub.orcid.org/v3.0")
    return [_orcid_tool(settings)]


def _openalex_tools(settings: Settings) -> list[BaseTool]:
    papers = Papers(settings)
    openalex = papers.openalex
    keyed = bool(openalex.service.api_key)

    def run_budget(ctx: ToolContext) -> RunBudget:
        return ctx.services.kept(RunBudget)

    @context_tool
    def scholarly_search(_ctx: ToolContext, query: str, author: str = "", year: str = "", venue: str = "") -> str:
        """Search scholarly works (journals, conferences, books, preprints) in OpenAlex: up to 10 works.

        Each hit gives title, authors, year, venue, DOI, OpenAlex id, cited-by count, type and an
        open-access copy when one is known. Then call paper_lookup(DOI) for the abstract, volume, pages
        and license, or read the open-access copy with fetch_webpage / find_in_page.

        Args:
            query: Words from the title or topic, e.g. "deep residual learning image recognition".
            author: An author's name, e.g. "Kaiming He" (resolved to one OpenAlex author; the reply says which).
            year: A publication year such as 2019, or a range such as 2015-2019.
            venue: A journal or conference name, e.g. "Nature" (resolved to one OpenAlex source).
        """
        if not any(v.strip() for v in (query or "", author or "", venue or "")):
            raise ToolFailure("give at least a query, an author or a venue, e.g. query=\"graphene\".", "bad_arguments")
        return _guarded(run_budget(_ctx), keyed, lambda: _search_works(openalex, query, author, year, venue))

    @context_tool
    def paper_lookup(_ctx: ToolContext, doi_or_title: str) -> str:
        """Look up one paper by DOI or exact title: full metadata, abstract and an open-access copy.

        Gives title, authors (with ORCID iDs when recorded), journal, volume/issue/pages, publication
        date, type, abstract, references count, license and the open-access PDF or landing URL (read
        it with fetch_webpage or find_in_page). Use it when a publisher's page cannot be opened.

        Args:
            doi_or_title: A DOI (10.1038/nature14539, https://doi.org/…) or the paper's full title.
        """
        text = " ".join((doi_or_title or "").split())
        if not text:
            raise ToolFailure("pass a DOI such as 10.1038/nature14539 or a paper's title.", "bad_arguments")
        if find_doi(text):  # a DOI is a singleton lookup: free, so it goes even once the budget is spent
            return papers.lookup(text)
        return _guarded(run_budget(_ctx), keyed, lambda: papers.lookup(text))

    return [scholarly_search, paper_lookup]


def _search_works(openalex: OpenAlex, query: str, author: str, year: str, venue: str) -> str:
    """OpenAlex works for a query, the author and venue resolved to one id each (the reply says which)."""
    filters, notes = year_filters(year) if (year or "").strip() else [], []
    for entity, name, key, label in (("authors", author, "authorships.author.id", "Author"),
                                     ("sources", venue, "primary_location.source.id", "Venue")):
        if (name or "").strip():
            found = openalex.resolve(entity, name)
            if found is None:
                raise ToolFailure(f"OpenAlex knows no {label.lower()} named {name!r}. Check the spelling, or "
                                  f"leave {label.lower()} empty and put the name in query.", "no_results")
            filters.append(f"{key}:{found.id}")
            how = "exact name match" if found.exact else "no exact match: the first hit"
            notes.append(f"{label} {name!r} resolved to {found.name} (OpenAlex {found.id}; {how})")
    works, total = openalex.search(query or "", filters)
    if not works:
        raise ToolFailure("OpenAlex found no works for that search" + (f" ({'; '.join(notes)})" if notes else "")
                          + ". Use fewer words, widen the year, or drop author/venue.", "no_results")
    head = [f"OpenAlex: {total} works match; the first {len(works)}:"] + notes
    return "\n".join(head + [describe_hit(i, w) for i, w in enumerate(works, start=1)])


def _orcid_tool(settings: Settings) -> BaseTool:
    orcid_api = Orcid(_service(settings, "ORCID", settings.ORCID_API_URL, False))

    @tool
    def orcid_works(orcid: str) -> str:
        """List a researcher's works from their public ORCID record, newest first.

        The first line is `N works` (each work counted once, however many sources recorded it), then
        the person's name, then each work's title, type, date, journal and DOI.

        Args:
            orcid: An ORCID iD such as 0000-0002-1825-0097, or its https://orcid.org/… URL.
        """
        orcid_id = normalise_orcid(orcid)
        name, works = orcid_api.record(orcid_id)
        return describe_works(orcid_id, name, works)

    return orcid_works
