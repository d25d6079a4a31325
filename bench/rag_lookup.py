"""RAG benchmark of a 100,000-entry index.

Measures lookup cost vs a bare encode + FAISS search, build rate, memory, start-up, and the
similarity calibration of paraphrase / near-miss pairs.

    python bench/rag_lookup.py [--entries 100000] [--real 3000] [--queries 200]

To stay fast, `--real` entries are embedded with the model; the rest are random unit vectors
(they cost FAISS the same). Build time per 1,000 entries is measured with real encoding.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")  # a benchmark script, not the app: no hub access

SUBJECTS = ["Paris", "Berlin", "the Amazon river", "Mount Everest", "Jupiter", "the Eiffel Tower", "Mercedes Sosa",
            "the Roman Empire", "Lake Baikal", "the Great Wall", "Tokyo", "the Nile", "Marie Curie", "Saturn", "Canada"]
ASKS = ["What was the population of {s} in {y}?", "How far is {s} from the sea in {u}?",
        "Who described {s} first in {y}?", "What is the height of {s} in {u}?",
        "How many articles about {s} were published in {y}?",
        "What temperature in {t} was recorded at {s} in {y}?", "Which book about {s} won a prize in {y}?"]
UNITS, TEMPS = ["kilometers", "miles", "meters", "feet"], ["Celsius", "Fahrenheit"]


def synthetic_questions(n: int, seed: int) -> list[str]:
    """Varied template questions (subjects, years, units) — realistic text for the encoder."""
    rng = random.Random(seed)
    return [rng.choice(ASKS).format(s=rng.choice(SUBJECTS), y=rng.randint(1800, 2024), u=rng.choice(UNITS),
                                    t=rng.choice(TEMPS)) + f" (variant {i})" for i in range(n)]


def rss_mb() -> float:
    """Resident memory of this process in MB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


STARTUP_PROBE = """
import json, sys, time
t0 = time.perf_counter()
import rag
from config import load_settings
kb = rag.open_knowledge_base(load_settings(RAG_INDEX_DIR=%r))
t1 = time.perf_counter()
def rss():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
report = {"import_s": t1 - t0, "rss_open": rss(),
          "heavy_after_open": [m for m in ("torch", "sentence_transformers", "faiss") if m in sys.modules]}
if %r:
    kb.lookup("What was the population of Paris in 2010?")
    t2 = time.perf_counter()
    kb.lookup("How far is Berlin from the sea in miles?")
    report.update(first_s=t2 - t1, second_s=time.perf_counter() - t2, rss_first=rss())
print(json.dumps(report))
"""


def timed_subprocess(code: str) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True, capture_output=True,
                   env={**os.environ, "PYTHONWARNINGS": "ignore"})
    return time.perf_counter() - start


def build_index(index_dir: Path, entries: int, real: int) -> dict[str, float]:
    import numpy as np

    from rag.embeddings import get_embedder
    from rag.store import Entry, VectorStore

    embedder = get_embedder("")
    questions = synthetic_questions(real, seed=1)
    start = time.perf_counter()
    vectors = embedder.encode(questions[:1000], batch_size=64)
    per_1000_encode = time.perf_counter() - start
    store = VectorStore(index_dir)
    store.reset(embedder.model_id, embedder.dim)
    start = time.perf_counter()
    store.add([Entry(q, f"answer {i}", task_id=f"real-{i}", source="bench") for i, q in enumerate(questions[:1000])],
              vectors, embedder.model_id)
    per_1000_add = time.perf_counter() - start
    rest = embedder.encode(questions[1000:], batch_size=64) if real > 1000 else np.zeros((0, embedder.dim), np.float32)
    store.add([Entry(q, f"answer {i}", task_id=f"real-{i}", source="bench")
               for i, q in enumerate(questions[1000:], 1000)],
              rest, embedder.model_id)
    rng = np.random.default_rng(0)
    fill = entries - real
    for offset in range(0, fill, 20_000):
        n = min(20_000, fill - offset)
        block = rng.standard_normal((n, embedder.dim)).astype(np.float32)
        block /= np.linalg.norm(block, axis=1, keepdims=True)
        store.add([Entry(f"synthetic question {offset + i}", "x", source="random") for i in range(n)], block,
                  embedder.model_id)
    start = time.perf_counter()
    store.save()
    return {"encode_1000_s": per_1000_encode, "add_1000_s": per_1000_add, "save_s": time.perf_counter() - start}


