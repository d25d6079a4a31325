"""Pipeline input limits: an oversize question never reaches the model; chat history is capped (issue 13, item 2)."""

from __future__ import annotations

from agent.events import ErrorEvent, HistoryTrimmed
from agent.limits import trim_history
from agent.pipeline import Pipeline
from config import load_settings
from rag.types import EmptyKnowledgeBase
from tests.support.fake_model import ScriptedChatModel, ai
from tools.core.registry import ToolRegistry


class _CountingKB(EmptyKnowledgeBase):
    def __init__(self) -> None:
        self.asked = 0

    def lookup(self, *args, **kwargs):
        self.asked += 1
        return super().lookup(*args, **kwargs)


def _pipeline(script=(), **overrides):
    model = ScriptedChatModel(script=list(script))
    kb = _CountingKB()
    return Pipeline(load_settings(**overrides), llm=model, registry=ToolRegistry(), knowledge_base=kb), model, kb


def test_question_over_the_limit_is_refused_before_any_model_call_or_lookup():
    pipe, model, kb = _pipeline(MAX_QUESTION_CHARS=1000)
    solution = pipe.solve("x" * 1001)
    (event,) = solution.events
    assert isinstance(event, ErrorEvent) and event.stage == "limit"
    assert "1,001 characters" in event.message and "MAX_QUESTION_CHARS" in event.message
    assert model.calls == [] and kb.asked == 0 and solution.answer == ""


def test_question_at_the_limit_is_answered():
    pipe, model, _ = _pipeline([ai("FINAL ANSWER: ok")], MAX_QUESTION_CHARS=1000)
    assert pipe.solve("y" * 1000, use_rag=False).answer == "ok" and len(model.calls) == 1


def test_stream_refuses_the_same_way():
    pipe, model, _ = _pipeline(MAX_QUESTION_CHARS=100)
    (event,) = list(pipe.stream("z" * 5000))
    assert isinstance(event, ErrorEvent) and event.stage == "limit" and model.calls == []


def _turns(n: int, size: int = 10) -> list[dict]:
    return [{"role": "user" if i % 2 == 0 else "assistant", "content": f"{i:04d}" + "m" * (size - 4)} for i in range(n)]


def test_forged_long_history_is_cut_to_the_newest_turns_and_the_trace_says_so():
    pipe, model, _ = _pipeline([ai("FINAL ANSWER: ok")], CHAT_HISTORY_MAX_TURNS=4, CHAT_HISTORY_MAX_CHARS=10_000)
    solution = pipe.solve("follow-up?", history=_turns(500), use_rag=False)
    trimmed = [e for e in solution.events if isinstance(e, HistoryTrimmed)]
    assert len(trimmed) == 1 and trimmed[0].dropped == 496 and trimmed[0].kept == 4
    sent = [m.content for m in model.calls[0]]
    assert len(sent) == 1 + 4 + 1  # system, four newest turns, the question
    assert sent[1].startswith("0496") and sent[4].startswith("0499")


def test_history_characters_are_capped_too():
    history = _turns(3, size=10) + [{"role": "user", "content": "big" * 100_000}]
    kept = trim_history(history, load_settings(CHAT_HISTORY_MAX_TURNS=20, CHAT_HISTORY_MAX_CHARS=1000))
    assert kept.kept == [] and kept.dropped == 4  # the newest turn alone is over the budget: nothing older follows it
    small = trim_history(_turns(10, size=100), load_settings(CHAT_HISTORY_MAX_TURNS=20, CHAT_HISTORY_MAX_CHARS=350))
    assert len(small.kept) == 3 and small.dropped == 7


def test_history_within_limits_is_sent_whole_without_a_note():
    pipe, model, _ = _pipeline([ai("FINAL ANSWER: ok")])
    solution = pipe.solve("q?", history=_turns(4), use_rag=False)
    assert not any(isinstance(e, HistoryTrimmed) for e in solution.events)
    assert len(model.calls[0]) == 6


def test_the_trimmed_note_renders_as_a_visible_step():
    from ui.trace_view import render_trace

    (message,) = render_trace([HistoryTrimmed(kept=4, dropped=496, max_turns=4, max_chars=10_000)])
    assert "496 older chat message(s)" in message.metadata["title"]
