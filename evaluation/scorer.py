"""The official GAIA leaderboard scorer, reproduced exactly, plus `explain()` for reports, and the scorer seam.

`question_scorer` follows gaia-benchmark/leaderboard `scorer.py` rule for rule, including its quirks
(a unit after a number is wrong, list order matters, punctuation is kept inside list elements), so
our numbers equal the leaderboard's. `explain` adds what the report needs: the rule applied, both
normalised forms, and whether a lenient comparison would have matched ("format-only miss").

A run is scored by one `Scorer` chosen by name from `SCORERS` (the CLI's `--scorer`, the Batch and
Debug tabs); each verdict is a `Score` naming its scorer, and the run folder's run.json records it.
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any, Literal

Rule = Literal["number", "list", "string"]


# --- the official scorer --------------------------------------------------------------------------

def normalize_number_str(number_str: str) -> float:
    """Drop `$`, `%`, `,` and parse as float; unparseable gives inf (which never equals a truth)."""
    for char in ("$", "%", ","):
        number_str = number_str.replace(char, "")
    try:
        return float(number_str)
    except ValueError:
        return float("inf")


def split_string(s: str, char_list: tuple[str, ...] = (",", ";")) -> list[str]:
    """Split on any of the list separators (the official scorer keeps empty pieces)."""
    return re.split(f"[{''.join(char_list)}]", s)


def normalize_str(input_str: str, remove_punct: bool = True) -> str:
    """Remove all whitespace, optionally ASCII punctuation, and lowercase."""
    no_spaces = re.sub(r"\s", "", input_str)
    if remove_punct:
        return no_spaces.lower().translate(str.maketrans("", "", string.punctuation))
    return no_spaces.lower()


def is_float(element: Any) -> bool:
    """True when Python's float() accepts the value (so also 'nan', 'inf', '1e3', '1_000')."""
    try:
        float(element)
        return True
    except (ValueError, TypeError):
        return False


def _rule(ground_truth: str) -> Rule:
    if is_float(ground_truth):
        return "number"
    if any(char in ground_truth for char in (",", ";")):
        return "list"
    return "string"


def _as_text(value: Any) -> str:
    # The official scorer maps None to "None"; other non-strings would crash it, we stringify them.
    return "None" if value is None else value if isinstance(value, str) else str(value)


def _list_elements_equal(ma_elem: str, gt_elem: str) -> bool:
    if is_float(gt_elem):
        return normalize_number_str(ma_elem) == float(gt_elem)
    return normalize_str(ma_elem, remove_punct=False) == normalize_str(gt_elem, remove_punct=False)


def question_scorer(model_answer: str | None, ground_truth: str) -> bool:
    """True when `model_answer` matches `ground_truth` under the official GAIA rules. Never raises."""
    try:
        answer, truth = _as_text(model_answer), _as_text(ground_truth)
        rule = _rule(truth)
        if rule == "number":
            return normalize_number_str(answer) == float(truth)
        if rule == "list":
            gt_elems, ma_elems = split_string(truth), split_string(answer)
            if len(gt_elems) != len(ma_elems):
                return False
            return all(_list_elements_equal(ma, gt) for ma, gt in zip(ma_elems, gt_elems, strict=True))
        return normalize_str(answer) == normalize_str(truth)
    except Exception:  # noqa: BLE001 - a scorer that crashes loses a task; wrong is the safe verdict
        return False


# --- explain: normalised forms and the lenient "format-only miss" check ---------------------------

@dataclass
class Explanation:
    """Why an answer scored as it did, and whether only its format was wrong."""

    correct: bool
    rule: Rule
    normalized_answer: str
    normalized_truth: str
    format_only_miss: bool = False
    lenient_reason: str | None = None
    """Which lenient transformations made the answer match (e.g. 'units, list order')."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (stored in details.jsonl)."""
        return asdict(self)


def _number_form(value: float) -> str:
    return "unparseable" if value == float("inf") else repr(value)


def _normalized_forms(answer: str, truth: str, rule: Rule) -> tuple[str, str]:
    if rule == "number":
        return _number_form(normalize_number_str(answer)), repr(float(truth))
    if rule == "list":
        gts = split_string(truth)
        mas = split_string(answer)
        norm_gt = [repr(float(g)) if is_float(g) else normalize_str(g, False) for g in gts]
        norm_ma = [
            _number_form(normalize_number_str(m)) if i < len(gts) and is_float(gts[i]) else normalize_str(m, False)
            for i, m in enumerate(mas)
        ]
        return " | ".join(norm_ma), " | ".join(norm_gt)
    return normalize_str(answer), normalize_str(truth)


