"""The official GAIA scorer, rule by rule, and explain()'s format-only-miss detection."""

from __future__ import annotations

import pytest

from evaluation.scorer import Explanation, explain, normalize_number_str, normalize_str, question_scorer, split_string

NUMBER_CASES = [
    ("4", "4", True),
    ("4.0", "4", True),
    ("4.", "4", True),
    (" 4 ", "4", True),
    ("04", "4", True),
    ("1,000", "1000", True),  # commas are removed before float()
    ("1000", "1,000.0".replace(",", ""), True),
    ("$1,234.50", "1234.5", True),
    ("12%", "12", True),
    ("$5", "5", True),
    ("1e3", "1000", True),
    ("1_000", "1000", True),  # Python's float() accepts underscores
    ("-3", "-3", True),
    ("0.1", "0.10", True),
    ("3.14", "3.14", True),
    ("10", "1e1", True),
    ("1,0,0,0", "1000", True),  # every comma goes, wherever it is
    ("5 km", "5", False),  # units make float() fail -> inf -> wrong
    ("5km", "5", False),
    ("five", "5", False),
    ("1/2", "0.5", False),
    ("0.5", "1/2", False),  # truth "1/2" is not a float: string branch, "12" vs "05"
    ("3.14159", "3.14", False),
    ("-5", "5", False),
    ("", "0", False),
    ("None", "0", False),
    (None, "0", False),
    ("€5", "5", False),  # only $ is stripped
    ("5 %", "5", True),  # the space survives but float() strips it
    ("inf", "inf", True),  # quirk: the unparseable marker equals an "inf" truth
    ("nan", "nan", False),
    ("4 4", "44", False),
    ("approximately 4", "4", False),
    ("4\n", "4", True),
]

LIST_CASES = [
    ("a, b", "a, b", True),
    ("a,b", "a, b", True),
    ("A , B", "a, b", True),
    ("a; b", "a, b", True),  # either separator splits
    ("b, a", "a, b", False),  # order matters
    ("a, b, c", "a, b", False),  # lengths must match
    ("a", "a, b", False),
    ("a, b,", "a, b", False),  # the trailing empty element counts
    ("1, 2, 3", "1, 2, 3", True),
    ("1.0, 2, 3.00", "1, 2, 3", True),  # numeric elements compared as numbers
    ("$1, 2%, 3", "1, 2, 3", True),
    ("1 m, 2, 3", "1, 2, 3", False),
    ("one, 2, 3", "1, 2, 3", False),
    ("St. Louis, Paris", "St. Louis, Paris", True),
    ("St Louis, Paris", "St. Louis, Paris", False),  # punctuation kept inside list elements
    ("saint-petersburg, rome", "saint petersburg, rome", False),
    ("New York, Rome", "newyork, rome", True),  # whitespace removed
    ("Apple, Banana, Cherry", "apple, banana, cherry", True),
    ("apple, banana and cherry", "apple, banana, cherry", False),
    ("1,000", "1,000", True),  # quirk: a thousands separator in the truth makes a list
    ("1000", "1,000", False),
    ("1;000", "1,000", True),
    ("x, 7", "x, 7.0", True),
    ("x, seven", "x, 7", False),
    (None, "a, b", False),
    ("", "a, b", False),
    (",", "a, b", False),
    ("a.,b", "a., b", True),
    ("a, b.", "a, b", False),
    ("1, 2", "1; 2", True),
    ("3, 1, 2", "1, 2, 3", False),
]

STRING_CASES = [
    ("Paris", "Paris", True),
    ("paris", "Paris", True),
    ("PARIS", "Paris", True),
    (" Paris ", "Paris", True),
    ("Paris.", "Paris", True),  # punctuation removed in the string branch
    ("Saint Petersburg", "saint-petersburg", True),
    ("sea gull", "seagull", True),
    ("O'Brien", "OBrien", True),
    ("U.S.A.", "USA", True),
    ("Right!", "right", True),
    ("The Beatles", "Beatles", False),  # articles count
    ("Paris, France", "Paris", False),
    ("Pari", "Paris", False),
    ("London", "Paris", False),
    ("", "Paris", False),
    (None, "None", True),  # None is the string "None"
    (None, "Paris", False),
    ("None", "none", True),
    ("égalité", "Égalité", True),
    ("café", "cafe", False),  # only ASCII punctuation and case are normalised
    ("1/2", "1/2", True),
    ("12", "1/2", True),  # "/" is punctuation: both become "12"
    ("0.5", "1/2", False),
    ("a\tb\nc", "abc", True),
    ("e=mc^2", "E = mc²", False),
    ("3 apples", "3 apples", True),
    ("3apples", "3 apples", True),
    ("three apples", "3 apples", False),
    ("b-a", "ab", False),
    ("#hashtag", "hashtag", True),
]


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
    [("4", "4", "number"), ("x", "1e3", "number"), ("a", "a, b", "list"), ("a", "a; b", "list"), ("a", "Paris", "string")],
)
def test_explain_names_the_rule(answer, truth, rule):
    assert explain(answer, truth).rule == rule


def test_explain_normalised_forms():
    assert explain("$1,000", "1000").normalized_answer == "1000.0"
    assert explain("5 km", "5").normalized_answer == "unparseable"
    exp = explain("A, 2.0", "a, 2")
    assert (exp.normalized_answer, exp.normalized_truth, exp.correct) == ("a | 2.0", "a | 2.0", True)
    assert explain("Saint Petersburg", "saint-petersburg").normalized_truth == "saintpetersburg"


FORMAT_ONLY = [
    ("5 km", "5", "units"),
    ("5", "5 km", "units"),
    ("b, a", "a, b", "list order"),
    ("cherry, apple, banana", "apple, banana, cherry", "list order"),
    ("apple, banana and cherry", "apple, banana, cherry", None),
    ("The Beatles", "Beatles", "articles"),
    ("an apple", "apple", "articles"),
    ("five", "5", "number words"),
    ("twenty-one", "21", "number words"),
    ("one hundred and five", "105", "number words"),
    ("5", "five", "number words"),
    ("1,000", "1000 m", "thousands separators"),
    ("apple, banana and cherry", "apple, banana, cherry", "list separators"),
    ("5.0 apples", "5 apples", "trailing .0"),
    ("50 percent", "50", "currency/percent"),
    ("€5", "5", "currency/percent"),
    ("5 dollars", "5", None),
    ("St Louis, Paris", "St. Louis, Paris", None),
]


@pytest.mark.parametrize(("answer", "truth", "reason"), FORMAT_ONLY)
def test_format_only_miss(answer, truth, reason):
    exp = explain(answer, truth)
    assert exp.correct is False
    assert exp.format_only_miss is True
    assert exp.lenient_reason
    if reason:
        assert reason in exp.lenient_reason


@pytest.mark.parametrize(
    ("answer", "truth"),
    [
        ("3 apples", "3 oranges"),  # units differ on both sides: a real miss
        ("6", "5"),
        ("London", "Paris"),
        ("a, c", "a, b"),
        ("1/2", "0.5"),
        ("", "5"),
        (None, "Paris"),
        ("-5", "5"),
        ("3.5", "35"),
        ("a, b", "a, b, c"),
    ],
)
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
    assert set(data) == {"correct", "rule", "normalized_answer", "normalized_truth", "format_only_miss", "lenient_reason"}
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
