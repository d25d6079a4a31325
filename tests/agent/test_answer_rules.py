"""Each extraction rule on its own (what it takes and what it refuses), and the forms of issue 11."""

from __future__ import annotations

import pytest

from agent.answer import RULES, extract_answer
from evaluation.scorer import question_scorer

RULE = dict(RULES)

# (rule, message it answers, its answer)
HITS = [
    ("final_answer_marker", "Some reasoning.\nFINAL ANSWER: 42", "42"),
    ("final_answer_marker", "final_answer: 5", "5"),
    ("marker_without_answer", "I am done.\nFINAL ANSWER:", ""),
    ("marker_without_answer", "FINAL ANSWER: [YOUR FINAL ANSWER]", ""),
    ("placeholder", "<YOUR FINAL ANSWER>", ""),
    ("placeholder", "[your final answer here]", ""),
    ("boxed", "The total is therefore $\\boxed{1,250}$ dollars.", "1,250"),
    ("json", '["a", "b"]', "a, b"),
    ("json", '{"reasoning": "...", "answer": 12}', "12"),
    ("answer_label", "Checked.\nAnswer: 1987", "1987"),
    ("answer_is", "After searching, the answer is Jupiter. It is big.", "Jupiter"),
    ("chinese_label", "答案：北京", "北京"),
    ("therefore", "Thus, 12", "12"),
    ("last_line", "Looking at the table:\n\n**Wednesday**", "Wednesday"),
]

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


def test_every_rule_has_a_hit_and_a_refusal():
    assert {r for r, _, _ in HITS} == set(RULE) == {r for r, _ in REFUSALS}


@pytest.mark.parametrize(("rule", "text", "answer"), HITS)
def test_rule_hits(rule, text, answer):
    assert RULE[rule](text) == answer
    assert extract_answer(text) == (answer, rule)  # and no earlier rule takes it first


@pytest.mark.parametrize(("rule", "text"), REFUSALS)
def test_rule_refusals(rule, text):
    assert RULE[rule](text) is None


# --- the forms of issue 11: (message, answer, method), each with its near miss --------------------------
FORMS = [
    # \boxed{} inside a sentence; a box in the reasoning does not beat a marker.
    ("So the sum is $\\boxed{42}$ in total.", "42", "boxed"),
    ("First \\boxed{3} looked right.\nFINAL ANSWER: 4", "4", "final_answer_marker"),
    # the template echoed after (or before) the real answer: the placeholder never wins
    ("FINAL ANSWER: 12\n\nAs the template says: FINAL ANSWER: [YOUR FINAL ANSWER])", "12", "final_answer_marker"),
    ("Use the form FINAL ANSWER: <YOUR FINAL ANSWER>\nFINAL ANSWER: 12", "12", "final_answer_marker"),
    ("FINAL ANSWER: 12 (as the template asks: FINAL ANSWER: [YOUR FINAL ANSWER])", "12", "final_answer_marker"),
    # numbers without spaces stay a list; a thousands separator stays for the scorer
    ("FINAL ANSWER: 100,200,300", "100,200,300", "final_answer_marker"),
    ("FINAL ANSWER: 1,234", "1,234", "final_answer_marker"),
    # abbreviation periods stay inside lists and names; a sentence's period still goes
    ("FINAL ANSWER: U.S.A., U.K.", "U.S.A., U.K.", "final_answer_marker"),
    ("FINAL ANSWER: Washington, D.C.", "Washington, D.C.", "final_answer_marker"),
    ("FINAL ANSWER: Paris, Rome.", "Paris, Rome", "final_answer_marker"),
    ("FINAL ANSWER: Mercury.", "Mercury", "final_answer_marker"),
    # markdown emphasis around the marker and the answer
    ("_FINAL ANSWER:_ _42_", "42", "final_answer_marker"),
    ("**FINAL ANSWER:** **42**", "42", "final_answer_marker"),
    ("FINAL ANSWER: *a* and *b*", "*a* and *b*", "final_answer_marker"),
    # a bulleted or numbered list after the marker is the comma-separated list; a list after an answer is not
    ("FINAL ANSWER:\n1. Apple\n2. Banana\n3. Cherry", "Apple, Banana, Cherry", "final_answer_marker"),
    ("FINAL ANSWER:\n- Paris\n- **Rome**\n\nBoth are capitals.", "Paris, Rome", "final_answer_marker"),
    ("FINAL ANSWER: 3\n\n1. first step\n2. second step", "3", "final_answer_marker"),
    # a JSON array: its items, without quotes
    ('FINAL ANSWER: ["a", "b"]', "a, b", "final_answer_marker"),
    ('FINAL ANSWER: [1.50, -2]', "1.50, -2", "final_answer_marker"),
    ("FINAL ANSWER: 'a', 'b'", "'a', 'b'", "final_answer_marker"),
    # the placeholder alone, or an empty marker: an empty answer, and the method says so
    ("<YOUR FINAL ANSWER>", "", "placeholder"),
    ("FINAL ANSWER:", "", "marker_without_answer"),
    ("FINAL ANSWER: [YOUR FINAL ANSWER]", "", "marker_without_answer"),
    ("FINAL ANSWER: Your Song", "Your Song", "final_answer_marker"),
    # the marker is never matched inside another word
    ("Quiz semifinal answer: Spain", "Quiz semifinal answer: Spain", "last_line"),
    # signs are the scorer's too; a tool call written as text is no answer
    ("FINAL ANSWER: -5", "-5", "final_answer_marker"),
    ("### Final Answer\n\n-3", "-3", "final_answer_marker"),
    ('{"path": "file.pdf"}', "", "empty"),
    ('<tool_call>{"name": "read_file", "arguments": {"path": "a.pdf"}}</tool_call>', "", "empty"),
    ("So the ratio is $\\boxed{\\frac{1}{2}}$.", "1/2", "boxed"),
]


@pytest.mark.parametrize(("text", "answer", "method"), FORMS)
def test_issue_forms(text, answer, method):
    assert extract_answer(text) == (answer, method)


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
