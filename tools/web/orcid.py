"""An ORCID record through the public API v3.0: the person's name and their works.

ORCID's quirk handled here: `/works` answers `group`s, one per work, each holding one
`work-summary` per source that claimed it (the publisher, Crossref, the person): a work is a group,
so counting summaries would count duplicates. The summary shown is the group's preferred one (the
highest `display-index`, which the person's chosen source carries; else the first listed).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from tools.core.errors import ToolFailure
from tools.web.service import NotFound, Service

_ORCID = re.compile(r"(\d{4})-?(\d{4})-?(\d{4})-?(\d{3}[\dX])", re.IGNORECASE)


@dataclass(frozen=True)
class OrcidWork:
    """One work (an ORCID group) as its preferred summary gives it."""

    title: str
    type: str
    year: str
    journal: str
    doi: str
    date: str


def normalise_orcid(value: str) -> str:
    """'https://orcid.org/0000-0002-1825-0097' or '0000000218250097' -> '0000-0002-1825-0097'.

    ToolFailure if not an iD.
    """
    found = _ORCID.search((value or "").strip())
    if not found:
        raise ToolFailure(f"{value!r} is not an ORCID iD. Pass 16 digits like 0000-0002-1825-0097 or the "
                          "https://orcid.org/… URL; to find someone's iD, web_search their name with 'ORCID'.",
                          "bad_arguments")
    orcid = "-".join(found.groups()).upper()
    if _check_digit(orcid.replace("-", "")[:15]) != orcid[-1]:
        raise ToolFailure(f"{orcid} is not a valid ORCID iD (its check digit is wrong). Check the digits.",
                          "bad_arguments")
    return orcid


def _check_digit(base: str) -> str:
    """ISO 7064 11,2, as ORCID computes its last character."""
    total = 0
    for ch in base:
        total = (total + int(ch)) * 2
    result = (12 - total % 11) % 11
    return "X" if result == 10 else str(result)


def _value(node: Any, *path: str) -> str:
    for key in path:
        node = node.get(key) if isinstance(node, dict) else None
    return str(node) if node not in (None, "") else ""


def parse_name(person: dict[str, Any]) -> str:
    """The credit name, else given + family names, from a `/person` answer."""
    name = person.get("name") or {}
    credit = _value(name, "credit-name", "value")
    if credit:
        return credit
    return " ".join(p for p in (_value(name, "given-names", "value"), _value(name, "family-name", "value")) if p)


def parse_works(body: dict[str, Any]) -> list[OrcidWork]:
    """One OrcidWork per group of a `/works` answer, newest first."""
    works = []
    for group in body.get("group") or []:
        summaries = sorted(group.get("work-summary") or [], key=lambda s: int(s.get("display-index") or 0),
                           reverse=True)
        if not summaries:
            continue
        summary = summaries[0]
        ids = (group.get("external-ids") or {}).get("external-id") or \
            (summary.get("external-ids") or {}).get("external-id") or []
        doi = next((i.get("external-id-value") or "" for i in ids if i.get("external-id-type") == "doi"), "")
        date = summary.get("publication-date") or {}
        parts = [_value(date, "year", "value"), _value(date, "month", "value"), _value(date, "day", "value")]
        works.append(OrcidWork(title=_value(summary, "title", "title", "value"), type=summary.get("type") or "",
                               year=parts[0], journal=_value(summary, "journal-title", "value"), doi=doi.lower(),
                               date="-".join(p for p in parts if p)))
    return sorted(works, key=lambda w: w.date or "0", reverse=True)


class Orcid:
    """`/{iD}/person` and `/{iD}/works` on the public API."""

    def __init__(self, service: Service) -> None:
        self.service = service

    def record(self, orcid: str) -> tuple[str, list[OrcidWork]]:
        """The person's name and works; ToolFailure when the iD has no public record."""
        try:
            person = self.service.get_json(f"{orcid}/person")
            works = self.service.get_json(f"{orcid}/works")
        except NotFound:
            raise ToolFailure(f"ORCID has no public record for {orcid}. Check the iD (web_search the person's name "
                              "with 'ORCID').", "not_found") from None
        return parse_name(person if isinstance(person, dict) else {}), parse_works(works if isinstance(works, dict)
                                                                                  else {})
