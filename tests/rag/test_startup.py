"""Start-up stays light: nothing heavy is imported until the first lookup, and that one brings only FAISS.

The packaged model runs on numpy (`rag.bert_numpy`): a lookup that imports torch or sentence-transformers
pays ~9 s of CPU for nothing.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rag.store import Entry

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("sentence_transformers", "torch", "transformers", "scipy", "pandas", "faiss")

PROBE = f"HEAVY = {HEAVY!r}\n" + """
import json, sys
import rag
from config import load_settings
kb = rag.open_knowledge_base(load_settings(RAG_INDEX_DIR=sys.argv[1]))
report = {"after_open": [m for m in HEAVY if m in sys.modules]}
result = kb.lookup("What is the capital city of France?")
report["tier"] = result.tier
report["after_lookup"] = [m for m in HEAVY if m in sys.modules]
print(json.dumps(report))
"""


def probe(index_dir: Path) -> dict:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "PYTHONWARNINGS": "ignore"}
    out = subprocess.run([sys.executable, "-c", PROBE, str(index_dir)], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=240)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_open_imports_nothing_heavy_and_missing_index_never_loads_the_model(tmp_path):
    report = probe(tmp_path / "missing")
    assert report == {"after_open": [], "tier": "miss", "after_lookup": []}


@pytest.mark.integration
def test_first_lookup_loads_the_model_and_faiss_but_not_torch(make_kb, tmp_path):
    make_kb([Entry("What is the capital city of France?", "Paris", task_id="fr")], index_dir=tmp_path / "idx")
    report = probe(tmp_path / "idx")
    assert report["after_open"] == []
    assert report["tier"] == "answer"
    assert report["after_lookup"] == ["faiss"]