def compare_lookup(index_dir: Path, queries: int) -> dict[str, Any]:
    """Interleaved: kb.lookup vs embedder encode + index.search on the same loaded index."""
    import numpy as np

    from config import load_settings
    from rag.shortcut import FaissKnowledgeBase

    kb = FaissKnowledgeBase(load_settings(RAG_INDEX_DIR=index_dir))
    start = time.perf_counter()
    kb.store.ensure_loaded()
    load_s = time.perf_counter() - start
    model = kb.embedder._encoder  # the same encoder object: only the lookup's own overhead differs
    assert model is not None  # ensure_loaded / the warm-up lookups loaded it
    index = kb.store._index
    stored = [e.question for e in kb.store.entries()[:3000] if e.source == "bench"]
    rng = random.Random(7)
    asked = [rng.choice(stored) for _ in range(queries // 2)] + synthetic_questions(queries - queries // 2, seed=99)
    rng.shuffle(asked)
    for q in asked[:5]:  # warm-up
        kb.lookup(q)
    lookup_t: list[float] = []
    bare_t: list[float] = []
    tiers: dict[str, int] = {}
    for q in asked:
        t = time.perf_counter()
        vec = model.encode([q])
        index.search(np.ascontiguousarray(vec, dtype=np.float32), kb.settings.RAG_TOP_K)
        bare_t.append(time.perf_counter() - t)
        t = time.perf_counter()
        result = kb.lookup(q, exclude_task_id="real-5")  # leave-one-out on, as in an evaluation run
        lookup_t.append(time.perf_counter() - t)
        tiers[result.tier] = tiers.get(result.tier, 0) + 1
    return {"load_s": load_s, "lookup_ms": 1000 * statistics.median(lookup_t),
            "bare_ms": 1000 * statistics.median(bare_t), "lookup_mean_ms": 1000 * statistics.fmean(lookup_t),
            "bare_mean_ms": 1000 * statistics.fmean(bare_t), "tiers": tiers, "entries": len(kb.store)}


def calibration() -> None:
    from config import load_settings
    from rag import guard
    from rag.embeddings import get_embedder
    from tests.rag.pairs import KNOWN_SLIPS, NEAR_MISSES, PARAPHRASES

    settings = load_settings()
    embedder = get_embedder("")

    def sims(pairs: list[tuple[str, str]]) -> list[tuple[float, bool]]:
        out = []
        for stored, asked in pairs:
            v = embedder.encode([stored, asked])
            out.append((float(v[0] @ v[1]), guard.check(asked, stored).agree))
        return out

    print(f"\ncalibration (answer threshold {settings.RAG_ANSWER_THRESHOLD}, "
          f"candidate {settings.RAG_CANDIDATE_THRESHOLD}):")
    for name, pairs in (("paraphrases", PARAPHRASES), ("near-misses", [(a, b) for a, b, _ in NEAR_MISSES]),
                        ("unguarded different questions", KNOWN_SLIPS)):
        rows = sims(pairs)
        values = sorted(s for s, _ in rows)
        direct = sum(s >= settings.RAG_ANSWER_THRESHOLD and ok for s, ok in rows)
        print(f"  {name:<31} n={len(rows):>2}  cosine min {values[0]:.3f} median {statistics.median(values):.3f} "
              f"max {values[-1]:.3f}  answered directly: {direct}/{len(rows)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--entries", type=int, default=100_000)
    parser.add_argument("--real", type=int, default=3000, help="entries embedded with the model (>= 1000)")
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    real = max(1000, min(args.real, args.entries))

    base_rss = rss_mb()
    start = time.perf_counter()
    from rag.embeddings import get_embedder

    get_embedder("").load()
    print(f"model load: {time.perf_counter() - start:.2f}s, RSS +{rss_mb() - base_rss:.0f} MB")

    with tempfile.TemporaryDirectory(prefix="rag-bench-") as tmp:
        index_dir = Path(tmp) / "index"
        start = time.perf_counter()
        build = build_index(index_dir, args.entries, real)
        size_mb = sum(f.stat().st_size for f in index_dir.iterdir()) / 2**20
        print(f"build: {args.entries} entries ({real} encoded) in {time.perf_counter() - start:.1f}s; "
              f"per 1,000 real entries: encode {build['encode_1000_s']:.2f}s + "
              f"add {build['add_1000_s'] * 1000:.1f}ms; save {build['save_s']:.2f}s; on disk {size_mb:.0f} MB")
        res = compare_lookup(index_dir, args.queries)
        print(f"index load: {res['load_s']:.2f}s for {res['entries']} entries; this process's RSS {rss_mb():.0f} MB "
              f"(model, index, and the builder's freed memory)")
        ratio = res["lookup_ms"] / res["bare_ms"]
        print(f"lookup median {res['lookup_ms']:.2f} ms (mean {res['lookup_mean_ms']:.2f}) "
              f"vs bare encode+search median {res['bare_ms']:.2f} ms (mean {res['bare_mean_ms']:.2f}): "
              f"ratio {ratio:.2f}x (goal <= 1.2x); tiers {res['tiers']}")

        bare_python = timed_subprocess("pass")
        started = timed_subprocess(STARTUP_PROBE % (str(index_dir), False))
        out = subprocess.run([sys.executable, "-c", STARTUP_PROBE % (str(index_dir), True)], cwd=ROOT, check=True,
                             capture_output=True, text=True, env={**os.environ, "PYTHONWARNINGS": "ignore"})
        probe = json.loads(out.stdout.strip().splitlines()[-1])
        print(f"start-up (fresh processes): python alone {bare_python:.2f}s; `import rag` + open_knowledge_base "
              f"{started:.2f}s wall ({probe['import_s']:.2f}s in-process, RSS {probe['rss_open']:.0f} MB, "
              f"heavy modules {probe['heavy_after_open'] or 'none'}); first lookup {probe['first_s']:.2f}s "
              f"(model + {args.entries}-entry index load), RSS {probe['rss_first']:.0f} MB; "
              f"second lookup {1000 * probe['second_s']:.1f} ms")
    calibration()


if __name__ == "__main__":
    main()
