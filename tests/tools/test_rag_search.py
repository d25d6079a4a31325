"""rag_search: the knowledge base as a tool, with leave-one-out for the current task."""

from __future__ import annotations

import pytest

from config import load_settings
from rag.shortcut import FaissKnowledgeBase
from rag.store import Entry
from tools.errors import MissingDependency
from tools.executor import run_tool
from tools.rag_search import make_rag_tools

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
