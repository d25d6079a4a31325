"""The router: RAG short-circuit tiers, leave-one-out, knowledge-base failures, no-LLM behaviour."""

from __future__ import annotations

from agent.events import AnswerExtracted, ErrorEvent, ModelCall, RagLookup, Retry, RouteDecided
from agent.pipeline import Pipeline
from config import load_settings
from rag.types import EmptyKnowledgeBase, HintLLM, LookupResult, Match
from tests.support.fake_model import ScriptedChatModel, ai
from tools.core.registry import ToolRegistry


class FakeKB(EmptyKnowledgeBase):
    """Returns a fixed result and remembers what it was asked."""

    def __init__(self, result: LookupResult | Exception) -> None:
        self.result = result
        self.asked: list[tuple[str, str | None]] = []
        self.file_names: list[str | None] = []

    def lookup(self, question: str, exclude_task_id: str | None = None, file_name: str | None = None,
               hint_llm: HintLLM | None = None) -> LookupResult:
        self.asked.append((question, exclude_task_id))
        self.file_names.append(file_name)
        if isinstance(self.result, Exception):
            raise self.result
        return self.result


def answer_hit() -> LookupResult:
    match = Match(question="What is the capital of France?", answer="Paris", similarity=0.97, task_id="t-other")
    return LookupResult(tier="answer", matches=[match], answer="Paris", note="guard passed")


def pipeline(kb, script=(), llm=True, **overrides):
    settings = load_settings(**overrides)
    model = ScriptedChatModel(script=list(script)) if llm else None
    return Pipeline(settings, llm=model, registry=ToolRegistry(), knowledge_base=kb), model


def test_rag_answer_short_circuits_without_model_calls() -> None:
    kb = FakeKB(answer_hit())
    pipe, model = pipeline(kb)
    sol = pipe.solve("What's the capital of France?", task_id="t-1")
    assert sol.answer == "Paris" and sol.source == "rag" and sol.error is None
    assert model.calls == [] and sol.steps == 0
    assert kb.asked == [("What's the capital of France?", "t-1")]  # leave-one-out id passed on
    lookup = next(e for e in sol.events if isinstance(e, RagLookup))
    assert lookup.tier == "answer" and lookup.similarity == 0.97 and lookup.excluded_task_id == "t-1"
    answer = sol.events[-1]
    assert isinstance(answer, AnswerExtracted) and answer.method == "rag"


def test_rag_answer_works_without_any_llm() -> None:
    pipe, _ = pipeline(FakeKB(answer_hit()), llm=False)
    sol = pipe.solve("capital of France?")
    assert sol.answer == "Paris" and sol.error is None


def test_no_llm_and_no_rag_answer_is_an_actionable_error() -> None:
    pipe, _ = pipeline(FakeKB(LookupResult(tier="miss")), llm=False)
    sol = pipe.solve("anything")
    assert sol.answer == ""
    error = sol.events[-1]
    assert isinstance(error, ErrorEvent) and error.stage == "config"
    assert "OPENAI_API_KEY" in error.message and "OPENAI_BASE_URL" in error.message
    assert pipe.preload()["llm"].startswith("not configured")


def test_candidates_go_into_the_first_user_message() -> None:
    result = LookupResult(tier="candidates", matches=[Match("q?", "a", similarity=0.8)],
                          context="Similar solved question: q? -> a")
    pipe, model = pipeline(FakeKB(result), [ai("FINAL ANSWER: a")])
    sol = pipe.solve("q2?")
    assert sol.answer == "a" and sol.source == "agent"
    assert "Similar solved question: q? -> a" in model.calls[0][-1].content
    route = next(e for e in sol.events if isinstance(e, RouteDecided))
    assert route.route == "agent" and "candidates" in route.reason


def test_miss_adds_nothing() -> None:
    pipe, model = pipeline(FakeKB(LookupResult(tier="miss", note="nothing near")), [ai("FINAL ANSWER: z")])
    pipe.solve("q?")
    assert model.calls[0][-1].content == "q?"


def test_knowledge_base_failure_is_noted_and_the_agent_continues() -> None:
    pipe, model = pipeline(FakeKB(RuntimeError("index corrupt")), [ai("FINAL ANSWER: fine")])
    sol = pipe.solve("q?")
    assert sol.answer == "fine" and sol.error is None
    lookup = next(e for e in sol.events if isinstance(e, RagLookup))
    assert lookup.tier == "miss" and "index corrupt" in lookup.note