# Lenient comparison, only to flag "format-only misses": never used for the score itself.
_ONES = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
         "sixteen seventeen eighteen nineteen")
_TENS = "twenty thirty forty fifty sixty seventy eighty ninety"
_NUMBER_WORDS = {w: i for i, w in enumerate(_ONES.split())} | {w: 10 * i for i, w in enumerate(_TENS.split(), 2)}
_SCALES = {"hundred": 100, "thousand": 1_000, "million": 1_000_000, "billion": 1_000_000_000}
_NUMBER_RUN = re.compile(r"\b(?:(?:{})(?:[\s-]+(?:and[\s-]+)?)?)+\b".format("|".join([*_NUMBER_WORDS, *_SCALES])))
_NUM = r"-?\d+(?:\.\d+)?"
_WITH_UNIT = re.compile(rf"^({_NUM})\s*[^\W\d_][\w°²³/.]*(?:\s+[^\W\d_][\w°²³/.]*){{0,2}}$")
_CURRENCY = re.compile(r"[$€£¥%]|\b(?:usd|eur|gbp|dollars?|euros?|percent|per cent)\b")


def _words_to_number(match: re.Match[str]) -> str:
    total, current = 0, 0
    for word in re.split(r"[\s-]+", match.group(0).strip()):
        if word in _NUMBER_WORDS:
            current += _NUMBER_WORDS[word]
        elif word == "hundred":
            current = max(current, 1) * 100
        elif word in _SCALES:
            total, current = total + max(current, 1) * _SCALES[word], 0
    trailing = " " if match.group(0).endswith((" ", "-")) else ""
    return str(total + current) + trailing


def _canonical_number(match: re.Match[str]) -> str:
    text = match.group(0)
    return text.rstrip("0").rstrip(".") if "." in text else text


def _squash(text: str) -> str:
    """Whitespace and punctuation removed, but decimal points and minus signs of numbers kept."""
    text = re.sub(r"(?<=\d)\.(?=\d)", "\x00", re.sub(r"\s", "", text))
    text = re.sub(r"(?<![\w])-(?=\d)", "\x01", text)
    text = text.translate(str.maketrans("", "", string.punctuation))
    return text.replace("\x00", ".").replace("\x01", "-")


_STEPS: tuple[tuple[str, Callable[[str], str]], ...] = (
    ("number words", lambda e: _NUMBER_RUN.sub(_words_to_number, e)),
    ("currency/percent", lambda e: _CURRENCY.sub(" ", e).strip()),
    ("articles", lambda e: re.sub(r"^(?:the|an?)\s+", "", e)),
    ("trailing .0", lambda e: re.sub(r"\d+\.\d+", _canonical_number, e)),
)


def _strip_units(elems: list[str], other: list[str]) -> list[str]:
    # Only one side may carry units: "3 apples" vs "3 oranges" must stay a real miss.
    if any(_WITH_UNIT.match(o) for o in other):
        return elems
    return [m.group(1) if (m := _WITH_UNIT.match(e)) else e for e in elems]


def _lenient_match(answer: str, truth: str) -> str | None:
    """Names of the lenient transformations under which `answer` matches `truth`, or None."""
    a, t = answer.strip().lower(), truth.strip().lower()
    reasons: list[str] = []
    thousands = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
    if thousands.search(a) and not thousands.search(t):
        a, reasons = thousands.sub("", a), ["thousands separators"]
    is_list = bool(re.search(r"[,;]", t))
    gt = [e.strip() for e in re.split(r"[,;]", t.rstrip("."))] if is_list else [t.rstrip(".")]
    # "a, b and c" is a list of three unless the truth itself has "and" inside an element.
    seps = r"[,;]|\band\b" if not any(re.search(r"\band\b", e) for e in gt) else r"[,;]"
    ma = [e.strip() for e in re.split(seps, a.rstrip(".")) if e.strip()] if is_list else [a.rstrip(".")]
    if is_list and len(ma) != len(re.split(r"[,;]", a.rstrip("."))):
        reasons.append("list separators")

    def same() -> bool:
        sa, st = [_squash(e) for e in ma], [_squash(e) for e in gt]
        if not all(sa) or sorted(sa) != sorted(st):
            return False
        if sa != st:
            reasons.append("list order")
        return True

    if same():
        return ", ".join(reasons) or "case/punctuation"
    for name, step in _STEPS:
        new_ma, new_gt = [step(e) for e in ma], [step(e) for e in gt]
        if (new_ma, new_gt) != (ma, gt):
            reasons.append(name)
        ma, gt = new_ma, new_gt
        if same():
            return ", ".join(reasons)
    new_ma, new_gt = _strip_units(ma, gt), _strip_units(gt, ma)
    if (new_ma, new_gt) != (ma, gt):
        reasons.append("units")
        ma, gt = new_ma, new_gt
        if same():
            return ", ".join(reasons)
    return None


