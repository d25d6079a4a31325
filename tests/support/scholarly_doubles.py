"""Loopback doubles of OpenAlex, Crossref, Unpaywall and ORCID, answering in the real services' shapes and quirks.

Shapes from the services' documentation (docs.openalex.org "Work object", "Paging" and "Filter works";
api.crossref.org swagger; developers.openalex.org "Authentication & Pricing" and "Errors" for the
metering: `api_key`, the dollar allowance, X-RateLimit-* headers, a 429 once the day's allowance is
gone; unpaywall.org/data-format; info.orcid.org v3.0 `/works` and `/person`) and
from recorded responses: `PLOS_ONE_MESSAGE` is the Crossref record of 10.1371/journal.pone.0033693 as
recorded in sckott/habanero `test/cassettes/test-works/test_works_with_one_id.yaml` (its 70 references
trimmed). Quirks kept: OpenAlex splits `filter` at commas (a comma inside a value breaks it), pages
with `cursor` (`meta.next_cursor`, null on the last page), gives abstracts only as
`abstract_inverted_index`; Crossref wraps the work in `message`, uses `date-parts` and JATS abstracts,
answers an unknown DOI with a plain-text 404 "Resource not found."; Unpaywall answers 422 without a
valid email; ORCID groups one work's summaries from several sources.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

from tests.support.web_server import LocalWebServer, Reply, Request


class PrefixRoutes(dict):
    """Routes of a LocalWebServer where a key ending in '/' also serves every path under it."""

    def get(self, path: str, default: Any = None) -> Any:
        if path in self:
            return self[path]
        for key in sorted((k for k in self if k.endswith("/")), key=len, reverse=True):
            if path.startswith(key):
                return self[key]
        return default


PLOS_ONE_MESSAGE: dict[str, Any] = {
    "indexed": {"date-parts": [[2024, 9, 25]], "date-time": "2024-09-25T11:20:08Z", "timestamp": 1727263208808},
    "reference-count": 70, "publisher": "Public Library of Science (PLoS)", "issue": "3",
    "license": [{"start": {"date-parts": [[2012, 3, 21]], "date-time": "2012-03-21T00:00:00Z",
                           "timestamp": 1332288000000}, "content-version": "unspecified", "delay-in-days": 0,
                 "URL": "http://creativecommons.org/licenses/by/4.0/"}],
    "content-domain": {"domain": ["www.plosone.org"], "crossmark-restriction": False},
    "short-container-title": ["PLoS ONE"], "DOI": "10.1371/journal.pone.0033693", "type": "journal-article",
    "created": {"date-parts": [[2012, 3, 23]], "date-time": "2012-03-23T01:00:52Z", "timestamp": 1332464452000},
    "page": "e33693", "source": "Crossref", "is-referenced-by-count": 67,
    "title": ["Methylphenidate Exposure Induces Dopamine Neuron Loss and Activation of Microglia in the Basal "
              "Ganglia of Mice"],
    "prefix": "10.1371", "volume": "7",
    "author": [{"given": "Shankar", "family": "Sadasivan", "sequence": "first", "affiliation": []},
               {"given": "Brooks B.", "family": "Pond", "sequence": "additional", "affiliation": []},
               {"given": "Amar K.", "family": "Pani", "sequence": "additional", "affiliation": []},
               {"given": "Chunxu", "family": "Qu", "sequence": "additional", "affiliation": []},
               {"given": "Yun", "family": "Jiao", "sequence": "additional", "affiliation": []},
               {"given": "Richard J.", "family": "Smeyne", "sequence": "additional", "affiliation": []}],
    "member": "340", "published-online": {"date-parts": [[2012, 3, 21]]},
    "reference": [{"key": "ref1", "doi-asserted-by": "crossref", "first-page": "2376",
                   "DOI": "10.1038/sj.npp.1301164", "article-title": "Stimulants: Therapeutic actions in ADHD.",
                   "volume": "31", "author": "AF Arnsten", "year": "2006",
                   "journal-title": "Neuropsychopharmacology"}],
    "container-title": ["PLoS ONE"], "original-title": [], "language": "en",
    "link": [{"URL": "http://dx.plos.org/10.1371/journal.pone.0033693", "content-type": "unspecified",
              "content-version": "vor", "intended-application": "similarity-checking"}],
    "score": 1, "resource": {"primary": {"URL": "https://dx.plos.org/10.1371/journal.pone.0033693"}},
    "subtitle": [], "short-title": [], "issued": {"date-parts": [[2012, 3, 21]]}, "references-count": 70,
    "journal-issue": {"issue": "3", "published-online": {"date-parts": [[2012, 3, 21]]}},
    "URL": "http://dx.doi.org/10.1371/journal.pone.0033693", "relation": {}, "ISSN": ["1932-6203"],
    "issn-type": [{"type": "electronic", "value": "1932-6203"}], "subject": [],
    "published": {"date-parts": [[2012, 3, 21]]},
}


def inverted_index(text: str) -> dict[str, list[int]]:
    """OpenAlex's `abstract_inverted_index` of `text` (word -> every position it occupies)."""
    index: dict[str, list[int]] = {}
    for position, word in enumerate(text.split()):
        index.setdefault(word, []).append(position)
    return index


