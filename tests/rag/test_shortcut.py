"""Tiers, guard, leave-one-out and persistence with the real packaged model and a real FAISS index."""

from __future__ import annotations

import threading

import pytest

import rag
from config import load_settings
from rag.shortcut import FaissKnowledgeBase
from rag.store import CorruptIndexError, Entry, ModelMismatchError
from tests.rag.pairs import NEAR_MISSES, PARAPHRASES, RETYPED

pytestmark = pytest.mark.integration


def _entries(pairs) -> list[Entry]:
    stored = dict.fromkeys(p[0] for p in pairs)  # unique, in order
    return [Entry(question=q, answer=f"answer {i}", task_id=f"task-{i}", source="test") for i, q in enumerate(stored)]


@pytest.fixture(scope="module")
def calibration_kb(tmp_path_factory, embedder):
    """One knowledge base for the module's lookups, which only read it (encoding it was most of each test's time)."""
    settings = load_settings(RAG_INDEX_DIR=tmp_path_factory.mktemp("calibration") / "index")
    kb = FaissKnowledgeBase(settings, embedder=embedder)
    kb.add(_entries(RETYPED + PARAPHRASES + [(a, b) for a, b, _ in NEAR_MISSES]))
    return kb


def _answer_of(kb: FaissKnowledgeBase, question: str) -> str:
    return next(e.answer for e in kb.store.entries() if e.question == question)


@pytest.mark.parametrize("stored,asked", RETYPED)
def test_retyped_question_answers_directly(calibration_kb, stored, asked):
    result = calibration_kb.lookup(asked)
    assert result.tier == "answer", result.note
    assert result.answer == _answer_of(calibration_kb, stored)
    assert result.best.similarity >= 0.999


def test_true_paraphrases_answer_directly(calibration_kb):
    """Measured: 20 of 22 paraphrases reach the 0.92 default; the other two (0.865, 0.881) become candidates."""
    tiers = {}
    for stored, asked in PARAPHRASES:
        result = calibration_kb.lookup(asked)
        tiers[asked] = result.tier
        if result.tier == "answer":
            assert result.answer == _answer_of(calibration_kb, stored)
            assert result.best.question == stored
        else:
            assert result.tier == "candidates" and "below the answer threshold" in result.note
            assert _answer_of(calibration_kb, stored) in result.context
    assert sum(t == "answer" for t in tiers.values()) >= 20, tiers


@pytest.mark.parametrize("stored,asked,kind", NEAR_MISSES)
def test_near_misses_never_answer_directly(calibration_kb, stored, asked, kind):
    result = calibration_kb.lookup(asked)
    assert result.tier != "answer" and result.answer is None
    if result.best.similarity >= calibration_kb.settings.RAG_ANSWER_THRESHOLD:
        assert result.tier == "candidates" and "guard:" in result.note and "demoted" in result.note


def test_km_vs_miles_demotion_is_explained(make_kb):
    kb = make_kb([Entry("How far is London from Paris in kilometers?", "344", task_id="km")])
    result = kb.lookup("How far is London from Paris in miles?")
    assert result.tier == "candidates"
    assert "guard: units differ (miles vs kilometers) — demoted to candidates" in result.note
    assert "344" in result.context and "may be different questions" in result.context
    assert "How far is London from Paris in kilometers?" in result.context


def test_leave_one_out_even_for_the_only_exact_match(make_kb):
    kb = make_kb([Entry("What is the capital city of France?", "Paris", task_id="t-france"),
                  Entry("What is the boiling point of water in Celsius?", "100", task_id="t-water")])
    assert kb.lookup("What is the capital city of France?").tier == "answer"
    result = kb.lookup("What is the capital city of France?", exclude_task_id="t-france")
    assert result.tier != "answer"
    assert all(m.task_id != "t-france" for m in result.matches)
    assert "t-france left out" in result.note
    only = make_kb([Entry("What is the capital city of France?", "Paris", task_id="solo")],
                   index_dir=kb.store.directory.parent / "solo")
    alone = only.lookup("What is the capital city of France?", exclude_task_id="solo")
    assert (alone.tier, alone.matches) == ("miss", [])


