"""The near-miss guard: two questions may share an answer only if their specifics agree.

Cosine similarity cannot tell "population in 2010" from "in 2020" (all-MiniLM-L6-v2 scores a
kilometers→miles swap 0.95–0.99, above many true paraphrases). Before a stored answer is returned
directly, the asked and stored questions must agree on numbers (digits, number words, ordinals),
years, dates and month names, quoted strings, capitalised names, units, contrast words
(highest/lowest, before/after, …) and negation. Any disagreement demotes the match to a candidate.

The checks err towards disagreeing: a wrongly demoted paraphrase costs one agent run, a wrongly
accepted near-miss returns a wrong answer.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

_SMALL = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
    "sixteen seventeen eighteen nineteen".split())}
_TENS = {w: 10 * i for i, w in enumerate(
    "_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()) if w != "_"}
_SCALES = {"hundred": 100, "thousand": 1000, "million": 10**6, "billion": 10**9, "trillion": 10**12}
_ORDINALS = {w: i for i, w in enumerate(
    "_ first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth thirteenth "
    "fourteenth fifteenth sixteenth seventeenth eighteenth nineteenth twentieth".split()) if w != "_"}
_MONTHS = {m: i for i, m in enumerate(
    "_ january february march april may june july august september october november december".split()) if m != "_"}
_MONTH_ABBR_RE = re.compile(
    r"\b(jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec)\.?\s+\d|"
    r"\d(?:st|nd|rd|th)?\s+(jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec)\b")
_ABBR_MONTH = {m[:3]: i for m, i in _MONTHS.items()} | {"sept": 9}
_WEEKDAYS = set("monday tuesday wednesday thursday friday saturday sunday".split())

# canonical unit -> spellings (matched as whole words on case-folded text)
_UNITS: dict[str, tuple[str, ...]] = {
    "millimeters": ("mm", "millimeter", "millimeters", "millimetre", "millimetres"),
    "centimeters": ("cm", "centimeter", "centimeters", "centimetre", "centimetres"),
    "meters": ("meter", "meters", "metre", "metres"),
    "kilometers": ("km", "kms", "kilometer", "kilometers", "kilometre", "kilometres"),
    "inches": ("inch", "inches"),
    "feet": ("foot", "feet", "ft"),
    "yards": ("yard", "yards", "yd", "yds"),
    "miles": ("mile", "miles"),
    "nautical miles": ("nautical mile", "nautical miles", "nmi"),
    "grams": ("gram", "grams", "gramme", "grammes"),
    "milligrams": ("mg", "milligram", "milligrams"),
    "kilograms": ("kg", "kgs", "kilogram", "kilograms", "kilo", "kilos"),
    "pounds": ("lb", "lbs", "pound", "pounds"),
    "ounces": ("oz", "ounce", "ounces"),
    "tons": ("ton", "tons", "tonne", "tonnes"),
    "celsius": ("celsius", "centigrade", "°c", "℃"),
    "fahrenheit": ("fahrenheit", "°f", "℉"),
    "kelvin": ("kelvin", "kelvins"),
    "liters": ("liter", "liters", "litre", "litres"),
    "milliliters": ("ml", "milliliter", "milliliters", "millilitre", "millilitres"),
    "gallons": ("gallon", "gallons", "gal"),
    "pints": ("pint", "pints"),
    "cups": ("cup", "cups"),
    # Time units in the plural only: "in what year" asks for a date, "how many years" for a duration.
    "seconds": ("seconds", "secs"),
    "minutes": ("minutes", "mins"),
    "hours": ("hours", "hrs"),
    "days": ("days",),
    "weeks": ("weeks",),
    "months": ("months",),
    "years": ("years", "yrs"),
    "decades": ("decades",),
    "centuries": ("centuries",),
    "mph": ("mph", "miles per hour"),
    "km/h": ("km/h", "kph", "kmh", "kilometers per hour", "kilometres per hour"),
    "percent": ("percent", "percentage", "per cent", "%"),
    "dollars": ("dollar", "dollars", "usd", "$"),
    "euros": ("euro", "euros", "eur", "€"),
    "pounds sterling": ("gbp", "sterling", "£"),
    "yen": ("yen", "jpy", "¥"),
    "acres": ("acre", "acres"),
    "hectares": ("hectare", "hectares", "ha"),
    "calories": ("calorie", "calories", "kcal"),
    "joules": ("joule", "joules"),
    "watts": ("watt", "watts"),
    "kilowatts": ("kw", "kilowatt", "kilowatts", "kwh"),
    "bytes": ("byte", "bytes"),
    "kilobytes": ("kb", "kilobyte", "kilobytes"),
    "megabytes": ("mb", "megabyte", "megabytes"),
    "gigabytes": ("gb", "gigabyte", "gigabytes"),
    "terabytes": ("tb", "terabyte", "terabytes"),
}
_UNIT_ALIASES = sorted(((alias, canon) for canon, aliases in _UNITS.items() for alias in aliases),
                       key=lambda p: -len(p[0]))
_UNIT_RE = re.compile("|".join(
    (re.escape(a) if not a[0].isalnum() else r"(?<![\w/])" + re.escape(a) + r"(?![\w/])") for a, _ in _UNIT_ALIASES))
_UNIT_CANON = dict(_UNIT_ALIASES)

# Mutually exclusive words: a question asking for one is a different question from one asking for another.
_CONTRASTS: tuple[frozenset[str], ...] = tuple(frozenset(g.split()) for g in (
    "highest lowest", "largest smallest biggest", "maximum minimum max min", "most least fewest",
    "longest shortest", "oldest youngest newest", "earliest latest", "first last", "before after",
    "above below", "more less fewer", "increase decrease", "increased decreased", "north south",
    "east west", "ascending descending", "top bottom", "left right", "heaviest lightest",
    "fastest slowest", "tallest shortest", "warmest coldest", "hottest coldest", "best worst",
    "winner loser", "won lost", "male female", "men women", "odd even", "plus minus",
    "who when where why how",  # "who wrote X" and "when was X written" score 0.987
    "second minute hour day week month year decade century",
))
# Words whose presence alone changes the question.
_PRESENCE: dict[str, frozenset[str]] = {
    "negation": frozenset({"not", "never", "neither", "nor", "except", "excluding", "without", "none"}),
    "reversal": frozenset({"reverse", "reversed", "inverse", "opposite", "backwards"}),
}

# Capitalised words that are not names (question openers, function words, imperatives).
_NOT_NAMES = set("""
a an the this that these those there here it its i my me we our us you your he she they his her their
what who whom whose which where when why how whether if is are was were be been being do does did
can could would should will shall may might must has have had in on at of for to from by with into onto
and or but nor so yet as after before during since until while between among under over about above below
please give list name find tell answer return provide write express round compute calculate count report
consider suppose assume assuming let then also all each every some any no not yes note hint question
according based using given use look examine review read see check identify determine based
in what's who's how's where's there's it's i'm i've i'd don't doesn't didn't isn't aren't wasn't
""".split())

# Month, weekday and unit words are compared as dates and units, not again as names.
_CHECKED_ELSEWHERE = set(_MONTHS) | _WEEKDAYS | {a for a, _ in _UNIT_ALIASES} | {"celsius", "fahrenheit", "kelvin"}

_NUMBER_RE = re.compile(r"(?<![\w.])(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d+))?(?![\w])|(?<![\w.])\.(\d+)")
_ORDINAL_DIGITS_RE = re.compile(r"(?<![\w.])(\d+)(?:st|nd|rd|th)\b")
_ISO_DATE_RE = re.compile(r"\b(\d{4})-(\d{1,2})-(\d{1,2})\b")
_SLASH_DATE_RE = re.compile(r"\b(\d{1,2})/(\d{1,2})(?:/(\d{2,4}))?\b")
_QUOTED_RE = re.compile(r'"([^"]{1,300})"|(?<!\w)\'([^\']{1,300})\'(?!\w)|\*([^*]{1,300})\*')
_WORD_RE = re.compile(r"[A-Za-zÀ-ÖØ-öø-ÿ][\w'’-]*")


@dataclass
class GuardVerdict:
    """Whether two questions agree on their specifics; `reasons` says where they do not."""

    agree: bool
    reasons: list[str] = field(default_factory=list)

    @property
    def reason(self) -> str:
        """One line: the disagreements joined, or 'specifics agree'."""
        return "; ".join(self.reasons) if self.reasons else "specifics agree"


def _clean(text: str) -> str:
    text = unicodedata.normalize("NFKC", text or "")
    return (text.replace("\u2019", "'").replace("\u2018", "'").replace("\u201c", '"').replace("\u201d", '"')
            .replace("\u00ab", '"').replace("\u00bb", '"'))


def _canon_number(whole: str, frac: str | None) -> str:
    value = whole.replace(",", "").lstrip("0") or "0"
    frac = (frac or "").rstrip("0")
    return f"{value}.{frac}" if frac else value


def _number_words(words: list[str]) -> list[str]:
    """Values of runs of number words ('two hundred and five' -> '205'); 'one' alone is too often a pronoun."""
    values: list[str] = []
    run: list[str] = []
    total, current = 0, 0
    for word in words + ["<end>"]:
        if word in _SMALL or word in _TENS or word in _SCALES or (word == "and" and run):
            run.append(word)
            if word in _SMALL:
                current += _SMALL[word]
            elif word in _TENS:
                current += _TENS[word]
            elif word in _SCALES:
                scale = _SCALES[word]
                if scale == 100:
                    current = max(current, 1) * 100
                else:
                    total += max(current, 1) * scale
                    current = 0
            continue
        if run:
            while run and run[-1] == "and":
                run.pop()
            if run and run != ["one"]:
                values.append(str(total + current))
        total, current, run = 0, 0, []
    return values


def _numbers(text: str) -> tuple[Counter[str], set[str], set[str]]:
    """(multiset of numbers and ordinals, dates, month/weekday names) found in `text`."""
    low = text.casefold()
    dates: set[str] = set()
    for y, m, d in _ISO_DATE_RE.findall(low):
        dates.add(f"{int(y):04d}-{int(m):02d}-{int(d):02d}")
    low = _ISO_DATE_RE.sub(" ", low)
    for a, b, y in _SLASH_DATE_RE.findall(low):
        dates.add(f"{int(a)}/{int(b)}" + (f"/{y}" if y else ""))
    low = _SLASH_DATE_RE.sub(" ", low)
    found: Counter[str] = Counter()
    for whole in _ORDINAL_DIGITS_RE.findall(low):
        found[f"#{int(whole)}"] += 1
    low = _ORDINAL_DIGITS_RE.sub(" ", low)
    for whole, frac, bare_frac in _NUMBER_RE.findall(low):
        found[_canon_number(whole or "0", frac or bare_frac)] += 1
    words = re.findall(r"[a-z]+", low)
    found.update(_number_words(words))
    found.update(f"#{_ORDINALS[w]}" for w in words if w in _ORDINALS)
    calendar = {f"month {_MONTHS[w]}" for w in words if w in _MONTHS and w != "may"}
    calendar |= {f"month {_ABBR_MONTH[a or b]}" for a, b in _MONTH_ABBR_RE.findall(text.casefold())}
    calendar |= {w for w in words if w in _WEEKDAYS}
    # "may" is a month only when capitalised after the first word, or next to a number.
    if re.search(r"[\w,]\s+May\b", text) or re.search(r"\bmay\s+\d|\d(?:st|nd|rd|th)?\s+may\b", text.casefold()):
        calendar.add("month 5")
    return found, dates, calendar


def _quoted(text: str) -> set[str]:
    out = set()
    for groups in _QUOTED_RE.findall(text):
        inner = next(g for g in groups if g)
        norm = re.sub(r"\s+", " ", inner).strip(" .,;:!?").casefold()
        if norm:
            out.add(norm)
    return out


def _names(text: str) -> list[str]:
    """Capitalised words that are not question openers or function words, in order of appearance."""
    names = []
    for m in _WORD_RE.finditer(text):
        word = re.sub(r"'s$", "", m.group(0).strip("'’-"))
        if not word or not any(c.isupper() for c in word) or word.casefold() in _NOT_NAMES:
            continue
        if m.start() > 0 and text[m.start() - 1] == "°":  # °C, °F are units
            continue
        if word.casefold() in _CHECKED_ELSEWHERE:
            continue
        names.append(word)
    return names


def _units(text: str) -> set[str]:
    return {_UNIT_CANON[m.group(0)] for m in _UNIT_RE.finditer(text.casefold())}


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9]+", text.casefold().replace("n't", " not")))


def _show(values: Iterable[object]) -> str:
    items = sorted(values, key=str)
    return ", ".join(str(v) for v in items) if items else "none"


def check(asked: str, stored: str) -> GuardVerdict:
    """Compare the specifics of the asked question with a stored one (see the module docstring)."""
    a, b = _clean(asked), _clean(stored)
    reasons: list[str] = []

    nums_a, dates_a, cal_a = _numbers(a)
    nums_b, dates_b, cal_b = _numbers(b)
    if nums_a != nums_b:
        years_a = {n for n in nums_a if n.isdigit() and 1000 <= int(n) <= 2100}
        years_b = {n for n in nums_b if n.isdigit() and 1000 <= int(n) <= 2100}
        kind = "years" if years_a != years_b else "numbers"
        show_a = years_a if kind == "years" else nums_a - nums_b
        show_b = years_b if kind == "years" else nums_b - nums_a
        reasons.append(f"{kind} differ ({_show(show_a)} vs {_show(show_b)})")
    if dates_a != dates_b or cal_a != cal_b:
        reasons.append(f"dates differ ({_show(dates_a | cal_a)} vs {_show(dates_b | cal_b)})")

    quoted_a, quoted_b = _quoted(a), _quoted(b)
    if quoted_a != quoted_b:
        reasons.append(f"quoted strings differ ({_show(quoted_a - quoted_b)} vs {_show(quoted_b - quoted_a)})")

    # A name must occur (in any case) in the other question: a lower-case retyping still agrees.
    words_a, words_b = _words(a), _words(b)
    only_a = [n for n in _names(a) if not _words(n) <= words_b]
    only_b = [n for n in _names(b) if not _words(n) <= words_a]
    if only_a or only_b:
        reasons.append(f"names differ ({' '.join(dict.fromkeys(only_a)) or 'none'} "
                       f"vs {' '.join(dict.fromkeys(only_b)) or 'none'})")

    units_a, units_b = _units(a), _units(b)
    if units_a != units_b:
        reasons.append(f"units differ ({_show(units_a - units_b)} vs {_show(units_b - units_a)})")

    for group in _CONTRASTS:
        in_a, in_b = group & words_a, group & words_b
        if in_a and in_b and in_a != in_b:
            reasons.append(f"contrast differs ({_show(in_a)} vs {_show(in_b)})")
    for label, group in _PRESENCE.items():
        if bool(group & words_a) != bool(group & words_b):
            reasons.append(f"{label} differs ({_show(group & words_a)} vs {_show(group & words_b)})")

    return GuardVerdict(agree=not reasons, reasons=reasons)
