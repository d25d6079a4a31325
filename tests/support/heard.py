"""Tolerant matching of what a small model produced (Whisper tiny.en, tesseract), for tests on any CPU.

The models' int8/SIMD kernels differ between CPUs, so the same clip can come back as "the lazy dog"
on one machine and "the lazy nog" on another. A test holds the tool to what it guarantees (text of
roughly the right words, in the right place), never to a model's exact output:

    assert_heard(transcript, SPEECH_WORDS, at_least=5)

A word counts as heard when the text has it within a small edit distance (one edit for short words,
two from eight letters on); `at_least` leaves room for words a model misses on some machine.
"""

from __future__ import annotations

import re
from collections.abc import Iterable


def _distance(a: str, b: str) -> int:
    """Levenshtein distance between `a` and `b`."""
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


def tokens(text: str) -> list[str]:
    """The lowercased words and numbers of `text`."""
    return re.findall(r"[a-z0-9]+", text.lower())


def near(word: str, text_tokens: Iterable[str]) -> bool:
    """True when one of `text_tokens` is `word` or a near spelling of it."""
    word = word.lower()
    allowed = 1 if len(word) < 8 else 2
    return any(_distance(word, token) <= allowed for token in text_tokens)


def heard(text: str, words: Iterable[str]) -> list[str]:
    """The `words` that `text` contains (each word or a near spelling of it)."""
    found = tokens(text)
    return [word for word in words if near(word, found)]


def assert_heard(text: str, words: Iterable[str], at_least: int) -> None:
    """Fail unless `text` contains at least `at_least` of `words` (near spellings count)."""
    expected = list(words)
    got = heard(text, expected)
    assert len(got) >= at_least, f"heard {len(got)} of {expected} (needed {at_least}): {got} in {text!r}"