def test_persistence_round_trip(make_kb, embedder, tmp_path):
    built = make_kb(_entries(PARAPHRASES))
    questions = [asked for _, asked in PARAPHRASES[:6]] + ["Who painted the Sistine Chapel ceiling?"]
    before = [built.lookup(q) for q in questions]
    reopened = FaissKnowledgeBase(load_settings(RAG_INDEX_DIR=tmp_path / "index"), embedder=embedder)
    after = [reopened.lookup(q) for q in questions]
    assert [(r.tier, r.answer, r.matches) for r in before] == [(r.tier, r.answer, r.matches) for r in after]


def test_add_and_remove_without_rebuild(make_kb):
    kb = make_kb([Entry("What is the capital city of France?", "Paris", task_id="fr")])
    assert kb.lookup("What is the capital of Italy?").tier != "answer"
    kb.add([Entry("What is the capital of Italy?", "Rome", task_id="it")])
    assert kb.lookup("what is the capital of italy").answer == "Rome"
    assert kb.remove(["it"]) == 1
    assert kb.lookup("What is the capital of Italy?").tier != "answer"
    assert [e.task_id for e in kb.store.entries()] == ["fr"]


def test_concurrent_lookups_from_threads(calibration_kb):
    questions = [asked for _, asked in RETYPED + PARAPHRASES] * 2
    expected = {q: calibration_kb.lookup(q) for q in questions}
    results: dict[int, list] = {}

    def worker(n: int) -> None:
        results[n] = [calibration_kb.lookup(q) for q in questions[n::4]]

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for n, got in results.items():
        for q, r in zip(questions[n::4], got, strict=True):
            assert (r.tier, r.answer, r.best.similarity) == (expected[q].tier, expected[q].answer,
                                                             expected[q].best.similarity)
    assert sum(len(v) for v in results.values()) == len(questions)


def test_missing_and_empty_directories_miss(make_kb, tmp_path):
    missing = make_kb(index_dir=tmp_path / "does-not-exist")
    result = missing.lookup("What is the capital city of France?")
    assert (result.tier, result.matches) == ("miss", []) and "empty" in result.note
    (tmp_path / "empty").mkdir()
    assert make_kb(index_dir=tmp_path / "empty").lookup("anything").tier == "miss"


def test_corrupt_index_raises_a_clear_error(make_kb):
    kb = make_kb([Entry("What is the capital city of France?", "Paris", task_id="fr")])
    (kb.store.directory / "index.faiss").write_bytes(b"\x00" * 64)
    fresh = FaissKnowledgeBase(kb.settings, embedder=kb.embedder)
    with pytest.raises(CorruptIndexError) as err:
        fresh.lookup("What is the capital city of France?")
    message = str(err.value)
    assert str(kb.store.directory / "index.faiss") in message and "python -m rag build" in message


def test_fifty_thousand_character_question(make_kb):
    kb = make_kb([Entry("What is the capital city of France?", "Paris", task_id="fr")])
    huge = "What is the capital city of France? " + "x" * 50_000
    result = kb.lookup(huge)
    assert result.tier in ("answer", "candidates", "hints", "miss")
    assert result.tier != "answer" or result.answer == "Paris"


def test_attachment_answers_only_for_the_same_file(make_kb):
    kb = make_kb([Entry("What is the total of the Sales column in the attached spreadsheet?", "60",
                        task_id="xl", file_name="xl.xlsx")])
    q = "What is the total of the Sales column in the attached spreadsheet?"
    without = kb.lookup(q)
    assert without.tier == "candidates" and "depends on attachment xl.xlsx" in without.note
    assert kb.lookup(q, file_name="/tmp/run/xl.xlsx").answer == "60"
    assert kb.lookup(q, file_name="other.xlsx").tier == "candidates"


