"""The official GAIA scorer, rule by rule, and explain()'s format-only-miss detection."""

from __future__ import annotations

import pytest

from evaluation.scorer import Explanation, explain, normalize_number_str, normalize_str, question_scorer, split_string
from tests.support.scorer_cases import FORMAT_ONLY, LIST_CASES, NUMBER_CASES, REAL_MISSES, STRING_CASES


@pytest.mark.parametrize(("answer", "truth", "expected"), NUMBER_CASES)
def test_number_branch(answer, truth, expected):
    assert question_scorer(answer, truth) is expected


@pytest.mark.parametrize(("answer", "truth", "expected"), LIST_CASES)
def test_list_branch(answer, truth, expected):
    assert question_scorer(answer, truth) is expected


@pytest.mark.parametrize(("answer", "truth", "expected"), STRING_CASES)
def test_string_branch(answer, truth, expected):
    assert question_scorer(answer, truth) is expected


@pytest.mark.parametrize("answer", [123, 4.0, ["a"], {"x": 1}, b"bytes", object()])
def test_never_raises_on_odd_types(answer):
    assert isinstance(question_scorer(answer, "4"), bool)
    assert isinstance(question_scorer(answer, "a, b"), bool)
    assert isinstance(explain(answer, "x").correct, bool)


def test_non_string_numbers_are_stringified():
    assert question_scorer(4, "4") is True
    assert question_scorer(4.0, "4") is True


def test_helpers_match_official_definitions():
    assert normalize_number_str("$1,000%") == 1000.0
    assert normalize_number_str("abc") == float("inf")
    assert split_string("a,b;c") == ["a", "b", "c"]
    assert split_string("a,") == ["a", ""]
    assert normalize_str(" A.b ", remove_punct=False) == "a.b"
    assert normalize_str(" A.b ") == "ab"


@pytest.mark.parametrize(
    ("answer", "truth", "rule"),
    [("4", "4", "number"), ("x", "1e3", "number"), ("a", "a, b", "list"), ("a", "a; b", "list"),
     ("a", "Paris", "string")],
)
def test_explain_names_the_rule(answer, truth, rule):
    assert explain(answer, truth).rule == rule


def test_explain_normalised_forms():
    assert explain("$1,000", "1000").normalized_answer == "1000.0"
    assert explain("5 km", "5").normalized_answer == "unparseable"
    exp = explain("A, 2.0", "a, 2")
    assert (exp.normalized_answer, exp.normalized_truth, exp.correct) == ("a | 2.0", "a | 2.0", True)
    assert explain("Saint Petersburg", "saint-petersburg").normalized_truth == "saintpetersburg"


@pytest.mark.parametrize(("answer", "truth", "reason"), FORMAT_ONLY)
def test_format_only_miss(answer, truth, reason):
    exp = explain(answer, truth)
    assert exp.correct is False
    assert exp.format_only_miss is True
    assert exp.lenient_reason
    if reason:
        assert reason in exp.lenient_reason


@pytest.mark.parametrize(("answer", "truth"), REAL_MISSES)
def test_real_misses_are_not_format_only(answer, truth):
    exp = explain(answer, truth)
    assert exp.correct is False
    assert exp.format_only_miss is False
    assert exp.lenient_reason is None


def test_correct_answers_are_never_format_only():
    exp = explain("Paris", "paris")
    assert exp.correct and not exp.format_only_miss and exp.lenient_reason is None


def test_explain_to_dict_is_json_ready():
    import json

    data = explain("b, a", "a, b").to_dict()
    assert json.loads(json.dumps(data)) == data
    assert set(data) == {"correct", "rule", "normalized_answer", "normalized_truth", "format_only_miss",
                         "lenient_reason"}
    assert isinstance(explain("x", "y"), Explanation)


# --- the Scorer seam ------------------------------------------------------------------------------------
def test_official_scorer_is_question_scorer_with_its_explanation():
    from evaluation.scorer import official_scorer

    right, wrong = official_scorer("1,000", "1000"), official_scorer("a, b", "b, a")
    assert right.correct and right.scorer == "official" and right.explanation.rule == "number"
    assert not wrong.correct and wrong.format_only_miss and wrong.explanation.lenient_reason


def test_a_score_survives_its_dict_and_an_old_records_explanation_reads_as_official():
    from evaluation.scorer import Score, explain, official_scorer

    score = official_scorer("b, a", "a, b")
    assert Score.from_dict(score.to_dict()) == score
    old = Score.from_dict(explain("4", "4").to_dict())
    assert old.correct and old.scorer == "official" and old.explanation.normalized_truth
    judged = Score(True, "llm-judge", note="same city")
    assert Score.from_dict(judged.to_dict()) == judged and not judged.format_only_miss
