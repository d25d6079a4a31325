"""Answer extraction over realistic model outputs: one table, each row also taken by its own rule alone."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from agent.answer import RULES, answer_from_messages, clean_answer, extract_answer, extract_final_answer

RULE = dict(RULES)

CASES = [
    # --- the FINAL ANSWER template -------------------------------------------------------------
    ("I computed the sum.\nFINAL ANSWER: 42", "42", "final_answer_marker"),
    ("final answer: Paris", "Paris", "final_answer_marker"),
    ("Final Answer: Paris", "Paris", "final_answer_marker"),
    ("**FINAL ANSWER:** 17", "17", "final_answer_marker"),
    ("**Final Answer**: 17", "17", "final_answer_marker"),
    ("**FINAL ANSWER: 17**", "17", "final_answer_marker"),
    ("FINAL ANSWER: [Saint Petersburg]", "Saint Petersburg", "final_answer_marker"),
    ('FINAL ANSWER: "Mercury"', "Mercury", "final_answer_marker"),
    ("FINAL ANSWER: 'Mercury'", "Mercury", "final_answer_marker"),
    ("FINAL ANSWER: “Mercury”", "Mercury", "final_answer_marker"),
    ("FINAL ANSWER: Mercury.", "Mercury", "final_answer_marker"),
    ("FINAL ANSWER: *Mercury*", "Mercury", "final_answer_marker"),
    ("FINAL ANSWER: `x = 3`", "x = 3", "final_answer_marker"),
    ("FINAL ANSWER: $\\boxed{12}$", "12", "final_answer_marker"),
    ("FINAL ANSWER: \\boxed{\\text{blue}}", "blue", "final_answer_marker"),
    ("FINAL ANSWER: 1,234,567", "1,234,567", "final_answer_marker"),  # commas are the scorer's (issue 11)
    ("FINAL ANSWER: 12,345.67", "12,345.67", "final_answer_marker"),
    ("FINAL ANSWER: 2, 3, 5", "2, 3, 5", "final_answer_marker"),
    ("FINAL ANSWER: 1,2,3", "1,2,3", "final_answer_marker"),
    ("FINAL ANSWER: apple, banana, cherry", "apple, banana, cherry", "final_answer_marker"),
    ("FINAL ANSWER: [1, 2, 3]", "1, 2, 3", "final_answer_marker"),
    ("FINAL ANSWER: The answer is 56", "56", "final_answer_marker"),
    ("FINAL ANSWER:\n\n  3.14159", "3.14159", "final_answer_marker"),
    ("### Final Answer\n\nRight", "Right", "final_answer_marker"),
    ("Step 1: FINAL ANSWER: 3 (draft)\nActually I was wrong.\nFINAL ANSWER: 4", "4", "final_answer_marker"),
    ("FINAL ANSWER: 7\n\nExplanation: there are seven days in a week.", "7", "final_answer_marker"),
    ("I must finish with FINAL ANSWER: [YOUR FINAL ANSWER].\n\nFINAL ANSWER: cat", "cat", "final_answer_marker"),
    ("FINAL ANSWER: -0.5", "-0.5", "final_answer_marker"),
    ("FINAL ANSWER: 3.", "3", "final_answer_marker"),
    ("FINAL ANSWER: ```\nb,e\n```", "b,e", "final_answer_marker"),
    ("FINAL ANSWER: **\"[Berlin]\"**", "Berlin", "final_answer_marker"),
    ("FINAL ANSWER: (a) and (b)", "(a) and (b)", "final_answer_marker"),
    ("FINAL ANSWER: Rd5", "Rd5", "final_answer_marker"),
    ("FINAL ANSWER: 0", "0", "final_answer_marker"),
    ("FINAL ANSWER - Tokyo", "Tokyo", "final_answer_marker"),
    ("The final answer is: 99", "99", "final_answer_marker"),
    ("<answer>FINAL ANSWER: 3</answer>", "3", "final_answer_marker"),
    ("FINAL ANSWER: <answer>Lima</answer>", "Lima", "final_answer_marker"),
    ("Final Answer: The final answer is $\\boxed{42}$", "42", "final_answer_marker"),
    ("FINAL ANSWER: $1,234.50", "$1,234.50", "final_answer_marker"),
    # --- reasoning blocks ------------------------------------------------------------------------
    ("<think>Maybe FINAL ANSWER: 5? No.</think>\nFINAL ANSWER: 6", "6", "final_answer_marker"),
    ("<think>FINAL ANSWER: 3</think>The answer is 4.", "4", "answer_is"),
    ("reasoning without an opening tag... FINAL ANSWER: 1</think>\nFINAL ANSWER: 2", "2", "final_answer_marker"),
    ("<thinking>long thoughts</thinking>FINAL ANSWER: egg", "egg", "final_answer_marker"),
    # --- fallbacks -------------------------------------------------------------------------------
    ('{"final_answer": "Canberra"}', "Canberra", "json"),
    ('```json\n{"answer": 12}\n```', "12", "json"),
    ('Here it is: {"reasoning": "...", "answer": "yes"}', "yes", "json"),
    ('{"answer": ["a", "b"]}', "a, b", "json"),
    ("Let me check.\nAnswer: 1987", "1987", "answer_label"),
    ("**Answer:** Oslo", "Oslo", "answer_label"),
    ("After searching, the answer is Jupiter. It is the largest planet.", "Jupiter", "answer_is"),
    ("So the correct answer is 3.5.", "3.5", "answer_is"),
    ("答案：北京", "北京", "chinese_label"),
    ("经过计算，最终答案是 42。", "42", "chinese_label"),
    ("We add them up.\nTherefore, the total is 1,500.", "1,500", "therefore"),
    ("Thus, 12", "12", "therefore"),
    ("Looking at the table:\n\n| x | y |\n\n**Wednesday**", "Wednesday", "last_line"),
    ("42", "42", "last_line"),
    # --- the forms of issue 11, each with its near miss ---------------------------------------------
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
    # --- each rule's plainest hit -----------------------------------------------------------------
    ("Some reasoning.\nFINAL ANSWER: 42", "42", "final_answer_marker"),
    ("final_answer: 5", "5", "final_answer_marker"),
    ("I am done.\nFINAL ANSWER:", "", "marker_without_answer"),
    ("[your final answer here]", "", "placeholder"),
    ("The total is therefore $\\boxed{1,250}$ dollars.", "1,250", "boxed"),
    ('["a", "b"]', "a, b", "json"),
    ('{"reasoning": "...", "answer": 12}', "12", "json"),
    ("Checked.\nAnswer: 1987", "1987", "answer_label"),
    ("After searching, the answer is Jupiter. It is big.", "Jupiter", "answer_is"),
    ("Looking at the table:\n\n**Wednesday**", "Wednesday", "last_line"),
    # --- nothing to extract -----------------------------------------------------------------------
    ("", "", "empty"),
    ("<think>only thinking, no answer</think>", "", "empty"),
]


@pytest.mark.parametrize(("text", "expected", "method"), CASES, ids=[f"case{i}" for i in range(len(CASES))])
def test_extraction(text: str, expected: str, method: str) -> None:
    assert extract_answer(text) == (expected, method)  # and no earlier rule takes it first
    assert extract_final_answer(text) == expected
    if method in RULE:
        assert RULE[method](text) == expected  # the rule on its own takes it too


def test_every_rule_answers_some_case() -> None:
    assert set(RULE) <= {method for _, _, method in CASES}


def test_at_least_forty_cases() -> None:
    assert len(CASES) >= 40


def test_none_is_treated_as_empty() -> None:
    assert extract_final_answer(None) == ""  # type: ignore[arg-type]


@pytest.mark.parametrize(("raw", "clean"), [
    ("  **42**  ", "42"), ("$1,000", "$1,000"), ("1,000,000 ", "1,000,000"), ("10,5", "10,5"),
    ("'a', 'b'", "'a', 'b'"), ("[x]", "x"), ("answer: y", "y"),
])
def test_clean_answer(raw: str, clean: str) -> None:
    assert clean_answer(raw) == clean


def test_answer_from_messages_reads_the_last_assistant_text() -> None:
    messages = [HumanMessage(content="q"), AIMessage(content="FINAL ANSWER: 1"),
                ToolMessage(content="FINAL ANSWER: tool text", tool_call_id="c1"),
                AIMessage(content=[{"type": "text", "text": "FINAL ANSWER: 2"}]),
                AIMessage(content="", tool_calls=[{"name": "x", "args": {}, "id": "c2"}])]
    assert answer_from_messages(messages) == ("2", "final_answer_marker", "FINAL ANSWER: 2")


def test_answer_from_messages_without_assistant_text() -> None:
    assert answer_from_messages([HumanMessage(content="q")]) == ("", "empty", "")


def test_titles_starting_with_is_are_kept() -> None:
    assert extract_final_answer("FINAL ANSWER: Is This It") == "Is This It"