def openalex_work(key: str, title: str, year: int, authors: list[tuple[str, str]], venue: tuple[str, str],
                  doi: str = "", abstract: str = "", cited_by: int = 0, work_type: str = "article",
                  oa_pdf: str | None = None, biblio: dict[str, str] | None = None) -> dict[str, Any]:
    """A work object as the OpenAlex API gives it (abridged to the fields the tools read, plus neighbours)."""
    source = {"id": f"https://openalex.org/{venue[0]}", "display_name": venue[1], "issn_l": None,
              "type": "journal", "is_oa": False}
    location = {"is_oa": oa_pdf is not None, "landing_page_url": f"https://doi.org/{doi}" if doi else None,
                "pdf_url": None, "source": source, "license": None, "version": "publishedVersion"}
    best = None if oa_pdf is None else {"is_oa": True, "landing_page_url": oa_pdf.rsplit("/", 1)[0],
                                        "pdf_url": oa_pdf, "source": None, "license": "cc-by",
                                        "version": "acceptedVersion"}
    return {
        "id": f"https://openalex.org/{key}", "doi": f"https://doi.org/{doi}" if doi else None, "title": title,
        "display_name": title, "publication_year": year, "publication_date": f"{year}-06-15", "type": work_type,
        "authorships": [{"author_position": "first" if i == 0 else "middle",
                         "author": {"id": f"https://openalex.org/{aid}", "display_name": name,
                                    "orcid": None}, "institutions": [], "raw_author_name": name}
                        for i, (aid, name) in enumerate(authors)],
        "primary_location": location, "best_oa_location": best, "locations": [location] + ([best] if best else []),
        "open_access": {"is_oa": best is not None, "oa_status": "green" if best else "closed",
                        "oa_url": oa_pdf, "any_repository_has_fulltext": best is not None},
        "cited_by_count": cited_by, "biblio": biblio or {"volume": None, "issue": None, "first_page": None,
                                                          "last_page": None},
        "abstract_inverted_index": inverted_index(abstract) if abstract else None,
        "referenced_works_count": 12, "referenced_works": [], "is_retracted": False,
    }


def openalex_entity(key: str, name: str, alternatives: tuple[str, ...] = ()) -> dict[str, Any]:
    """An author or source object (the fields a name search returns)."""
    return {"id": f"https://openalex.org/{key}", "display_name": name,
            "display_name_alternatives": list(alternatives), "works_count": 40, "cited_by_count": 900}


