"""What each extraction rule refuses (its hits are rows of tests/agent/test_answer.py), and the forms of issue 11."""

from __future__ import annotations

import pytest

from agent.answer import RULES, extract_answer
from evaluation.scorer import question_scorer

RULE = dict(RULES)

# (rule, message it must leave to the next rules)
REFUSALS = [
    ("final_answer_marker", "The semifinal answer: Spain"),
    ("final_answer_marker", "FINAL ANSWER: <YOUR FINAL ANSWER>"),
    ("final_answer_marker", "FINAL ANSWER:"),
    ("marker_without_answer", "The answer is 4."),
    ("marker_without_answer", "The semifinal answer: Spain"),
    ("placeholder", "Your answer was right: 4"),
    ("placeholder", "Answer"),
    ("boxed", "No box in this line: 4"),
    ("boxed", "The box is empty: \\boxed{}"),
    ("json", '{"path": "file.pdf"}'),
    ("json", "[not json"),
    ("answer_label", "The answers vary: 3 or 4"),
    ("answer_is", "Answers differ by source."),
    ("chinese_label", "北京"),
    ("therefore", "Thus 12"),
    ("last_line", '{"path": "file.pdf"}'),
    ("last_line", '<tool_call>{"name": "x", "arguments": {}}</tool_call>'),
    ("last_line", "---"),
]


def test_every_rule_has_a_refusal():
    assert {r for r, _ in REFUSALS} == set(RULE)


@pytest.mark.parametrize(("rule", "text"), REFUSALS)
def test_rule_refusals(rule, text):
    assert RULE[rule](text) is None


# --- the forms of issue 11 (extracted in tests/agent/test_answer.py's table) now score right -------------
@pytest.mark.parametrize(("text", "truth"), [
    ("FINAL ANSWER: 100,200,300", "100, 200, 300"),
    ("FINAL ANSWER: U.S.A., U.K.", "U.S.A., U.K."),
    ("FINAL ANSWER: Washington, D.C.", "Washington, D.C."),
    ("FINAL ANSWER:\n1. Apple\n2. Banana", "Apple, Banana"),
    ('FINAL ANSWER: ["a", "b"]', "a, b"),
    ("The answer, once boxed, is $\\boxed{17}$ here.", "17"),
    ("FINAL ANSWER: 12\nRemember: FINAL ANSWER: [YOUR FINAL ANSWER])", "12"),
    ("**FINAL ANSWER:** **42**", "42"),
])
def test_the_issue_forms_now_score_right(text, truth):
    assert question_scorer(extract_answer(text)[0], truth)
