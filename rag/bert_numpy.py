"""A numpy-only BERT sentence encoder: the packaged all-MiniLM-L6-v2 without torch or sentence-transformers.

Loading the model through sentence-transformers costs ~12 s of CPU (torch, transformers, scipy, pandas)
in every process that embeds a question; this forward pass needs only numpy, safetensors and tokenizers
and loads in ~1 s. It reproduces sentence-transformers (max abs difference ~2e-7) for one layout only,
a BERT followed by mean pooling and normalisation; `load_bert_encoder` returns None for anything else
so the caller falls back to sentence-transformers.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from safetensors.numpy import load_file
from tokenizers import Tokenizer

_ST_MODULES = ("Transformer", "Pooling", "Normalize")
_INV_SQRT2 = 0.7071067811865476
# Abramowitz & Stegun 7.1.26: erf to within 1.5e-7, vectorised (numpy has no erf, scipy costs an import).
_AS_P = 0.3275911
_AS_A = (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429)
_MASKED = np.float32(-1e9)
_GELU_CHUNK = 65536  # elements: the scratch buffers stay in L2


def _gelu_(x: np.ndarray) -> np.ndarray:
    """Exact (erf) GELU, as BERT's hidden_act "gelu", in place on float32 `x`; returns `x`.

    In place and in cache-sized chunks: the naive expression makes ~15 full-size temporaries and costs
    as much as all the matrix products. Uses gelu(x) = x - x*h for x >= 0 and x*h for x < 0, where
    h = (1 - erf(|x|/sqrt 2)) / 2 (the A&S polynomial times exp(-z^2), halved).
    """
    flat = x.reshape(-1)
    size = min(_GELU_CHUNK, flat.size)
    z, t, h = (np.empty(size, dtype=np.float32) for _ in range(3))
    negative = np.empty(size, dtype=bool)
    for start in range(0, flat.size, _GELU_CHUNK):
        v = flat[start:start + _GELU_CHUNK]
        zz, tt, hh, neg = z[:v.size], t[:v.size], h[:v.size], negative[:v.size]
        np.abs(v, out=zz)
        zz *= _INV_SQRT2
        np.multiply(zz, _AS_P, out=tt)
        tt += 1.0
        np.reciprocal(tt, out=tt)
        np.multiply(tt, _AS_A[4], out=hh)
        for a in reversed(_AS_A[:4]):
            hh += a
            hh *= tt
        np.square(zz, out=zz)
        np.negative(zz, out=zz)
        np.exp(zz, out=zz)
        hh *= zz
        hh *= 0.5
        np.multiply(v, hh, out=zz)
        np.less(v, 0.0, out=neg)
        v -= zz
        np.copyto(v, zz, where=neg)
    return x


def _linear(x: np.ndarray, weight: np.ndarray, bias: np.ndarray) -> np.ndarray:
    """The affine map over the last axis as one 2-D product: numpy's 3-D @ 2-D skips BLAS (~40x slower)."""
    flat: np.ndarray = x.reshape(-1, x.shape[-1]) @ weight + bias  # numpy's stubs type `@` as Any
    return flat.reshape(*x.shape[:-1], weight.shape[1])


def _layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    mean = x.mean(axis=-1, keepdims=True)
    centred = x - mean
    var = (centred * centred).mean(axis=-1, keepdims=True)
    normed: np.ndarray = centred / np.sqrt(var + eps) * weight + bias
    return normed


@dataclass(frozen=True)
class _Layer:
    """One encoder layer; linear weights are (in, out) views of the stored (out, in) matrices."""

    qkv_w: np.ndarray
    qkv_b: np.ndarray
    out_w: np.ndarray
    out_b: np.ndarray
    ln1_w: np.ndarray
    ln1_b: np.ndarray
    ffn_in_w: np.ndarray
    ffn_in_b: np.ndarray
    ffn_out_w: np.ndarray
    ffn_out_b: np.ndarray
    ln2_w: np.ndarray
    ln2_b: np.ndarray


