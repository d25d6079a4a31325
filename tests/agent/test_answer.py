"""Answer extraction over realistic model outputs."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from agent.answer import answer_from_messages, clean_answer, extract_answer, extract_final_answer

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
    ("", "", "empty"),
    ("<think>only thinking, no answer</think>", "", "empty"),
]


@pytest.mark.parametrize(("text", "expected", "method"), CASES, ids=[f"case{i}" for i in range(len(CASES))])
def test_extraction(text: str, expected: str, method: str) -> None:
    assert extract_answer(text) == (expected, method)
    assert extract_final_answer(text) == expected


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
