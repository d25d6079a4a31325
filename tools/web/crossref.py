"""Crossref (a DOI's metadata) and Unpaywall (its open-access copy).

Crossref's quirks handled here: `title` and `container-title` are lists, dates are `date-parts`
([[2012, 3, 21]], month and day optional), author ORCIDs are `http://orcid.org/…` URLs, and the
abstract (present in a minority of records) is JATS XML (`<jats:p>`, `<jats:italic>`) whose tags are
stripped. Unpaywall needs an email (UNPAYWALL_EMAIL); its `best_oa_location` names the PDF and landing page.
"""

from __future__ import annotations

import html
import re
from typing import Any
from urllib.parse import quote

from tools.web.openalex import Author, Work, bare_doi
from tools.web.service import NotFound, Service

_TAG = re.compile(r"<[^>]+>")
_TITLE = re.compile(r"^\s*<jats:title>\s*abstract\s*</jats:title>", re.IGNORECASE)


def strip_jats(text: str) -> str:
    """Plain text of a JATS abstract: a leading 'Abstract' heading dropped, paragraphs kept apart, entities decoded."""
    body = _TITLE.sub("", text or "")
    body = re.sub(r"</jats:(?:p|sec|title)>", "\n", body)
    plain = html.unescape(_TAG.sub("", body))
    return "\n".join(" ".join(line.split()) for line in plain.splitlines() if line.strip())


def date_text(field: dict[str, Any] | None) -> str:
    """'2012-03-21', '2012-03' or '2012' from a Crossref date (`date-parts`)."""
    parts = ((field or {}).get("date-parts") or [[]])[0] or []
    if not parts or parts[0] is None:
        return ""
    return "-".join([str(parts[0])] + [f"{int(p):02d}" for p in parts[1:3] if p is not None])


def parse_message(message: dict[str, Any]) -> Work:
    """A Work from a Crossref `message` (one work)."""
    published = next((date_text(message.get(k)) for k in ("published", "published-print", "published-online",
                                                           "issued") if date_text(message.get(k))), "")
    authors = []
    for person in message.get("author") or []:
        name = " ".join(p for p in (person.get("given"), person.get("family")) if p) or person.get("name") or ""
        orcid = (person.get("ORCID") or "").replace("http://", "https://")
        authors.append(Author(name, orcid))
    licenses = message.get("license") or []
    return Work(
        title=" ".join((message.get("title") or [""])[0].split()), authors=authors,
        year=int(published[:4]) if published[:4].isdigit() else None, published=published,
        venue=(message.get("container-title") or [""])[0], volume=message.get("volume") or "",
        issue=message.get("issue") or "", pages=(message.get("page") or "").replace("-", "–"),
        doi=bare_doi(message.get("DOI") or ""), cited_by=message.get("is-referenced-by-count"),
        type=message.get("type") or "", abstract=strip_jats(message.get("abstract") or ""),
        references=message.get("references-count", message.get("reference-count")),
        license=licenses[0].get("URL", "") if licenses else "")


class Crossref:
    """`/works/{doi}` on the Crossref REST API."""

    def __init__(self, service: Service) -> None:
        self.service = service

    def work(self, doi: str) -> Work | None:
        """The work registered under `doi`, or None when Crossref does not know it."""
        try:
            body = self.service.get_json(f"works/{quote(bare_doi(doi), safe='/')}")
        except NotFound:
            return None
        message = body.get("message") if isinstance(body, dict) else None
        if not isinstance(message, dict):
            raise self.service.failure("answered without a `message`", "http_error")
        return parse_message(message)


class Unpaywall:
    """`/v2/{doi}?email=…` on the Unpaywall API: the best open-access copy of a DOI."""

    def __init__(self, service: Service, email: str) -> None:
        self.service, self.email = service, email

    def best_copy(self, doi: str) -> tuple[str, str, str] | None:
        """(PDF URL, landing page URL, license) of the best open-access copy; None when there is none."""
        try:
            body = self.service.get_json(f"v2/{quote(bare_doi(doi), safe='/')}", {"email": self.email})
        except NotFound:
            return None
        best = (body or {}).get("best_oa_location") if isinstance(body, dict) else None
        if not best:
            return None
        return (best.get("url_for_pdf") or "", best.get("url_for_landing_page") or best.get("url") or "",
                best.get("license") or "")