@dataclass
class OpenAlexDouble:
    """`/works`, `/works/doi:…`, `/authors`, `/sources` with OpenAlex's filter, search and cursor semantics."""

    works: list[dict[str, Any]]
    authors: list[dict[str, Any]] = field(default_factory=list)
    sources: list[dict[str, Any]] = field(default_factory=list)
    seen_filters: list[list[str]] = field(default_factory=list)
    daily_usd: float | None = None
    """Metering (developers.openalex.org "Authentication & Pricing", since 2026-02-13): None = unmetered;
    else the day's allowance in dollars without a key ($0.01), and KEYED_USD with a key in `keys`."""
    keys: tuple[str, ...] = ()
    spent_usd: dict[str, float] = field(default_factory=dict)

    KEYED_USD = 1.0
    COST_USD = {"singleton": 0.0, "list": 0.0001, "search": 0.001}
    """Per request: a singleton (by id or DOI) is free, list+filter $0.10 and search $1 per 1,000 calls."""

    def routes(self) -> dict[str, Callable[[Request], Reply]]:
        plain = {"/works": self._works, "/works/": self._work, "/authors": self._entities(self.authors),
                 "/sources": self._entities(self.sources)}
        return {path: self._metered(serve) for path, serve in plain.items()}

    def _metered(self, serve: Callable[[Request], Reply]) -> Callable[[Request], Reply]:
        """Charge the request to its key's day (or the keyless one); a 429 once the allowance is gone.

        Every answer carries the documented X-RateLimit-* headers (remaining in dollars); the 429's
        body is OpenAlex's error shape `{"error", "message"}`.
        """
        def metered(request: Request) -> Reply:
            if self.daily_usd is None:
                return serve(request)
            key = request.query.get("api_key", [""])[0]
            who = key if key in self.keys else ""
            allowance = self.KEYED_USD if who else self.daily_usd
            kind = ("singleton" if "/works/" in request.path else
                    "search" if request.query.get("search") else "list")
            cost = self.COST_USD[kind]
            spent = self.spent_usd.get(who, 0.0)
            headers = {"X-RateLimit-Limit": f"{allowance:.4f}", "X-RateLimit-Reset": "2026-12-04T00:00:00Z"}
            if cost and spent + cost > allowance + 1e-9:
                headers.update({"X-RateLimit-Remaining": f"{max(0.0, allowance - spent):.4f}",
                                "X-RateLimit-Credits-Used": "0"})
                body = {"error": "Rate limit exceeded", "message": "Daily usage allowance exceeded. Add an api_key "
                        "or wait until the allowance resets at midnight UTC."}
                return Reply(429, json.dumps(body), "application/json", headers)
            self.spent_usd[who] = spent + cost
            reply = serve(request)
            headers.update({"X-RateLimit-Remaining": f"{allowance - spent - cost:.4f}",
                            "X-RateLimit-Credits-Used": f"{cost:.4f}"})
            return Reply(reply.status, reply.body, reply.content_type, {**reply.headers, **headers})
        return metered

    def _work(self, request: Request) -> Reply:
        ident = unquote(request.path.split("/works/", 1)[1])
        doi = ident.split("doi:", 1)[1].lower() if ident.startswith("doi:") else None
        for work in self.works:
            if (doi and (work["doi"] or "").lower().endswith(doi)) or work["id"].endswith("/" + ident):
                return Reply.json(work)
        return Reply(404, json.dumps({"error": "404 Not Found", "message": "The requested URL was not found."}),
                     "application/json")

    def _works(self, request: Request) -> Reply:
        found = list(self.works)
        raw_filter = request.query.get("filter", [""])[0]
        clauses = [c for c in raw_filter.split(",") if c]  # the real API splits filter values at commas
        self.seen_filters.append(clauses)
        for clause in clauses:
            name, sep, value = clause.partition(":")
            if not sep or name not in _FILTERS:
                return Reply(403, json.dumps({"error": "Invalid query parameters error.",
                                              "message": f"{name} is not a valid field."}), "application/json")
            found = [w for w in found if _FILTERS[name](w, value)]
        words = request.query.get("search", [""])[0].lower().split()
        if words:  # relevance: works sharing more of the words first, citations breaking ties (as OpenAlex's does)
            scored = [(sum(x in (w["title"] + " " + _abstract(w)).lower() for x in words), w) for w in found]
            found = [w for score, w in sorted(scored, key=lambda p: (-p[0], -p[1]["cited_by_count"])) if score]
        per_page = int(request.query.get("per-page", ["25"])[0])
        cursor = request.query.get("cursor", [None])[0]
        start = 0 if cursor in (None, "*") else int(cursor.removeprefix("c"))
        page = found[start:start + per_page]
        meta: dict[str, Any] = {"count": len(found), "db_response_time_ms": 12, "page": None if cursor else 1,
                                "per_page": per_page, "groups_count": None}
        if cursor is not None:
            meta["next_cursor"] = f"c{start + per_page}" if start + per_page < len(found) else None
        return Reply.json({"meta": meta, "results": page, "group_by": []})

    @staticmethod
    def _entities(items: list[dict[str, Any]]) -> Callable[[Request], Reply]:
        def serve(request: Request) -> Reply:
            words = request.query.get("search", [""])[0].lower().split()
            hits = [e for e in items if all(w in " ".join([e["display_name"], *e["display_name_alternatives"]])
                                            .lower() for w in words)]
            return Reply.json({"meta": {"count": len(hits), "page": 1, "per_page": 25}, "results": hits})
        return serve


