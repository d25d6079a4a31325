"""The answer check: "same facts" over the scorer's cases and GAIA's forms; the checker through the real client.

The scripted server tells the checker's requests apart by their system message's first line.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest

from agent.answer_check import CHECKER_FIRST_LINE
from agent.answer_facts import same_facts
from agent.events import AnswerCheck, AnswerExtracted, ModelCall
from agent.pipeline import Pipeline
from config import load_settings
from evaluation.scorer import question_scorer
from tests.support.openai_server import Reply, ScriptedOpenAI, fail, say
from tests.support.scorer_cases import SCORER_CASES
from tools.compute.calculator import make_calculator_tools
from tools.core.registry import build_registry

_DIGIT_WORDS = {"0": "zero", "1": "one", "2": "two", "3": "three", "4": "four", "5": "five", "7": "seven"}
PROPOSALS: dict[str, Callable[[str], str]] = {
    "thousands": lambda a: re.sub(r"(?<=\d),(?=\d{3}(?!\d))", "", a),
    "symbols": lambda a: a.replace("$", "").replace("%", ""),
    "article_off": lambda a: re.sub(r"^(?:the|an?)\s+", "", a, flags=re.I),
    "article_on": lambda a: "the " + a,
    "bump_number": lambda a: re.sub(r"\d+", lambda m: str(int(m.group()) + 1), a, count=1),
    "drop_last": lambda a: ",".join(a.split(",")[:-1]),
    "semicolons": lambda a: a.replace(", ", "; "),
    "swap": lambda a: ", ".join(reversed([x.strip() for x in a.split(",")])),
    "upper": str.upper,
    "words_to_digits": lambda a: re.sub(r"\b(?:zero|one|two|three|four|five|seven)\b",
                                        lambda m: {v: k for k, v in _DIGIT_WORDS.items()}[m.group()], a),
    "digits_to_words": lambda a: re.sub(r"\b\d\b", lambda m: _DIGIT_WORDS.get(m.group(), m.group()), a),
    "unit_off": lambda a: re.sub(r"^(-?\d+(?:\.\d+)?)\s*[A-Za-z]+.*$", r"\1", a),
    "filler_on": lambda a: "The answer is " + a,
    "period_off": lambda a: a.rstrip("."),
    "and": lambda a: re.sub(r",\s*([^,]*)$", r" and \1", a),
    "truncate_word": lambda a: a[:-1] if len(a) > 3 else a,
}
"""Proposals a checker might send: form changes and fact changes alike."""

GAIA_FORMS = ["3", "Louvrier", "right", "Indonesia, Myanmar", "b, e", "FunkMonk", "0.1777", "Claus", "Saint Petersburg",
              "broccoli, celery, fresh basil, lettuce, sweet potatoes", "Extremely", "100000000", "17", "3.1.3.1",
              "egalitarian", "CUB", "A Nightmare on Elm Street", "Morarji Desai", "1:41.614", "Wojciech", "2, 4, 6",
              "BaseLabelPropagation", "Li Peng", "90", "Harbinger, Tidal", "cloak", "8", "0.269", "Format Document",
              "Alfonso Visconti", "St. Louis, Paris", "5.5", "-3", "Time-Parking 2: Parallel Universe"]
"""Answers in the forms of GAIA's public validation split (names, codes, lists, decimals, titles)."""

# Truths that break GAIA's own answer rules (a thousands separator, a unit): dropping it is the rules' form.
KNOWN_LIMITS = {("1,000", "1,000", "thousands"), ("3 apples", "3 apples", "unit_off")}


def _right_cases() -> list[tuple[str, str]]:
    cases = [(a, t) for a, t, ok in SCORER_CASES if ok and a is not None and "\n" not in a.strip()]
    return cases + [(form, form) for form in GAIA_FORMS]


def test_an_accepted_proposal_never_turns_a_right_answer_wrong():
    turned = []
    accepted = 0
    for draft, truth in _right_cases():
        for name, propose in PROPOSALS.items():
            proposal = propose(draft)
            if proposal != draft and same_facts(draft, proposal, "")[0]:
                accepted += 1
                if not question_scorer(proposal, truth) and (draft, truth, name) not in KNOWN_LIMITS:
                    turned.append((name, draft, truth, proposal))
    assert not turned, turned
    assert accepted > 30  # the test judges real accepted changes, not only rejections