def _load_layers(weights: dict[str, np.ndarray], count: int) -> list[_Layer]:
    layers = []
    for i in range(count):
        p = f"encoder.layer.{i}."
        w = {k[len(p):]: v for k, v in weights.items() if k.startswith(p)}
        parts = ("query", "key", "value")
        layers.append(_Layer(
            # One fused (hidden, 3*hidden) product instead of three.
            qkv_w=np.ascontiguousarray(np.concatenate([w[f"attention.self.{n}.weight"] for n in parts]).T),
            qkv_b=np.concatenate([w[f"attention.self.{n}.bias"] for n in parts]),
            out_w=w["attention.output.dense.weight"].T, out_b=w["attention.output.dense.bias"],
            ln1_w=w["attention.output.LayerNorm.weight"], ln1_b=w["attention.output.LayerNorm.bias"],
            ffn_in_w=w["intermediate.dense.weight"].T, ffn_in_b=w["intermediate.dense.bias"],
            ffn_out_w=w["output.dense.weight"].T, ffn_out_b=w["output.dense.bias"],
            ln2_w=w["output.LayerNorm.weight"], ln2_b=w["output.LayerNorm.bias"],
        ))
    return layers


class BertEncoder:
    """BERT + mean pooling + L2 normalisation in float32 numpy: sentence-transformers' vectors for that layout."""

    def __init__(self, weights: dict[str, np.ndarray], tokenizer: Tokenizer, config: dict[str, Any],
                 max_seq_length: int) -> None:
        weights = {k.removeprefix("bert."): v.astype(np.float32, copy=False) for k, v in weights.items()}
        self._word = weights["embeddings.word_embeddings.weight"]
        self._position = weights["embeddings.position_embeddings.weight"]
        self._token_type0 = weights["embeddings.token_type_embeddings.weight"][0]
        self._ln_w = weights["embeddings.LayerNorm.weight"]
        self._ln_b = weights["embeddings.LayerNorm.bias"]
        self._layers = _load_layers(weights, int(config["num_hidden_layers"]))
        self._heads = int(config["num_attention_heads"])
        self._eps = float(config.get("layer_norm_eps", 1e-12))
        self.dim = int(self._word.shape[1])
        """Vector size (the hidden size)."""
        tokenizer.no_padding()  # the file may pad to a fixed length; batches are padded here, with a mask
        tokenizer.enable_truncation(max_length=min(max_seq_length, int(self._position.shape[0])))
        self._tokenizer = tokenizer  # not thread-safe: callers serialise encode()
        self._blas_limit = _one_blas_thread()

    def encode(self, texts: Sequence[str], batch_size: int = 64) -> np.ndarray:
        """Unit-length float32 vectors (n, dim), in the order of `texts`."""
        ids = [enc.ids for enc in self._tokenizer.encode_batch(list(texts))]
        out = np.zeros((len(ids), self.dim), dtype=np.float32)
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]))  # similar lengths together: less padding
        step = max(1, batch_size)
        with self._blas_limit():
            for start in range(0, len(order), step):
                chunk = order[start:start + step]
                out[chunk] = self._encode_batch([ids[i] for i in chunk])
        return out

    def _encode_batch(self, ids: list[list[int]]) -> np.ndarray:
        width = max(len(row) for row in ids)
        tokens = np.zeros((len(ids), width), dtype=np.int64)
        mask = np.zeros((len(ids), width), dtype=np.float32)
        for i, row in enumerate(ids):
            tokens[i, :len(row)] = row
            mask[i, :len(row)] = 1.0
        x = self._word[tokens] + self._position[:width] + self._token_type0
        x = _layer_norm(x, self._ln_w, self._ln_b, self._eps)
        bias = ((1.0 - mask) * _MASKED)[:, None, None, :]  # (batch, 1, 1, keys): padding gets no attention
        for layer in self._layers:
            x = self._layer(x, layer, bias)
        pooled = (x * mask[:, :, None]).sum(axis=1) / np.maximum(mask.sum(axis=1, keepdims=True), 1e-9)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        unit: np.ndarray = pooled / np.maximum(norms, 1e-12)
        return unit

    def _layer(self, x: np.ndarray, layer: _Layer, bias: np.ndarray) -> np.ndarray:
        batch, width, hidden = x.shape
        head_dim = hidden // self._heads
        qkv = _linear(x, layer.qkv_w, layer.qkv_b).reshape(batch, width, 3, self._heads, head_dim)
        q, k, v = qkv.transpose(2, 0, 3, 1, 4)  # each (batch, heads, width, head_dim)
        scores = (q @ k.transpose(0, 1, 3, 2)) * np.float32(1.0 / np.sqrt(head_dim)) + bias
        scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
        scores /= scores.sum(axis=-1, keepdims=True)
        context = (scores @ v).transpose(0, 2, 1, 3).reshape(batch, width, hidden)
        x = _layer_norm(x + _linear(context, layer.out_w, layer.out_b), layer.ln1_w, layer.ln1_b, self._eps)
        inner = _gelu_(_linear(x, layer.ffn_in_w, layer.ffn_in_b))
        return _layer_norm(x + _linear(inner, layer.ffn_out_w, layer.ffn_out_b), layer.ln2_w, layer.ln2_b, self._eps)


