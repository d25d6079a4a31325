"""rag_search: the knowledge base as a tool, with leave-one-out for the current task."""

from __future__ import annotations

from collections.abc import Iterable

import pytest

from config import Settings, load_settings
from rag.shortcut import FaissKnowledgeBase
from rag.store import Entry
from rag.types import EmptyKnowledgeBase, Match
from tools.compute.rag_search import make_rag_tools
from tools.core.errors import MissingDependency
from tools.core.executor import run_tool
from tools.core.registry import build_registry

ENTRIES = [
    Entry("What is the capital city of France?", "Paris", task_id="task-fr", source="gaia:validation"),
    Entry("What is the capital city of Italy?", "Rome", task_id="task-it", source="gaia:validation"),
    Entry("What is the total of the Sales column in the attached spreadsheet?", "60", task_id="task-xl",
          source="gaia:validation", file_name="task-xl.xlsx"),
]


@pytest.fixture
def settings(tmp_path):
    return load_settings(RAG_INDEX_DIR=tmp_path / "index")


@pytest.fixture
def built(settings):
    from rag.embeddings import get_embedder

    FaissKnowledgeBase(settings, embedder=get_embedder("")).add(ENTRIES)
    return settings


def test_missing_when_rag_is_off(tmp_path):
    with pytest.raises(MissingDependency) as err:
        make_rag_tools(load_settings(RAG_ENABLED=False, RAG_INDEX_DIR=tmp_path))
    assert err.value.tools == ["rag_search"] and "RAG_ENABLED" in err.value.reason


def test_missing_when_the_index_is_empty(settings):
    with pytest.raises(MissingDependency) as err:
        make_rag_tools(settings)
    assert "python -m rag build" in err.value.reason and str(settings.RAG_INDEX_DIR) in err.value.reason


@pytest.mark.integration
def test_returns_nearest_questions_with_answers_and_similarities(built):
    (tool,) = make_rag_tools(built)
    assert tool.name == "rag_search" and list(tool.args) == ["query"]
    assert "previously solved questions" in tool.description and "DIFFERENT question" in tool.description
    outcome = run_tool(tool, {"query": "capital of France"}, built)
    assert outcome.ok, outcome.output
    first = outcome.output.splitlines()[1]
    assert "What is the capital city of France?" in first and "similarity 0." in first
    assert "A: Paris (source gaia:validation)" in outcome.output
    assert "similar is not necessarily the same question" in outcome.output


@pytest.mark.integration
def test_current_task_is_left_out(built):
    (tool,) = make_rag_tools(built)
    by_id = run_tool(tool, {"query": "What is the capital city of France?"}, built,
                     config={"configurable": {"task_id": "task-fr"}})
    assert "Paris" not in by_id.output and "Rome" in by_id.output
    by_attachment = run_tool(tool, {"query": "total of the Sales column"}, built,
                             config={"configurable": {"attachments": ["/data/2023/validation/task-xl.xlsx"]}})
    assert "Sales column" not in by_attachment.output


@pytest.mark.integration
def test_empty_query_is_an_actionable_failure(built):
    (tool,) = make_rag_tools(built)
    outcome = run_tool(tool, {"query": "   "}, built)
    assert not outcome.ok and "empty query" in outcome.output


class _OneEntryKB(EmptyKnowledgeBase):
    """A knowledge base that is not the one the settings point at: rag_search must search this one."""

    def __init__(self) -> None:
        self.searched: list[tuple[str, set[str]]] = []

    def saved_count(self) -> int:
        return 1

    def search(self, query: str, k: int | None = None, exclude_task_ids: Iterable[str] = ()) -> list[Match]:
        self.searched.append((query, set(exclude_task_ids)))
        return [Match("What is the injected knowledge base?", "this one", task_id="kb-1", source="test",
                      similarity=0.9)]


def test_the_registry_hands_rag_search_the_knowledge_base_it_is_given(settings: Settings) -> None:
    kb = _OneEntryKB()
    registry = build_registry(settings, [("rag", make_rag_tools)], deps={"knowledge_base": kb})
    tool = registry.get("rag_search")
    assert tool is not None, registry.missing
    outcome = run_tool(tool, {"query": "which one?"}, settings,
                       config={"configurable": {"task_id": "t-9"}}, raise_internal_errors=True)
    assert outcome.ok and "A: this one (source test)" in outcome.output
    assert kb.searched == [("which one?", {"t-9"})]  # the settings' index (empty here) was never opened


def test_the_pipelines_rag_search_searches_the_pipelines_knowledge_base(settings: Settings) -> None:
    from agent.events import ToolResult
    from agent.pipeline import Pipeline
    from tests.support.fake_model import ScriptedChatModel, ai, tool_call

    kb = _OneEntryKB()
    model = ScriptedChatModel(script=[tool_call("rag_search", query="which one?"), ai("FINAL ANSWER: this one")])
    sol = Pipeline(settings, llm=model, knowledge_base=kb).solve("Which knowledge base?", task_id="t-1", use_rag=False)
    result = next(e for e in sol.events if isinstance(e, ToolResult) and e.name == "rag_search")
    assert result.ok and "this one" in result.output and kb.searched == [("which one?", {"t-1"})]
