"""Did a reformatted answer keep the draft's facts? A deterministic test, never the model's word.

The answer checker (`agent.answer_check`) may change only the FORM of a draft: thousands separators,
`$` / `%`, a unit after a number, leading articles (lower-case: a capitalised one opens a title) and
filler ("The answer is"), list separators
(`;` or "and" for `,`), number words for digits (and digits for words only when the question asks
for words). `same_facts(draft, proposal, question)` compares both as token sequences per list element:
numbers by value, words lower-cased, punctuation ignored. The proposal must be the draft's tokens
minus droppable ones, in order; any other number, word or element is a changed fact.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
_TOKEN = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)*(?:[eE][-+]?\d+)?(?!\w)|\w+")
_ONES = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
         "sixteen seventeen eighteen nineteen").split()
_TENS = "twenty thirty forty fifty sixty seventy eighty ninety".split()
_NUMBER_WORDS = {w: i for i, w in enumerate(_ONES)} | {w: 10 * i for i, w in enumerate(_TENS, 2)}
_SCALES = {"hundred": 100, "thousand": 1_000, "million": 1_000_000, "billion": 1_000_000_000}
_ARTICLES = frozenset({"the", "a", "an"})
_FILLER = frozenset({"the", "a", "an", "final", "answer", "is", "it", "was", "approximately", "about", "around",
                     "roughly", "exactly", "total", "of", "result"})
"""Words a draft may open with that are no part of the answer ("The answer is", "approximately")."""
ASKS_FOR_WORDS = re.compile(r"\b(?:in words|spell(?:ed|ing)? (?:it )?out|written out|in letters|as a word)\b", re.I)
"""A question that asks for a number written in words."""


@dataclass(frozen=True)
class _Token:
    """One word (lower-cased) or number (by value) of an answer element."""

    text: str
    number: float | None = None
    spelled: bool = False
    capital: bool = False
    """Written with a capital first letter ("A Nightmare on Elm Street": the article is part of a title)."""
    """A number written in words."""

    def same(self, other: _Token) -> bool:
        if self.number is not None or other.number is not None:
            return self.number == other.number
        return self.text == other.text


def _spelled_number(element: str) -> float | None:
    """The value of an element that is wholly number words ("twenty-one", "one hundred and five"), else None."""
    words = [w for w in re.split(r"[\s-]+", element.strip().lower()) if w and w != "and"]
    if not words or any(w not in _NUMBER_WORDS and w not in _SCALES for w in words):
        return None
    total, current = 0, 0
    for word in words:
        if word in _NUMBER_WORDS:
            current += _NUMBER_WORDS[word]
        elif word == "hundred":
            current = max(current, 1) * 100
        else:
            total, current = total + max(current, 1) * _SCALES[word], 0
    return float(total + current)


def _tokens(element: str) -> list[_Token]:
    spelled = _spelled_number(element)
    if spelled is not None:
        return [_Token(element.strip().lower(), spelled, spelled=True)]
    out = []
    for match in _TOKEN.finditer(element):
        text = match.group(0).lower()
        try:
            out.append(_Token(text, float(text)))
        except ValueError:  # a word, or a dotted code such as 3.1.3.1
            out.append(_Token(text, capital=match.group(0)[0].isupper()))
    return out


def elements(answer: str, *, split_and: bool = False) -> list[list[_Token]]:
    """The answer's list elements (split on `,` `;`, and on "and" / "&" when asked), each as tokens."""
    text = _THOUSANDS.sub("", answer)
    pattern = r"[,;]|\band\b|&" if split_and else r"[,;]"
    parts = [p for p in re.split(pattern, text) if p.strip()]
    return [_tokens(p) for p in parts]


def _droppable(draft: list[_Token], proposal: list[_Token], first: bool) -> list[bool]:
    """Which draft tokens may go: opening filler or a leading article, and units after a number (numbers kept)."""
    drop = [False] * len(draft)
    lead = _FILLER if first else _ARTICLES
    run = 0
    while run < len(draft) and draft[run].number is None and draft[run].text in lead:
        run += 1
    # A lone capitalised article opens a title ("A Nightmare on Elm Street", "The Hague"): it stays.
    if not (run == 1 and draft[0].capital and draft[0].text in _ARTICLES):
        drop[:run] = [True] * run
    if proposal and all(t.number is not None for t in proposal):
        after_number = False
        for i, tok in enumerate(draft):
            if tok.number is not None:
                after_number = True
            elif after_number:
                drop[i] = True
    return drop


def _compare(draft: list[_Token], proposal: list[_Token], first: bool) -> str | None:
    """None when `proposal` is `draft` minus droppable tokens, in order; else what changed."""
    drop = _droppable(draft, proposal, first)
    j = 0
    for tok, may_go in zip(draft, drop, strict=True):
        if j < len(proposal) and tok.same(proposal[j]):
            j += 1
        elif not may_go:
            got = proposal[j].text if j < len(proposal) else "nothing"
            return f"{tok.text!r} became {got!r}"
    if j < len(proposal):
        return f"{proposal[j].text!r} was added"
    return None


def same_facts(draft: str, proposal: str, question: str = "") -> tuple[bool, str]:
    """(True, what changed in form) when `proposal` states the draft's facts; (False, the changed fact) otherwise."""
    if not proposal.strip():
        return False, "changes a fact: the answer became empty"
    if proposal.strip() == draft.strip():
        return True, "unchanged"
    after = elements(proposal)
    before = elements(draft)
    if len(before) != len(after):
        before = elements(draft, split_and=True)  # "a and b" -> "a, b" is a list separator
    if len(before) != len(after):
        return False, f"changes a fact: {len(before)} list element(s) became {len(after)}"
    for index, (b, a) in enumerate(zip(before, after, strict=True)):
        changed = _compare(b, a, first=index == 0)
        if changed is not None:
            return False, f"changes a fact: {changed}"
        spelled_now = sum(t.spelled for t in a) > sum(t.spelled for t in b)
        if spelled_now and not ASKS_FOR_WORDS.search(question):
            return False, "digits written as words, which the question does not ask for"
    return True, "form only"
