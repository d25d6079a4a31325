"""The answer check: after extraction, one tool-less request fixes the draft's FORM to GAIA's rules.

For every strategy the pipeline hands the extracted draft here (`checked`). The answer-checker role gets
only the question, the draft and GAIA's format rules, and replies `FINAL ANSWER: ...`. Its proposal is
accepted only when `agent.answer_facts.same_facts` finds the draft's facts in it (numbers by value, words
in order); otherwise the draft is kept. A failed request keeps the draft too. Each check is one
`AnswerCheck` trace event (before, after, accepted, reason) followed by the final `AnswerExtracted`.
A plain number needs no request (nothing about its form can change unless words are asked for).
"""

from __future__ import annotations

import dataclasses
import re
import time
from collections.abc import Iterator

from langchain_core.messages import HumanMessage, SystemMessage

from agent.answer import extract_answer
from agent.answer_facts import ASKS_FOR_WORDS, same_facts
from agent.events import AnswerCheck, AnswerExtracted, Event
from agent.prompts import GAIA_SYSTEM_PROMPT
from agent.run_client import RunEvents
from config import Settings, redact
from models import ModelClient
from models.messages import message_text

CHECKER_FIRST_LINE = "You check a final answer's format against GAIA's answer rules."
"""The first line of the checker's system message: how servers and tests tell its role apart."""

CHECKER_PROMPT = (
    f"{CHECKER_FIRST_LINE}\n"
    "You get a question and a draft answer. Rewrite the draft so that it follows the rules below, changing ONLY "
    "its form: remove units and the $ or % sign unless the question asks for them, remove thousands separators, "
    "remove articles and filler words such as 'The answer is', use ', ' between list items, and write digits "
    "or words as the question asks. Never change a fact: keep every number's value, every name and every list "
    "item. If the draft already follows the rules, repeat it exactly.\n"
    f"The rules: {GAIA_SYSTEM_PROMPT[GAIA_SYSTEM_PROMPT.index('YOUR FINAL ANSWER should'):]}\n"
    "Reply with one line: FINAL ANSWER: [THE ANSWER]"
)
_PLAIN_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def checker_messages(question: str, draft: str) -> list[SystemMessage | HumanMessage]:
    """The checker's request: its system message, then only the question and the draft."""
    return [SystemMessage(content=CHECKER_PROMPT),
            HumanMessage(content=f"Question:\n{question.strip()}\n\nDraft answer:\n{draft}")]


def review(client: ModelClient, question: str, draft: str, settings: Settings) -> AnswerCheck:
    """Ask the checker about `draft` and judge its proposal; never raises (a failure keeps the draft)."""
    if _PLAIN_NUMBER.fullmatch(draft) and not ASKS_FOR_WORDS.search(question):
        return AnswerCheck(before=draft, after=draft, accepted=True, reason="skipped: already a plain number")
    try:
        reply = client.invoke(checker_messages(question, draft), purpose="answer_check")
    except Exception as exc:  # noqa: BLE001 - the check only ever improves a draft; its failure keeps it
        message = redact(f"{type(exc).__name__}: {exc}", settings)[:300]
        return AnswerCheck(before=draft, after="", accepted=False, reason=f"check failed: {message}")
    proposal, method = extract_answer(message_text(reply.message))
    if method != "final_answer_marker" or not proposal:
        return AnswerCheck(before=draft, after=proposal, accepted=False,
                           reason="check failed: the reply has no FINAL ANSWER line")
    ok, why = same_facts(draft, proposal, question)
    return AnswerCheck(before=draft, after=proposal, accepted=ok, reason=why)


def checked(draft: AnswerExtracted, question: str, client: ModelClient | None, trace: RunEvents,
            settings: Settings, started: float) -> Iterator[Event]:
    """The check's events (its model call, the AnswerCheck) then the final AnswerExtracted.

    With ANSWER_CHECK=off, no client, or an empty draft, only `draft` itself.
    """
    if settings.ANSWER_CHECK == "off" or client is None or not draft.answer.strip():
        yield draft
        return
    trace.sink = None  # the loop's event queue is closed: keep the check's call and retries for drain()
    verdict = review(client, question, draft.answer, settings)
    verdict.elapsed_s = round(time.monotonic() - started, 4)
    yield from trace.drain()
    yield verdict
    answer = verdict.after if verdict.accepted else draft.answer
    yield dataclasses.replace(draft, answer=answer, elapsed_s=verdict.elapsed_s)
