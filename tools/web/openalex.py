"""OpenAlex works, authors and sources: search with filters, a work by DOI or exact title, abstracts rebuilt.

OpenAlex's quirks handled here: an abstract comes as `abstract_inverted_index` (word -> positions),
rebuilt in position order; `filter` values are split at commas by the API (so a title is never put in a
filter: title lookups use `search=` and pick the exact title from the hits, paging with `cursor`);
works have no venue-name filter, so a venue (and an author) is first resolved to its OpenAlex id.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any

from tools.core.errors import ToolFailure
from tools.web.service import NotFound, Service

PER_PAGE = 10
TITLE_PAGES = 3
"""Pages of 25 search hits read with `cursor` when looking for an exact title."""
_YEAR = re.compile(r"^\s*(\d{4})\s*(?:[-–]\s*(\d{4})\s*)?$")


@dataclass(frozen=True)
class Author:
    """A work's author as the service names them, with an ORCID iD when it gives one."""

    name: str
    orcid: str = ""


@dataclass
class Work:
    """The metadata paper_lookup and scholarly_search report, from OpenAlex or Crossref."""

    title: str
    authors: list[Author] = field(default_factory=list)
    year: int | None = None
    published: str = ""
    venue: str = ""
    volume: str = ""
    issue: str = ""
    pages: str = ""
    doi: str = ""
    openalex_id: str = ""
    cited_by: int | None = None
    type: str = ""
    abstract: str = ""
    references: int | None = None
    license: str = ""
    oa_pdf: str = ""
    oa_landing: str = ""


@dataclass(frozen=True)
class Resolved:
    """An author or source name resolved to an OpenAlex id, and how."""

    id: str
    name: str
    exact: bool


def rebuild_abstract(index: dict[str, list[int]] | None) -> str:
    """The text of an `abstract_inverted_index`: every word put back at each of its positions."""
    if not index:
        return ""
    placed = sorted((pos, word) for word, positions in index.items() for pos in positions)
    return " ".join(word for _, word in placed)


def short_id(url: str) -> str:
    """'https://openalex.org/W2741809807' -> 'W2741809807'."""
    return url.rstrip("/").rsplit("/", 1)[-1] if url else ""


def bare_doi(value: str) -> str:
    """A DOI without its resolver prefix: 'https://doi.org/10.1/x' -> '10.1/x' (lower case, as DOIs compare)."""
    text = (value or "").strip()
    text = re.sub(r"^(?:https?://(?:dx\.)?doi\.org/|doi:\s*)", "", text, flags=re.IGNORECASE)
    return text.lower()


def year_filters(year: str) -> list[str]:
    """OpenAlex filters for '2019' or '2015-2019'; ToolFailure for anything else."""
    found = _YEAR.match(year or "")
    if not found:
        raise ToolFailure(f"year must be a year such as 2019 or a range such as 2015-2019, not {year!r}.",
                          "bad_arguments")
    first, last = found.group(1), found.group(2) or found.group(1)
    if int(last) < int(first):
        first, last = last, first
    return [f"from_publication_date:{first}-01-01", f"to_publication_date:{last}-12-31"]


def parse_work(raw: dict[str, Any]) -> Work:
    """A Work from an OpenAlex work object."""
    primary = raw.get("primary_location") or {}
    best = raw.get("best_oa_location") or {}
    source = primary.get("source") or {}
    biblio = raw.get("biblio") or {}
    first, last = biblio.get("first_page") or "", biblio.get("last_page") or ""
    authors = [Author((a.get("author") or {}).get("display_name") or a.get("raw_author_name") or "",
                      (a.get("author") or {}).get("orcid") or "") for a in raw.get("authorships") or []]
    oa_url = (raw.get("open_access") or {}).get("oa_url") or ""
    return Work(
        title=raw.get("display_name") or raw.get("title") or "", authors=authors,
        year=raw.get("publication_year"), published=raw.get("publication_date") or "",
        venue=source.get("display_name") or "", volume=biblio.get("volume") or "", issue=biblio.get("issue") or "",
        pages=f"{first}–{last}" if first and last and first != last else first, doi=bare_doi(raw.get("doi") or ""),
        openalex_id=short_id(raw.get("id") or ""), cited_by=raw.get("cited_by_count"), type=raw.get("type") or "",
        abstract=rebuild_abstract(raw.get("abstract_inverted_index")),
        references=raw.get("referenced_works_count"), license=best.get("license") or primary.get("license") or "",
        oa_pdf=best.get("pdf_url") or "", oa_landing=best.get("landing_page_url") or oa_url)


def same_title(a: str, b: str) -> bool:
    """Titles equal once case, accents, punctuation and spacing are ignored."""
    return _title_key(a) == _title_key(b)


def _title_key(text: str) -> str:
    plain = unicodedata.normalize("NFKD", text or "").encode("ascii", "ignore").decode().lower()
    return " ".join(re.findall(r"[a-z0-9]+", plain))


class OpenAlex:
    """The OpenAlex calls the scholarly tools make."""

    def __init__(self, service: Service) -> None:
        self.service = service

    def search(self, query: str, filters: list[str], per_page: int = PER_PAGE) -> tuple[list[Work], int]:
        """Works matching `query` under `filters` (already resolved ids), and how many OpenAlex counts in all."""
        params: dict[str, Any] = {"per-page": per_page}
        if query.strip():
            params["search"] = query.strip()
        if filters:
            params["filter"] = ",".join(filters)
        body = self._get("works", params)
        return [parse_work(w) for w in body.get("results") or []], int((body.get("meta") or {}).get("count") or 0)

    def resolve(self, entity: str, name: str) -> Resolved | None:
        """An author ('authors') or source ('sources') by name.

        An exact display-name match is preferred over the first hit.
        """
        hits = self._get(entity, {"search": name.strip(), "per-page": 10}).get("results") or []
        if not hits:
            return None
        for hit in hits:
            names = [hit.get("display_name") or "", *(hit.get("display_name_alternatives") or [])]
            if any(same_title(n, name) for n in names):
                return Resolved(short_id(hit.get("id") or ""), hit.get("display_name") or name, True)
        first = hits[0]
        return Resolved(short_id(first.get("id") or ""), first.get("display_name") or name, False)

    def by_doi(self, doi: str) -> Work | None:
        """The work with this DOI, or None when OpenAlex does not know it."""
        try:
            return parse_work(self._get(f"works/doi:{bare_doi(doi)}", {}))
        except NotFound:
            return None

    def by_title(self, title: str) -> tuple[Work | None, list[Work]]:
        """The work whose title is exactly `title` (searching, paging with cursor), and the first hits seen."""
        cursor, seen = "*", []
        for _ in range(TITLE_PAGES):
            body = self._get("works", {"search": title, "per-page": 25, "cursor": cursor})
            works = [parse_work(w) for w in body.get("results") or []]
            seen.extend(works)
            match = next((w for w in works if same_title(w.title, title)), None)
            if match is not None:
                return match, seen
            cursor = (body.get("meta") or {}).get("next_cursor") or ""
            if not works or not cursor:
                break
        return None, seen

    def _get(self, path: str, params: dict[str, Any]) -> dict[str, Any]:
        try:
            body = self.service.get_json(path, params)
        except NotFound:
            if path.startswith("works/"):
                raise
            body = {}
        if not isinstance(body, dict):
            raise self.service.failure("answered with an unexpected shape", "http_error")
        return body