def _one_blas_thread() -> Callable[[], AbstractContextManager[object]]:
    """A context that runs numpy's BLAS on one thread (a no-op without the optional threadpoolctl).

    These products are small: OpenBLAS's threads cost more than they save, and on a busy machine (the test
    suite on 2 cores) a descheduled worker stalls its peer. Measured on 2 busy cores: one question ~25 ms instead
    of ~120 ms, 200 questions 3.9 s instead of 5.9 s, and less CPU time either way.
    """
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:
        return contextlib.nullcontext
    controller = ThreadpoolController()
    return lambda: controller.limit(limits=1, user_api="blas")


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _pooling_folder(folder: Path) -> Path | None:
    """The Pooling module's folder when modules.json is Transformer (weights at the root), Pooling, Normalize."""
    modules = _read_json(folder / "modules.json")
    if not isinstance(modules, list) or not all(isinstance(m, dict) for m in modules):
        return None
    kinds = [str(m.get("type", "")) for m in modules]
    if [k.rsplit(".", 1)[-1] for k in kinds] != list(_ST_MODULES) or not all(
            k.startswith("sentence_transformers.") for k in kinds) or modules[0].get("path", "") != "":
        return None
    return folder / str(modules[1].get("path", ""))


def _is_supported(folder: Path) -> bool:
    """True only for a BERT + mean pooling + Normalize sentence-transformers folder (the packaged model's layout)."""
    pooling_folder = _pooling_folder(folder)
    pooling = _read_json(pooling_folder / "config.json") if pooling_folder else None
    if not isinstance(pooling, dict) or pooling.get("pooling_mode_mean_tokens") is not True or any(
            v for k, v in pooling.items() if k.startswith("pooling_mode_") and k != "pooling_mode_mean_tokens"):
        return False
    st_meta = _read_json(folder / "config_sentence_transformers.json")
    if isinstance(st_meta, dict) and st_meta.get("default_prompt_name"):  # a prompt prepended to every text
        return False
    config = _read_json(folder / "config.json")
    st_config = _read_json(folder / "sentence_bert_config.json")
    return (isinstance(config, dict) and config.get("model_type") == "bert" and config.get("hidden_act") == "gelu"
            and config.get("position_embedding_type", "absolute") == "absolute"
            and isinstance(st_config, dict) and isinstance(st_config.get("max_seq_length"), int)
            and not st_config.get("do_lower_case", False)  # sentence-transformers would lowercase first
            and (folder / "model.safetensors").is_file() and (folder / "tokenizer.json").is_file())


def load_bert_encoder(folder: str | Path) -> BertEncoder | None:
    """The numpy encoder for a local sentence-transformers folder of exactly the supported layout, else None.

    None (a hub name, another architecture, pooling or module list, missing files or weights) means:
    use sentence-transformers, which knows every layout.
    """
    path = Path(folder)
    if not path.is_dir() or not _is_supported(path):
        return None
    config = _read_json(path / "config.json")
    max_seq_length = int(_read_json(path / "sentence_bert_config.json")["max_seq_length"])
    tokenizer = Tokenizer.from_file(str(path / "tokenizer.json"))
    try:
        return BertEncoder(load_file(str(path / "model.safetensors")), tokenizer, config, max_seq_length)
    except KeyError:  # a weight this forward pass needs is missing: not the layout it was written for
        return None
