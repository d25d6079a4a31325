"""What a newcomer reads first: the README's "Get GAIA" steps and the header's index hint."""

from __future__ import annotations

from pathlib import Path

README = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")


def test_readme_says_how_to_get_gaia():
    section = README.split("## Get GAIA", 1)[1].split("\n## ", 1)[0]
    for needed in ("accept the terms", "HF_TOKEN=", "GAIA_CACHE_DIR", "metadata.jsonl", "restart the app",
                   "https://router.huggingface.co/v1", "python -m rag build --gaia-dir"):
        assert needed in section, needed
    for field in ("`task_id`", "`Question`", "`Level`", "`Final answer`", "`file_name`"):
        assert field in section, field


def test_the_empty_index_hint_gives_the_build_commands_arguments(tmp_path):
    from config import load_settings
    from rag.shortcut import FaissKnowledgeBase

    kb = FaissKnowledgeBase(load_settings(RAG_INDEX_DIR=tmp_path / "idx"), embedder=object())
    text = kb.describe()
    assert f"python -m rag build --gaia-dir DIR --split validation --index-dir {tmp_path / 'idx'}" in text
