"""Dates the model writes ('2023-06-30', 'June 2023', '2019') as UTC day bounds for archive and history APIs."""

from __future__ import annotations

import calendar
import re
from datetime import UTC, datetime
from typing import cast

from tools.core.errors import ToolFailure

_YEAR = re.compile(r"^\d{4}$")
_MONTH = re.compile(r"^(\d{4})-(\d{1,2})$")


def day_bound(text: str, end: bool, what: str = "date") -> datetime:
    """The first (or, with `end`, the last) second of the UTC day, month or year `text` names.

    A full timestamp ('2023-06-30T12:00:00Z') is taken as it is. ToolFailure when it is not a date.
    """
    value = (text or "").strip()
    if _YEAR.match(value):
        year = int(value)
        return datetime(year, 12, 31, 23, 59, 59, tzinfo=UTC) if end else datetime(year, 1, 1, tzinfo=UTC)
    month = _MONTH.match(value)
    if month:
        year, number = int(month.group(1)), int(month.group(2))
        if 1 <= number <= 12:
            last = calendar.monthrange(year, number)[1]
            return datetime(year, number, last, 23, 59, 59, tzinfo=UTC) if end \
                else datetime(year, number, 1, tzinfo=UTC)
    parsed = _parse(value, what)
    if "T" in value or ":" in value:
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    day = parsed.replace(tzinfo=UTC)
    return day.replace(hour=23, minute=59, second=59) if end else day.replace(hour=0, minute=0, second=0)


def _parse(value: str, what: str) -> datetime:
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        pass
    try:
        from dateutil import parser

        return cast(datetime, parser.parse(value, default=datetime(2000, 1, 1)))
    except (ImportError, ValueError, OverflowError):
        raise ToolFailure(f"{what} {value!r} is not a date. Write it as YYYY-MM-DD (e.g. 2022-06-30), YYYY-MM or YYYY.",
                          "bad_arguments") from None


def iso(moment: datetime) -> str:
    """'2023-06-30T23:59:59Z' (the form MediaWiki expects)."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