def test_conflicting_stored_answers_are_not_answered(make_kb):
    kb = make_kb([Entry("What is the capital city of France?", "Paris", task_id="a"),
                  Entry("Which city is the capital of France?", "Lyon", task_id="b")])
    result = kb.lookup("what is the capital city of france")
    assert result.tier == "candidates" and "conflicting stored answers" in result.note


def test_hints_from_the_llm(make_kb):
    prompts: list[str] = []

    def hint_llm(prompt: str) -> str:
        prompts.append(prompt)
        return "1. Look the figure up on the city's official statistics page."

    kb = make_kb([Entry("What was the population of Paris in 2010?", "2.2 million", task_id="p")], hint_llm=hint_llm,
                 RAG_CANDIDATE_THRESHOLD=0.99, RAG_HINT_THRESHOLD=0.3)
    result = kb.lookup("How many inhabitants did Lyon have in 2015?")
    assert result.tier == "hints" and "official statistics" in result.context
    assert "hints written by the LLM" in result.note
    assert "How many inhabitants did Lyon have in 2015?" in prompts[0] and "2.2 million" in prompts[0]


def test_failing_hint_llm_falls_back_to_a_listing(make_kb):
    def broken(prompt: str) -> str:
        raise TimeoutError("endpoint hung")

    kb = make_kb([Entry("What was the population of Paris in 2010?", "2.2 million", task_id="p")], hint_llm=broken,
                 RAG_CANDIDATE_THRESHOLD=0.99, RAG_HINT_THRESHOLD=0.3)
    result = kb.lookup("How many inhabitants did Lyon have in 2015?")
    assert result.tier == "hints"
    assert "hint LLM failed (TimeoutError: endpoint hung)" in result.note
    assert ("What was the population of Paris in 2010?" in result.context
            and "NOT this question's answer" in result.context)


def test_hints_without_llm_or_switched_off(make_kb):
    called = []
    kb = make_kb([Entry("What was the population of Paris in 2010?", "2.2 million", task_id="p")],
                 hint_llm=lambda p: called.append(p) or "x", RAG_LLM_HINTS=False,
                 RAG_CANDIDATE_THRESHOLD=0.99, RAG_HINT_THRESHOLD=0.3)
    result = kb.lookup("How many inhabitants did Lyon have in 2015?")
    assert result.tier == "hints" and not called and "RAG_LLM_HINTS is false" in result.note


def test_far_question_is_a_miss_with_its_nearest_recorded(make_kb):
    kb = make_kb([Entry("What was the population of Paris in 2010?", "2.2 million", task_id="p")])
    result = kb.lookup("Transcribe the attached audio recording of the lecture.")
    assert result.tier == "miss" and result.context == "" and "hint threshold" in result.note
    assert result.best is not None and result.best.similarity < 0.5


def test_index_of_another_model_is_refused(make_kb, tmp_path):
    make_kb([Entry("What is the capital city of France?", "Paris", task_id="fr")])
    other = FaissKnowledgeBase(load_settings(RAG_INDEX_DIR=tmp_path / "index", EMBEDDING_MODEL="some/other-model"))
    with pytest.raises(ModelMismatchError, match="python -m rag build"):
        other.lookup("What is the capital city of France?")


def test_rag_disabled_means_an_empty_knowledge_base(tmp_path):
    kb = rag.open_knowledge_base(load_settings(RAG_ENABLED=False))
    result = kb.lookup("What is the capital city of France?")
    assert (result.tier, result.note) == ("miss", "RAG_ENABLED is false")


def test_describe_and_stats(make_kb):
    kb = make_kb([Entry("What is the capital city of France?", "Paris", task_id="fr", level=1,
                        source="gaia:validation")])
    assert kb.describe().startswith("1 entries (packaged:all-MiniLM-L6-v2)")
    assert kb.stats()["by_source"] == {"gaia:validation": 1} and kb.stats()["by_level"] == {"1": 1}
