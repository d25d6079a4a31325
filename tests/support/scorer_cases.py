"""The scorer's test cases as one shared table: its own tests, and the answer-extraction round trip, use them.

Each case is `(answer, truth, verdict)` under the official GAIA scorer (`evaluation.scorer.question_scorer`);
`answer` may be None (the official scorer reads it as the string "None").
"""

from __future__ import annotations

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

REAL_MISSES = [
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
]

SCORER_CASES: list[tuple[str | None, str, bool]] = [
    *NUMBER_CASES, *LIST_CASES, *STRING_CASES,
    *((answer, truth, False) for answer, truth, _ in FORMAT_ONLY),
    *((answer, truth, False) for answer, truth in REAL_MISSES),
]
"""Every (answer, truth, verdict) the scorer's tests pin."""