def _abstract(work: dict[str, Any]) -> str:
    index = work.get("abstract_inverted_index") or {}
    return " ".join(w for _, w in sorted((p, w) for w, ps in index.items() for p in ps))


def _year_at_least(work: dict[str, Any], value: str) -> bool:
    return work["publication_date"] >= value


_FILTERS: dict[str, Callable[[dict[str, Any], str], bool]] = {
    "authorships.author.id": lambda w, v: any(a["author"]["id"].endswith("/" + v) for a in w["authorships"]),
    "primary_location.source.id": lambda w, v: w["primary_location"]["source"]["id"].endswith("/" + v),
    "from_publication_date": _year_at_least,
    "to_publication_date": lambda w, v: w["publication_date"] <= v,
    "publication_year": lambda w, v: str(w["publication_year"]) == v,
    "doi": lambda w, v: (w["doi"] or "").lower().endswith(v.lower()),
    "title.search": lambda w, v: all(x in w["title"].lower() for x in v.lower().split()),
}


def crossref_double(messages: dict[str, dict[str, Any]]) -> Callable[[Request], Reply]:
    """`/works/{doi}`: `{"status": "ok", "message-type": "work", "message": …}`, or the plain-text 404."""
    def serve(request: Request) -> Reply:
        doi = unquote(request.path.split("/works/", 1)[1]).lower()
        message = messages.get(doi)
        if message is None:
            return Reply(404, "Resource not found.", "text/plain")
        return Reply.json({"status": "ok", "message-type": "work", "message-version": "1.0.0", "message": message})
    return serve


def unpaywall_double(records: dict[str, dict[str, Any] | None]) -> Callable[[Request], Reply]:
    """`/v2/{doi}?email=`: 422 without an email, 404 for an unknown DOI, else the DOI object."""
    def serve(request: Request) -> Reply:
        email = request.query.get("email", [""])[0]
        if "@" not in email:
            return Reply(422, json.dumps({"HTTP_status_code": 422, "error": True, "message": "Email address "
                                          "required in query string, like ?email=example@example.com"}),
                         "application/json")
        doi = unquote(request.path.split("/v2/", 1)[1]).lower()
        if doi not in records:
            return Reply(404, json.dumps({"HTTP_status_code": 404, "error": True,
                                          "message": f"'{doi}' is an invalid doi."}), "application/json")
        best = records[doi]
        return Reply.json({"doi": doi, "doi_url": f"https://doi.org/{doi}", "is_oa": best is not None,
                           "oa_status": "gold" if best else "closed", "best_oa_location": best,
                           "oa_locations": [best] if best else [], "journal_name": "", "year": 2012})
    return serve


def unpaywall_location(pdf: str, landing: str) -> dict[str, Any]:
    """One Unpaywall OA location object."""
    return {"url": pdf or landing, "url_for_pdf": pdf or None, "url_for_landing_page": landing,
            "evidence": "open (via page says license)", "license": "cc-by", "version": "publishedVersion",
            "host_type": "publisher", "is_best": True, "pmh_id": None, "endpoint_id": None, "repository_institution":
            None, "oa_date": "2012-03-21", "updated": "2023-02-01T00:00:00"}


def orcid_summary(put_code: int, title: str, year: str, work_type: str, journal: str | None, doi: str,
                  source: str, display_index: str = "0", month: str | None = None) -> dict[str, Any]:
    """A v3.0 `work-summary` as one source recorded it."""
    return {
        "put-code": put_code, "created-date": {"value": 1500000000000}, "last-modified-date": {"value": 1600000000000},
        "source": {"source-orcid": None, "source-client-id": {"uri": "https://orcid.org/client/0000-0001-9884-1913",
                                                              "path": "0000-0001-9884-1913", "host": "orcid.org"},
                   "source-name": {"value": source}},
        "title": {"title": {"value": title}, "subtitle": None, "translated-title": None},
        "external-ids": {"external-id": [{"external-id-type": "doi", "external-id-value": doi,
                                          "external-id-normalized": {"value": doi.lower(), "transient": True},
                                          "external-id-url": {"value": f"https://doi.org/{doi}"},
                                          "external-id-relationship": "self"}] if doi else []},
        "url": None, "type": work_type,
        "publication-date": {"year": {"value": year}, "month": {"value": month} if month else None, "day": None},
        "journal-title": {"value": journal} if journal else None, "visibility": "public",
        "path": f"/0000-0002-1825-0097/work/{put_code}", "display-index": display_index,
    }