@pytest.mark.parametrize(("draft", "proposal", "question", "ok"), [
    ("$1,234", "1234", "", True),
    ("The answer is Paris.", "Paris", "", True),
    ("5 km", "5", "", True),
    ("apples and pears", "apples, pears", "", True),
    ("five", "5", "", True),
    ("5", "five", "How many? Answer in words.", True),
    ("5", "five", "How many?", False),
    ("$1,234", "1243", "", False),
    ("Paris", "London", "", False),
    ("Paris, London", "Paris", "", False),
    ("Eiffel Tower", "the Eiffel Tower", "", False),
    ("the Eiffel Tower", "Eiffel Tower", "", True),
    ("The Hague", "Hague", "", False),
    ("One Direction", "1 Direction", "", False),
    ("A1", "A2", "", False),
    ("Apollo 11 mission", "Apollo 11", "", False),
])
def test_same_facts_accepts_form_and_rejects_facts(draft, proposal, question, ok):
    assert same_facts(draft, proposal, question)[0] is ok


def _checker_says(answer_reply: Reply, checker_reply: Reply) -> Callable[[dict[str, Any]], Reply]:
    def script(body: dict[str, Any]) -> Reply:
        first_line = str(body["messages"][0]["content"]).splitlines()[0].lower()
        return checker_reply if "you check a final answer's format" in first_line else answer_reply
    return script


def _solve(srv: ScriptedOpenAI, question: str = "How much did it cost in dollars?", **overrides: Any):
    settings = load_settings(OPENAI_BASE_URL=srv.url, OPENAI_API_KEY="sk-test", RAG_ENABLED=False,
                             ANSWER_CHECK="on", RATE_LIMIT_RETRY_MAX=0, **overrides)
    registry = build_registry(settings, [("base", make_calculator_tools)])
    return Pipeline(settings, registry=registry).solve(question)


@pytest.mark.parametrize(("draft", "checker", "answer", "accepted"), [
    ("$1,234", "FINAL ANSWER: 1234", "1234", True),
    ("Paris, London", "FINAL ANSWER: Paris", "Paris, London", False),
    ("Paris", "FINAL ANSWER: Paris", "Paris", True),
    ("$1,234", "FINAL ANSWER: 1243", "$1,234", False),
])
def test_the_checker_role_through_the_real_client(draft, checker, answer, accepted):
    with ScriptedOpenAI(_checker_says(say(f"FINAL ANSWER: {draft}"), say(checker))) as srv:
        sol = _solve(srv)
        check_request = srv.requests[-1].body
    check = next(e for e in sol.events if isinstance(e, AnswerCheck))
    assert check.before == draft and check.accepted is accepted and sol.answer == answer
    assert sol.answer_before_check == draft and isinstance(sol.events[-1], AnswerExtracted)
    assert CHECKER_FIRST_LINE in check_request["messages"][0]["content"].splitlines()[0]
    assert "tools" not in check_request and len(check_request["messages"]) == 2  # the question and the draft only
    assert draft in check_request["messages"][1]["content"]
    assert any(isinstance(e, ModelCall) and e.purpose == "answer_check" for e in sol.events)


def test_the_checker_strips_filler_from_a_draft_kept_whole():
    # "FINAL ANSWER: The answer is Paris." is cleaned by extraction; a list keeps its filler for the checker.
    from agent.answer_check import review
    from models import ChatModels, ModelClient

    with ScriptedOpenAI([say("FINAL ANSWER: Paris")]) as srv:
        settings = load_settings(OPENAI_BASE_URL=srv.url, OPENAI_API_KEY="sk-test", RAG_ENABLED=False)
        verdict = review(ModelClient(settings, ChatModels(settings)), "Which city?", "The answer is Paris.", settings)
    assert (verdict.after, verdict.accepted, verdict.reason) == ("Paris", True, "form only")


def test_a_failed_check_keeps_the_draft_and_a_plain_number_skips_it():
    with ScriptedOpenAI(_checker_says(say("FINAL ANSWER: $1,234"), fail(500))) as srv:
        sol = _solve(srv)
    check = next(e for e in sol.events if isinstance(e, AnswerCheck))
    assert sol.answer == "$1,234" and sol.error is None and not check.accepted
    assert check.reason.startswith("check failed:")
    with ScriptedOpenAI([say("FINAL ANSWER: 1031")]) as srv:
        sol = _solve(srv)
        assert len(srv.requests) == 1
    assert sol.answer == "1031" and "plain number" in next(e for e in sol.events if isinstance(e, AnswerCheck)).reason


def test_answer_check_off_sends_no_request():
    with ScriptedOpenAI([say("FINAL ANSWER: $1,234")]) as srv:
        settings = load_settings(OPENAI_BASE_URL=srv.url, OPENAI_API_KEY="sk-test", RAG_ENABLED=False,
                                 ANSWER_CHECK="off")
        sol = Pipeline(settings, registry=build_registry(settings, [("base", make_calculator_tools)])).solve("q")
        assert len(srv.requests) == 1
    assert sol.answer == "$1,234" and sol.answer_before_check is None
