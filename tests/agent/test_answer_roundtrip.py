"""Round trip: every scorer test case's answer, wrapped in realistic final messages, extracts to the same verdict.

For each `(answer, truth, verdict)` of the scorer's tests (`tests/support/scorer_cases.py`) and each
of the final-message shapes below, `question_scorer(extract_final_answer(shape(answer)), truth)` must
equal `verdict`: extraction never turns a right answer wrong, nor a wrong one right. A None answer is
written as the text "None" (which is how the official scorer reads None). Answers that span lines
are left out: a message cannot tell a two-line answer from an answer followed by an explanation.
"""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from agent.answer import extract_final_answer
from evaluation.scorer import question_scorer
from tests.support.scorer_cases import SCORER_CASES

SHAPES: dict[str, Callable[[str], str]] = {
    "bare": lambda a: f"FINAL ANSWER: {a}",
    "after_reasoning": lambda a: f"I searched two sources and they agree.\n\nFINAL ANSWER: {a}",
    "bold_marker": lambda a: f"**FINAL ANSWER:** {a}",
    "bold_answer": lambda a: f"FINAL ANSWER: **{a}**",
    "thinking": lambda a: f"<think>Maybe the answer is 3? Let me check again.</think>\nFINAL ANSWER: {a}",
    "explanation_after": lambda a: f"FINAL ANSWER: {a}\n\nExplanation: I checked this against the source.",
    "template_echo": lambda a: f"FINAL ANSWER: {a}\n\n(Formatted as asked: FINAL ANSWER: [YOUR FINAL ANSWER])",
    "heading": lambda a: f"### Final Answer\n\n{a}",
    "boxed_sentence": lambda a: f"The result is therefore $\\boxed{{{a}}}$.",
    "json": lambda a: f'```json\n{{"final_answer": {json.dumps(a)}}}\n```',
}

CASES = [("None" if answer is None else answer, truth, verdict) for answer, truth, verdict in SCORER_CASES
         if answer is None or "\n" not in answer.strip()]


def test_the_round_trip_covers_the_scorer_table():
    assert len(SHAPES) == 10
    assert len(CASES) >= len(SCORER_CASES) - 1 and len(CASES) > 100


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_every_scorer_case_keeps_its_verdict_through_extraction(shape):
    wrap = SHAPES[shape]
    changed = [(answer, truth, verdict, extract_final_answer(wrap(answer))) for answer, truth, verdict in CASES
               if question_scorer(extract_final_answer(wrap(answer)), truth) is not verdict]
    assert not changed, f"{len(changed)}/{len(CASES)} verdicts changed in shape {shape!r}: {changed[:10]}"