def orcid_double(orcid: str, given: str, family: str, groups: list[list[dict[str, Any]]]) -> dict[str, Reply]:
    """`/{iD}/person` and `/{iD}/works` (v3.0 JSON) for one record."""
    person: dict[str, Any] = {"last-modified-date": None, "name": {
        "created-date": {"value": 1460000000000}, "last-modified-date": {"value": 1460000000000},
        "given-names": {"value": given}, "family-name": {"value": family}, "credit-name": None,
        "source": None, "visibility": "public", "path": orcid}, "other-names": {"other-name": []},
        "biography": None, "path": f"/{orcid}/person"}
    works = {"last-modified-date": {"value": 1600000000000}, "group": [
        {"last-modified-date": {"value": 1600000000000},
         "external-ids": {"external-id": summaries[0]["external-ids"]["external-id"]}, "work-summary": summaries}
        for summaries in groups], "path": f"/{orcid}/works"}
    return {f"/{orcid}/person": Reply.json(person), f"/{orcid}/works": Reply.json(works)}


PLOS_DOI = "10.1371/journal.pone.0033693"
PLOS_ABSTRACT = ("Methylphenidate (MPH) is a psychostimulant that is widely prescribed to treat the symptoms of "
                 "attention deficit hyperactivity disorder and the drug is also used to enhance cognition.")
COMMA_TITLE = "Rivers, tides, and the timing of estuarine fisheries"
ORCID_ID = "0000-0002-1825-0097"  # ORCID's documented example iD (Josiah Carberry)


def sample_works() -> list[dict[str, Any]]:
    """The PLOS ONE paper, thirty near-namesakes by another Ada, and the paper with a comma in its title."""
    plos = openalex_work("W2028412931", PLOS_ONE_MESSAGE["title"][0], 2012,
                         [("A1", "Shankar Sadasivan"), ("A2", "Richard J. Smeyne")], ("S202381698", "PLoS ONE"),
                         doi=PLOS_DOI, abstract=PLOS_ABSTRACT, cited_by=67,
                         oa_pdf="https://journals.plos.org/plosone/article/file?id=10.1371/journal.pone.0033693")
    fillers = [openalex_work(f"W90{i:03d}", f"{COMMA_TITLE}: part {i + 1}", 2001 + i % 20,
                             [("A9", "Ada Lovelace-Byron")], ("S1", "Estuaries"), cited_by=100 + i) for i in range(30)]
    target = openalex_work("W777", COMMA_TITLE, 2017, [("A7", "Ada Lovelace")], ("S2", "Journal of Fish Biology"),
                           doi="10.1111/jfb.99999", abstract="Fisheries follow the tides.", cited_by=5,
                           biblio={"volume": "91", "issue": "2", "first_page": "301", "last_page": "318"})
    return [plos, *fillers, target]


COMMA_DOI = "10.1111/jfb.99999"
"""The DOI of the COMMA_TITLE paper (a JATS abstract; its title breaks OpenAlex's comma-split filter)."""


def comma_title_message(abstract: str, **fields: Any) -> dict[str, Any]:
    """The Crossref record of the COMMA_TITLE paper: the PLOS record recast, its JATS `abstract` and `fields`."""
    return {**copy.deepcopy(PLOS_ONE_MESSAGE), "DOI": COMMA_DOI, "title": [COMMA_TITLE], "abstract": abstract,
            **fields}


@contextmanager
def scholarly_servers(alex: OpenAlexDouble, crossref: dict[str, dict[str, Any]],
                      orcid_groups: list[list[dict[str, Any]]],
                      unpaywall: dict[str, dict[str, Any] | None] | None = None) -> Iterator[dict[str, LocalWebServer]]:
    """The doubles served on loopback: "openalex", "crossref", "orcid" (Josiah Carberry's record), "unpaywall"."""
    with ExitStack() as stack:
        def serve(routes: dict[str, Any]) -> LocalWebServer:
            return stack.enter_context(LocalWebServer(routes))
        yield {"openalex": serve(PrefixRoutes(alex.routes())),
               "crossref": serve(PrefixRoutes({"/works/": crossref_double(crossref)})),
               "unpaywall": serve(PrefixRoutes({"/v2/": unpaywall_double(unpaywall or {})})),
               "orcid": serve(orcid_double(ORCID_ID, "Josiah", "Carberry", orcid_groups))}