def explain(model_answer: str | None, ground_truth: str) -> Explanation:
    """Score with the official rules and say which rule applied and whether it was a format-only miss."""
    answer, truth = _as_text(model_answer), _as_text(ground_truth)
    correct = question_scorer(model_answer, ground_truth)
    try:
        rule = _rule(truth)
        norm_answer, norm_truth = _normalized_forms(answer, truth, rule)
    except Exception:  # noqa: BLE001 - explain must never break a report
        rule, norm_answer, norm_truth = "string", normalize_str(answer), normalize_str(truth)
    try:
        reason = None if correct else _lenient_match(answer, truth)
    except Exception:  # noqa: BLE001
        reason = None
    return Explanation(correct, rule, norm_answer, norm_truth, reason is not None, reason)


# --- the scorer seam: any (answer, truth) -> Score function; the official one is the default -------

@dataclass(frozen=True)
class Score:
    """One verdict of a scorer: right or not, which scorer said so, and (for the official one) why."""

    correct: bool
    scorer: str = "official"
    """The scorer's name, shown next to the verdict ('official', 'lenient', 'llm-judge', ...)."""
    explanation: Explanation | None = None
    """The official rules' normalised forms and format-only check; None when a scorer has no such view."""
    note: str = ""
    """Free text a scorer adds (an LLM judge's reason)."""

    @property
    def format_only_miss(self) -> bool:
        """Wrong, but a lenient comparison (order, units, articles, number words) would have matched."""
        return not self.correct and self.explanation is not None and self.explanation.format_only_miss

    def to_dict(self) -> dict[str, Any]:
        """The dict stored as a record's `explanation` (the Explanation's fields plus scorer and note).

        `official_correct` is the official rules' verdict, stored only when it differs from the score's.
        """
        data = self.explanation.to_dict() if self.explanation is not None else {}
        if self.explanation is not None and self.explanation.correct != self.correct:
            data["official_correct"] = self.explanation.correct
        data.update(correct=self.correct, scorer=self.scorer)
        if self.note:
            data["note"] = self.note
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any], correct: bool | None = None) -> Score:
        """Rebuild from `to_dict()` output (or an older record's bare Explanation dict)."""
        verdict = bool(data.get("correct")) if correct is None else correct
        explanation = None
        if data.get("rule") in ("number", "list", "string"):
            official = bool(data["official_correct"]) if "official_correct" in data else verdict
            explanation = Explanation(official, data["rule"], str(data.get("normalized_answer", "")),
                                      str(data.get("normalized_truth", "")), bool(data.get("format_only_miss")),
                                      data.get("lenient_reason"))
        return cls(verdict, str(data.get("scorer") or "official"), explanation, str(data.get("note") or ""))


Scorer = Callable[[str, str], Score]
"""Scores `(model_answer, ground_truth)`; must never raise (a crash would lose the task's verdict)."""


def official_scorer(model_answer: str, ground_truth: str) -> Score:
    """The leaderboard's `question_scorer` verdict with its explanation: the default Scorer."""
    explanation = explain(model_answer, ground_truth)
    return Score(explanation.correct, "official", explanation)


def lenient_scorer(model_answer: str, ground_truth: str) -> Score:
    """Right when the official rules say so or only the format was wrong (order, units, articles, number words).

    Not the leaderboard's number: a run scored this way says how much a format fix would be worth.
    """
    explanation = explain(model_answer, ground_truth)
    return Score(explanation.correct or explanation.format_only_miss, "lenient", explanation)


DEFAULT_SCORER = "official"
SCORERS: dict[str, Scorer] = {"official": official_scorer, "lenient": lenient_scorer}
"""Every scorer a run can be asked for, by the name its Scores carry (CLI `--scorer`, Batch and Debug tabs)."""
SCORER_LABELS: dict[str, str] = {
    "official": "official (the leaderboard's exact-match rules)",
    "lenient": "lenient (format-only misses count as correct)",
}
"""What the UI shows for each scorer name."""


class UnknownScorer(ValueError):
    """A scorer name that is not in `SCORERS`; the message lists the known ones."""


def scorer_named(name: str) -> Scorer:
    """The scorer called `name` in `SCORERS`; UnknownScorer naming the choices otherwise."""
    try:
        return SCORERS[name]
    except KeyError:
        raise UnknownScorer(f"unknown scorer {name!r}: choose one of {', '.join(SCORERS)}") from None


def scorer_label(name: str) -> str:
    """The UI's label of scorer `name` (the name itself for a scorer without a label)."""
    return SCORER_LABELS.get(name, name)
