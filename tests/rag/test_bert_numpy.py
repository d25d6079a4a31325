"""The numpy BERT encoder: sentence-transformers' vectors for the packaged model, refusal of any other layout."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from safetensors.numpy import load_file
from tokenizers import Tokenizer

from rag.bert_numpy import BertEncoder, load_bert_encoder
from rag.embeddings import Embedder, resolve_model_path

ROOT = Path(__file__).resolve().parents[2]
PACKAGED = Path(resolve_model_path(""))
LONG = " ".join(f"word{i} of a long pasted attachment" for i in range(80))  # 400 words, far past 256 pieces
TEXTS = ["", "What is the capital city of France?", "Ünïcödé: café, naïve, 東京, Ελλάδα, emoji 🎉 — done",
         LONG, "hi", "How many studio albums were published by Mercedes Sosa between 2000 and 2009?"]


@pytest.fixture(scope="module")
def encoder() -> BertEncoder:
    loaded = load_bert_encoder(PACKAGED)
    assert loaded is not None
    return loaded


@pytest.fixture(scope="module")
def reference() -> Any:
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(PACKAGED), device="cpu")


@pytest.fixture
def model_copy(tmp_path: Path) -> Path:
    """The packaged folder with its JSON files copied (safe to edit) and the weights symlinked."""
    def copy(src: str, dst: str) -> None:
        if src.endswith(".json"):
            shutil.copy2(src, dst)
        else:
            os.symlink(src, dst)

    return Path(shutil.copytree(PACKAGED, tmp_path / "model", copy_function=copy))


def edit_json(path: Path, change: Callable[[Any], Any]) -> None:
    path.write_text(json.dumps(change(json.loads(path.read_text()))))


@pytest.mark.integration
def test_vectors_equal_sentence_transformers(encoder, reference):
    ours = encoder.encode(TEXTS, batch_size=2)  # mixed lengths in a batch: padding must be masked out
    theirs = reference.encode(TEXTS, batch_size=2, normalize_embeddings=True, convert_to_numpy=True,
                              show_progress_bar=False)
    assert ours.dtype == np.float32 and ours.shape == (len(TEXTS), 384)
    assert np.abs(ours - theirs).max() < 1e-5


def test_long_text_is_truncated_to_max_seq_length(encoder):
    assert len(encoder._tokenizer.encode(LONG).ids) == 256
    longer = encoder.encode([LONG + " and a tail that only a longer window would see"])
    assert np.abs(encoder.encode([LONG]) - longer).max() < 1e-6


def test_batching_and_sorting_keep_each_text_its_own_vector(encoder):
    alone = np.vstack([encoder.encode([t]) for t in TEXTS])
    together = encoder.encode(TEXTS, batch_size=4)
    assert np.abs(alone - together).max() < 1e-5
    assert np.allclose(np.linalg.norm(together, axis=1), 1.0, atol=1e-6)


def test_no_texts_give_an_empty_matrix(encoder):
    out = encoder.encode([])
    assert out.shape == (0, 384) and out.dtype == np.float32


def test_weights_prefixed_bert_load_the_same(encoder):
    weights = {f"bert.{k}": v for k, v in load_file(str(PACKAGED / "model.safetensors")).items()}
    config = json.loads((PACKAGED / "config.json").read_text())
    prefixed = BertEncoder(weights, Tokenizer.from_file(str(PACKAGED / "tokenizer.json")), config, 256)
    assert np.abs(prefixed.encode(TEXTS[:3]) - encoder.encode(TEXTS[:3])).max() == 0.0


def test_an_unchanged_copy_loads(model_copy):
    assert load_bert_encoder(model_copy) is not None  # so each refusal below is the edit's doing


@pytest.mark.parametrize(("file", "change"), [
    ("modules.json", lambda m: m[:2]),  # no Normalize
    ("modules.json", lambda m: [m[1], m[0], m[2]]),
    ("modules.json", lambda m: [*m[:2], {**m[2], "type": "sentence_transformers.models.Dense"}]),
    ("1_Pooling/config.json", lambda c: {**c, "pooling_mode_mean_tokens": False, "pooling_mode_cls_token": True}),
    ("1_Pooling/config.json", lambda c: {**c, "pooling_mode_max_tokens": True}),
    ("config.json", lambda c: {**c, "model_type": "roberta"}),
    ("config.json", lambda c: {**c, "hidden_act": "gelu_new"}),
    ("config.json", lambda c: {**c, "position_embedding_type": "relative_key"}),
    ("sentence_bert_config.json", lambda c: {**c, "do_lower_case": True}),
    ("config_sentence_transformers.json", lambda c: {**c, "prompts": {"query": "q: "}, "default_prompt_name": "query"}),
])
def test_other_layouts_are_refused(model_copy, file, change):
    edit_json(model_copy / file, change)
    assert load_bert_encoder(model_copy) is None


@pytest.mark.parametrize("missing", ["model.safetensors", "tokenizer.json", "modules.json"])
def test_missing_files_are_refused(model_copy, missing):
    (model_copy / missing).unlink()
    assert load_bert_encoder(model_copy) is None


@pytest.mark.parametrize("name", ["sentence-transformers/all-MiniLM-L6-v2", "/no/such/folder"])
def test_a_hub_name_or_missing_path_is_refused(name):
    assert load_bert_encoder(name) is None


@pytest.mark.integration
def test_embedder_falls_back_to_sentence_transformers_for_another_layout(model_copy, reference):
    edit_json(model_copy / "1_Pooling/config.json",
              lambda c: {**c, "pooling_mode_mean_tokens": False, "pooling_mode_cls_token": True})
    embedder = Embedder(str(model_copy))
    vectors = embedder.encode(["What is the capital city of France?"])
    assert not isinstance(embedder._encoder, BertEncoder)
    assert embedder.dim == 384 and vectors.shape == (1, 384) and vectors.dtype == np.float32


PROBE = """
import json, sys
from rag.embeddings import get_embedder
embedder = get_embedder("")
vectors = embedder.encode(["What is the capital city of France?"])
heavy = [m for m in ("sentence_transformers", "torch", "transformers", "scipy", "pandas") if m in sys.modules]
print(json.dumps({"heavy": heavy, "dim": embedder.dim, "shape": list(vectors.shape)}))
"""


def test_the_packaged_model_loads_without_torch_or_sentence_transformers():
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONWARNINGS": "ignore"}
    out = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout.strip().splitlines()[-1]) == {"heavy": [], "dim": 384, "shape": [1, 384]}
