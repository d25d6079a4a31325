"""Attempts and vote (ATTEMPTS / `--attempts K`): each task solved K times independently, one answer by majority.

The task loop (`evaluation.task_loop`) calls `solve_attempts` around the whole strategy, never inside
the graph. The RAG short-circuit answers once: a stored answer would only repeat itself. The vote is
over the scorer's normalised answers (`vote_key`: a number by value, a list element by element, a
string without case, spaces and punctuation), ties going to the earliest attempt. The record keeps
every attempt's answer (`attempts`), whether the first was right (`pass_at_1`) and whether any was
(`pass_at_k`); its tokens and cost are summed over every attempt, so the batch's cost cap counts them.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence

from agent.events import Solution
from evaluation.dataset import Sample
from evaluation.records import TaskRecord
from evaluation.scorer import Scorer, normalize_number_str, normalize_str, split_string

Attempt = list[Solution]
"""One independent attempt: its solve and the retries of a failed solve."""


def vote_key(answer: str) -> str:
    """The answer as the scorer normalises it, so '$1,234' and '1234' (or 'Paris.' and 'paris') vote together."""
    number = normalize_number_str(answer)
    if math.isfinite(number):
        return repr(number)
    if any(sep in answer for sep in ",;"):
        parts = [normalize_number_str(p) for p in split_string(answer)]
        return " | ".join(repr(n) if math.isfinite(n) else normalize_str(p, remove_punct=False)
                          for n, p in zip(parts, split_string(answer), strict=True))
    return normalize_str(answer)


def majority(answers: Sequence[str]) -> int:
    """Index of the chosen answer: the most common vote key, ties to the earliest; empty answers vote last."""
    keys = [vote_key(a) if a.strip() else "" for a in answers]
    counts = Counter(k for k in keys if k)
    if not counts:
        return 0
    best = max(counts.values())
    return next(i for i, k in enumerate(keys) if k and counts[k] == best)


def solve_attempts(solve_once: Callable[[], Attempt | None], k: int) -> list[Attempt] | None:
    """Up to `k` attempts (one when the RAG short-circuit answered); None when a stop cut the first short.

    An attempt a stop cut short after the first is left out: the vote is over the finished ones.
    """
    attempts: list[Attempt] = []
    for _ in range(k):
        attempt = solve_once()
        if attempt is None:
            break
        attempts.append(attempt)
        if attempt[-1].source == "rag":
            break
    return attempts or None


def fold_attempts(record: TaskRecord, sample: Sample, attempts: list[Attempt], chosen: int,
                  scorer: Scorer) -> TaskRecord:
    """`record` (built from the chosen attempt) with every attempt's answers, cost and pass@1 / pass@K."""
    every = [s for attempt in attempts for s in attempt]
    record.prompt_tokens = sum(s.prompt_tokens for s in every)
    record.completion_tokens = sum(s.completion_tokens for s in every)
    record.cost_usd = round(sum(s.cost_usd for s in every), 8)
    record.retries = sum(s.retries for s in every)
    record.tries = len(every)
    record.attempts = [attempt[-1].answer or "" for attempt in attempts]
    if sample.has_answer:
        right = [scorer(answer, sample.final_answer).correct for answer in record.attempts]
        record.pass_at_1, record.pass_at_k = right[0], any(right)
    return record
