"""What find_in_page searches: the text a reader sees (link targets left out) and the query as a pattern.

A page's markdown keeps links as `[text](URL)` so the model can follow them, but a reader searching
for "Wellington" wants the places the word is read, not the `/wiki/Wellington_…` targets; and a
phrase that spans a link ("the [Grey-headed Lapwing](…) was seen") must still match. `visible_text`
drops the targets and keeps, for every visible character, its offset in the original text, so a
match still names the right page.
"""

from __future__ import annotations

import re

_LINK = re.compile(r"(!?)\[((?:[^\[\]]|\[[^\]]*\])*)\]\(\s*(?:<[^>]*>|[^()\s]*(?:\([^()\s]*\)[^()\s]*)*)"
                   r"(?:\s+\"[^\"]*\")?\s*\)")
_DASHES = "-\u2010\u2011\u2012\u2013\u2014"


def visible_text(text: str) -> tuple[str, list[int]]:
    """(text with every markdown link reduced to its text, offset in `text` of each character kept)."""
    parts: list[str] = []
    offsets: list[int] = []
    position = 0
    for match in _LINK.finditer(text):
        parts.append(text[position:match.start()])
        offsets.extend(range(position, match.start()))
        label_start = match.start(2)
        label = match.group(2)
        parts.append(label)
        offsets.extend(range(label_start, label_start + len(label)))
        position = match.end()
    parts.append(text[position:])
    offsets.extend(range(position, len(text)))
    return "".join(parts), offsets


def query_pattern(query: str) -> tuple[re.Pattern[str] | None, list[str]]:
    """The query as a case-insensitive phrase pattern and its words (None when it has no words).

    Words the query separates by spaces match across any whitespace; parts it joins ("Grey-headed",
    "U.S.") match joined, a hyphen also as any dash, with optional spaces around it.
    """
    tokens = list(re.finditer(r"\w+|[^\w\s]+", query or ""))
    if not tokens:
        return None, []
    pieces = []
    for index, token in enumerate(tokens):
        if index:
            joined = tokens[index - 1].end() == token.start()
            pieces.append(r"\s*" if joined else r"\s+")
        word = token.group(0)
        pieces.append(f"[{re.escape(_DASHES)}]" if set(word) <= set(_DASHES) else re.escape(word))
    return re.compile("".join(pieces), re.IGNORECASE), [t.group(0) for t in tokens]
