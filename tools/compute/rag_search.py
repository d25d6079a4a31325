"""rag_search: the knowledge base as a tool, for when the loop wants to look up similar solved questions.

Leave-one-out holds here too: the current task's own entry is never shown (task id from the run's
`ToolContext.task_id`, and GAIA attachments are named after their task id).
"""

from __future__ import annotations

from pathlib import Path

from langchain_core.tools import BaseTool

from config import Settings
from rag.types import KnowledgeBase
from tools.core.context import ToolContext
from tools.core.context_tool import context_tool
from tools.core.errors import MissingDependency, ToolFailure

_SHOWN_CHARS = 500


def _excluded_task_ids(ctx: ToolContext) -> set[str]:
    ids = {ctx.task_id} if ctx.task_id else set()
    return ids | {p.stem for p in ctx.attachments}


def make_rag_tools(settings: Settings, knowledge_base: KnowledgeBase | None = None) -> list[BaseTool]:
    """The rag_search tool over `knowledge_base` (the pipeline's, injected by the registry's `deps`).

    Without one (the tools CLI, a test) it opens the knowledge base the settings point at. Missing when
    RAG is off or the index is empty (nothing to search).
    """
    if not settings.RAG_ENABLED:
        raise MissingDependency(["rag_search"],
                                "RAG_ENABLED is false (set RAG_ENABLED=true to search the knowledge base)")
    if knowledge_base is None:
        from rag import open_knowledge_base  # the tool layer sits above rag/

        knowledge_base = open_knowledge_base(settings)
    kb = knowledge_base
    if kb.saved_count() == 0:
        raise MissingDependency(["rag_search"], f"the knowledge base in {Path(settings.RAG_INDEX_DIR)} is empty: "
                                "build it with `python -m rag build --gaia-dir DIR --split validation` "
                                "or `--jsonl FILE`")
    top_k = max(settings.RAG_TOP_K, 5)

    @context_tool
    def rag_search(_ctx: ToolContext, query: str) -> str:
        """Search the knowledge base of previously solved questions for ones similar to your query.

        Returns the nearest stored questions with their known answers and cosine similarities (1.0 =
        the same wording). A similar question may still be a DIFFERENT question (another year, unit,
        name or file): use a stored answer only when the question truly is the same, and otherwise
        as a hint about how to solve yours.

        Args:
            query: A question or a description of what you are looking for.
        """
        if not (query or "").strip():
            raise ToolFailure("empty query. Pass the question (or its key part) to search for.", "bad_arguments")
        matches = kb.search(query, k=top_k, exclude_task_ids=_excluded_task_ids(_ctx))
        if not matches:
            return ("No stored questions found (the knowledge base has nothing else to offer; "
                    "solve it with other tools).")
        lines = [f"{len(matches)} nearest stored questions (similar is not necessarily the same question):"]
        for i, m in enumerate(matches, 1):
            question = " ".join(m.question.split())
            question = question if len(question) <= _SHOWN_CHARS else question[:_SHOWN_CHARS] + "…"
            extra = f"; attachment {m.file_name}" if m.file_name else ""
            lines.append(f"{i}. similarity {m.similarity:.3f} | Q: {question}\n"
                         f"   A: {m.answer} (source {m.source or '?'}{extra})")
        return "\n".join(lines)

    return [rag_search]
