"""The prompts: GAIA's official system prompt verbatim, and the task message layout."""

from __future__ import annotations

from agent.prompts import GAIA_SYSTEM_PROMPT, SYSTEM_PROMPT, task_message

GAIA_PAPER = (
    "You are a general AI assistant. I will ask you a question. Report your thoughts, and finish your answer with "
    "the following template: FINAL ANSWER: [YOUR FINAL ANSWER]. YOUR FINAL ANSWER should be a number OR as few "
    "words as possible OR a comma separated list of numbers and/or strings. If you are asked for a number, don't "
    "use comma to write your number neither use units such as $ or percent sign unless specified otherwise. If you "
    "are asked for a string, don't use articles, neither abbreviations (e.g. for cities), and write the digits in "
    "plain text unless specified otherwise. If you are asked for a comma separated list, apply the above rules "
    "depending of whether the element to be put in the list is a number or a string."
)


def test_system_prompt_is_the_papers_verbatim() -> None:
    assert GAIA_SYSTEM_PROMPT == GAIA_PAPER
    assert SYSTEM_PROMPT.startswith(GAIA_PAPER + "\n\n")
    assert "tool" in SYSTEM_PROMPT[len(GAIA_PAPER):] and "absolute path" in SYSTEM_PROMPT


def test_task_message_layout() -> None:
    assert task_message("  What?  ") == "What?"
    text = task_message("What?", "The task comes with the file /a/b.pdf.", "Similar: x -> y")
    question, attachment, context = text.split("\n\n", 2)
    assert question == "What?"
    assert attachment == "Attachment: The task comes with the file /a/b.pdf."
    assert context.startswith("Possibly related material") and context.endswith("Similar: x -> y")