def test_use_rag_false_and_rag_disabled_skip_the_lookup() -> None:
    kb = FakeKB(answer_hit())
    pipe, _ = pipeline(kb, [ai("FINAL ANSWER: x")])
    sol = pipe.solve("q?", use_rag=False)
    assert kb.asked == [] and sol.source == "agent"
    assert next(e for e in sol.events if isinstance(e, RagLookup)).tier == "off"
    pipe2, _ = pipeline(kb, [ai("FINAL ANSWER: y")], RAG_ENABLED=False)
    assert pipe2.solve("q?").answer == "y" and kb.asked == []


class HintingKB(EmptyKnowledgeBase):
    """A knowledge base that asks the model for hints through the hint_llm the router passes with the lookup."""

    def lookup(self, question: str, exclude_task_id: str | None = None, file_name: str | None = None,
               hint_llm: HintLLM | None = None) -> LookupResult:
        assert hint_llm is not None
        hint = hint_llm(f"Give a hint for: {question}")
        return LookupResult(tier="hints", context=f"Hint: {hint}")


def test_the_lookup_gets_the_runs_gated_model_client_for_hints() -> None:
    settings = load_settings(RATE_LIMIT_RETRY_BASE_DELAY=0.01)
    model = ScriptedChatModel(script=[ConnectionError("blip"), ai("use a calculator", 3, 4), ai("FINAL ANSWER: 5")])
    base = Pipeline(settings, llm=model, registry=ToolRegistry(), knowledge_base=HintingKB())

    class CountingGate:
        acquired = 0

        def acquire(self, estimated_tokens: int = 0) -> None:
            CountingGate.acquired += 1

        def on_success(self, info=None) -> None: ...

        def on_rate_limited(self, retry_after, info=None) -> None: ...

    sol = base.with_gate(CountingGate()).solve("2+3?")
    assert sol.answer == "5"
    assert CountingGate.acquired == 3  # the hint call (and its retry) and the loop's call all went through the gate
    retry = next(e for e in sol.events if isinstance(e, Retry))
    assert retry.reason.startswith("RAG hint call") and retry.max_retries == 5
    assert "Hint: use a calculator" in model.calls[2][-1].content
    hint_call = next(e for e in sol.events if isinstance(e, ModelCall) and e.purpose == "rag_hint")
    assert (hint_call.prompt_tokens, hint_call.completion_tokens) == (3, 4)
    assert sol.steps == 1 and sol.prompt_tokens == 13  # the hint call counts for tokens, not as a step


def test_with_gate_shares_the_heavy_parts() -> None:
    pipe, _ = pipeline(FakeKB(LookupResult(tier="miss")))
    status = pipe.preload()
    twin = pipe.with_gate(object())
    assert twin.preload() == status and twin.registry is pipe.registry
    assert twin.knowledge_base is pipe.knowledge_base and twin.llm is pipe.llm is not None
    assert twin._parts is pipe._parts and twin.gate is not pipe.gate


def test_broken_open_knowledge_base_falls_back_to_empty(monkeypatch) -> None:
    import rag

    def broken(settings):
        raise OSError("faiss index unreadable")

    monkeypatch.setattr(rag, "open_knowledge_base", broken)
    pipe = Pipeline(load_settings(), llm=ScriptedChatModel(script=[ai("FINAL ANSWER: ok")]), registry=ToolRegistry())
    status = pipe.preload()
    assert "faiss index unreadable" in status["rag_error"]
    assert pipe.solve("q").answer == "ok"


def test_attachment_name_is_passed_to_the_lookup(tmp_path) -> None:
    attachment = tmp_path / "sales.xlsx"
    attachment.write_bytes(b"x")
    kb = FakeKB(LookupResult(tier="miss"))
    pipe, _ = pipeline(kb, [ai("FINAL ANSWER: 1")])
    pipe.solve("total sales?", file_path=str(attachment))
    pipe, _ = pipeline(kb, [ai("FINAL ANSWER: 1")])
    pipe.solve("no file")
    assert kb.file_names == ["sales.xlsx", None]


def test_preload_warms_the_knowledge_base_and_reports_failures() -> None:
    class WarmKB(FakeKB):
        warmed = 0

        def warm(self) -> None:
            WarmKB.warmed += 1
            raise RuntimeError("index built with another embedding model")

        def describe(self) -> str:
            return "3 entries"

    pipe, _ = pipeline(WarmKB(LookupResult(tier="miss")))
    status = pipe.preload()
    pipe.preload()
    assert WarmKB.warmed == 1 and status["rag"] == "3 entries" and "another embedding model" in status["rag_error"]
