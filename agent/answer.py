r"""Answer extraction: from a model's raw last message to the short string GAIA scores.

An ordered list of named rules (`RULES`); the first that applies wins and its name becomes
`AnswerExtracted.method` in the trace. A rule returns None when it does not apply; only the rules
that recognise "no answer" return "".

1. `final_answer_marker` — the last `FINAL ANSWER:` followed by an answer (any case, markdown
   emphasis around the marker or the answer, a heading); a bulleted or numbered list on the lines
   after it becomes the comma-separated list GAIA asks for; a later echo of the template
   (`FINAL ANSWER: [YOUR FINAL ANSWER]`) never beats a real answer;
2. `marker_without_answer` — markers, but only the placeholder or nothing after them: "";
3. `placeholder` — the message is only the template's placeholder (`<YOUR FINAL ANSWER>`): "";
4. `boxed` — the last `\boxed{…}`, even inside a sentence (`\frac{a}{b}` read as a/b);
5. `json` — a JSON object's `final_answer` / `answer` field, or a JSON array (its items);
6. `answer_label` — the last `Answer: …` line;
7. `answer_is` — "The answer is …";
8. `chinese_label` — 最终答案： / 答案：;
9. `therefore` — "Therefore, …";
10. `last_line` — the last meaningful line, unless it is a JSON object (a tool call written as text,
    bare or in `<tool_call>` tags).
Nothing found: `empty`. `<think>…</think>` blocks are ignored first.

Every candidate is cleaned the same way (`clean_answer`: code fences, boxes, tags, brackets, quotes,
emphasis, "The answer is", trailing sentence punctuation). Cleaning never removes what the official
scorer judges: commas stay (the scorer handles thousands separators itself and `100,200,300` is a
list), so do a list's trailing separator and the period that ends an abbreviation (`U.S.A., U.K.`).
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Callable, Sequence
from typing import Any, Literal

from langchain_core.messages import AIMessage, BaseMessage

from models.messages import message_text

Method = Literal["final_answer_marker", "marker_without_answer", "placeholder", "boxed", "json", "answer_label",
                 "answer_is", "chinese_label", "therefore", "last_line", "empty"]

_THINK = re.compile(r"<think(?:ing)?>.*?</think(?:ing)?>", re.S | re.I)
_THINK_CLOSE = re.compile(r"</think(?:ing)?>", re.I)
# "FINAL ANSWER:", "**FINAL ANSWER:**", "_Final answer:_", "Final answer -", "### Final Answer" (answer on the
# next line); never inside a word ("semifinal answer:"). Emphasis closing the marker is part of it.
_MARKER = re.compile(r"(?<![A-Za-z0-9])final[ _]answer[ \t]*(?:\*\*|__)?[ \t]*"
                     r"(?:[:：\-–—](?:[ \t]*(?:\*\*?|__?)(?=\s|$))?|\bis\b|(?=\r?\n)|$)", re.I)
_PLACEHOLDER = re.compile(r"^[\W_]*your\s+(?:final\s+)?answer(?:\s+here)?[\W_]*$"
                          r"|^[\[<{(]\s*(?:final\s+)?answer(?:\s+here)?\s*[\]>})]$", re.I)
_ITEM = re.compile(r"^\s*(?:[-*•+]|\d{1,3}[.)])\s+(\S.*)$")
_FENCE = re.compile(r"```[a-zA-Z0-9_+-]*\s*\n?(.*?)\n?```", re.S)
_JSON_FIELD = re.compile(r'"(final_answer|answer)"\s*:\s*("(?:[^"\\]|\\.)*"|-?[\d.]+|\[[^\]]*\]|true|false|null)', re.I)
_ANSWER_LABEL = re.compile(r"^[ \t>*_#-]*answer[ \t]*(?:\*\*|__)?[ \t]*[:：][ \t]*(?:\*\*|__)?[ \t]*(.+)$", re.I | re.M)
_ANSWER_IS = re.compile(r"\bthe\s+(?:final\s+|correct\s+)?answer\s+is\s*[:：]?\s*(.+)", re.I)
_CHINESE = re.compile(r"(?:最终答案|答案)\s*(?:是|为|[:：])\s*(.+)")
_THEREFORE = re.compile(r"\b(?:therefore|thus|hence|so)\s*,\s*(.+)", re.I)
_BOXED = re.compile(r"\\boxed\s*\{((?:[^{}]|\{[^{}]*\})*)\}")
_TEXT_CMD = re.compile(r"\\(?:text|textbf|mathrm|mbox)\s*\{([^{}]*)\}")
_FRAC = re.compile(r"\\[dt]?frac\s*\{([^{}]*)\}\s*\{([^{}]*)\}")
_UNCLOSED = re.compile(r"\s*[(\[][^()\[\]]*$")
_LEADING = re.compile(r"^(?:the\s+(?:final\s+|correct\s+)?answer\s+is|answer\s*[:：]|[:：=]|-(?=\s))\s*", re.I)
_WRAPPERS = [("**", "**"), ("__", "__"), ("*", "*"), ("_", "_"), ("`", "`"), ("[", "]"), ('"', '"'),
             ("'", "'"), ("“", "”"), ("‘", "’"), ("«", "»"), ("$", "$"), ("(", ")"), ("「", "」")]
_TRAILING = ".。;；,，:：!！"
_SEPARATORS = ",;，；"
# A final period that belongs to the answer: initials and dotted abbreviations (U.S.A., D.C., b.), titles.
_ABBREVIATION = re.compile(r"(?:(?<![^\W\d_])[^\W\d_]\.)+$"
                           r"|\b(?:jr|sr|inc|ltd|co|corp|st|dr|mr|mrs|ms|mt|ft|no|vs|etc)\.$", re.I)
_EDGE_TAGS = re.compile(r"^(?:<[A-Za-z_]+>\s*)+|(?:\s*</?[A-Za-z_]+>)+$")  # <answer>42</answer>


def extract_final_answer(text: str) -> str:
    """The answer GAIA should score, pulled out of raw model text ("" when there is none)."""
    return extract_answer(text)[0]


def extract_answer(text: str) -> tuple[str, Method]:
    """Like `extract_final_answer`, plus the name of the rule that matched (see the module docstring)."""
    body = strip_thinking(text or "")
    if body.strip():
        for method, rule in RULES:
            found = rule(body)
            if found is not None:
                return found, method
    return "", "empty"


def answer_from_messages(messages: Sequence[BaseMessage]) -> tuple[str, Method, str]:
    """(answer, method, raw text) from the last assistant message that has text."""
    for msg in reversed(messages):
        if isinstance(msg, AIMessage):
            raw = message_text(msg)
            if raw.strip():
                answer, method = extract_answer(raw)
                return answer, method, raw
    return "", "empty", ""


def strip_thinking(text: str) -> str:
    """Remove reasoning blocks; text before a lone `</think>` is reasoning too (the opening tag was in the prompt)."""
    text = _THINK.sub("", text)
    closes = list(_THINK_CLOSE.finditer(text))
    if closes:
        text = text[closes[-1].end():]
    return re.sub(r"<think(?:ing)?>.*\Z", "", text, flags=re.S | re.I) if re.search(r"<think", text, re.I) else text


def clean_answer(text: str) -> str:
    """Normalise one candidate answer: unwrap formatting and drop filler, keeping every character the scorer judges."""
    s = text.strip()
    if fence := _FENCE.search(s):
        s = fence.group(1).strip()
    s = s.replace("```", "").strip()
    if boxes := _BOXED.findall(s):
        s = ", ".join(b.strip() for b in boxes)
    for _ in range(4):  # wrappers can nest: **"[42]"**.
        before = s
        s = _EDGE_TAGS.sub("", s).strip()
        s = _TEXT_CMD.sub(lambda m: m.group(1), s)
        s = _FRAC.sub(lambda m: f"{m.group(1).strip()}/{m.group(2).strip()}", s)
        s = _LEADING.sub("", s).strip()
        s = _strip_trailing(s)
        s = _array_items(s) or _unwrap(s)
        if s == before:
            break
    s = re.sub(r"\s+", " ", s).strip()
    return "" if re.fullmatch(r"[*_`~]*", s) or _PLACEHOLDER.match(s) else s


def _strip_trailing(s: str) -> str:
    while s and s[-1] in _TRAILING:
        if s[-1] == "." and _ABBREVIATION.search(s):
            break  # "Washington, D.C." keeps its period
        if s[-1] in _SEPARATORS and any(c in _SEPARATORS for c in s[:-1]):
            break  # a list's trailing separator is the scorer's to judge ("a, b," is three elements)
        s = s[:-1].rstrip()
    return s


def _unwrap(s: str) -> str:
    for left, right in _WRAPPERS:
        if len(s) > len(left) + len(right) and s.startswith(left) and s.endswith(right):
            inner = s[len(left):-len(right)]
            # Only a wrapper around the whole answer: "(a) and (b)" or "*a* and *b*" stay as they are.
            if left in inner or right in inner:
                continue
            return inner.strip()
    # Emphasis left over on one side, e.g. "FINAL ANSWER:** 42" or "42**".
    return s.strip("*").strip() if s.startswith("**") != s.endswith("**") else s


def _array_items(s: str) -> str:
    """`["a", "b"]` (JSON or a Python literal) as "a, b"; "" when `s` is no such array."""
    if not (s.startswith("[") and s.endswith("]")):
        return ""
    try:
        value = json.loads(s, parse_float=str, parse_int=str)
    except ValueError:
        try:
            value = ast.literal_eval(s)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            return ""
    return _join(value) if isinstance(value, list) else ""


def _join(value: Any) -> str:
    if isinstance(value, list):
        return ", ".join(clean_answer(_join(v)) for v in value)
    return str(value)


# --- the rules, in order ------------------------------------------------------------------------------

def _marker_segments(body: str) -> list[str]:
    """The text after each marker up to the next one, last marker first."""
    matches = list(_MARKER.finditer(body))
    ends = [m.start() for m in matches[1:]] + [len(body)]
    segments = [body[m.end():end] for m, end in zip(matches, ends, strict=False)]  # no marker: ends has one
    # A marker quoted on the answer's own line ("12 (as asked: FINAL ANSWER: …)") leaves a bracket open: cut there.
    return [_UNCLOSED.sub("", seg) if end < len(body) and "\n" not in seg else seg
            for seg, end in zip(segments, ends, strict=False)][::-1]


def _after_marker(segment: str) -> str:
    """The answer in one marker's segment: its own line, else the first content line or list after it."""
    lines = segment.split("\n")
    head = clean_answer(lines[0])
    if head:
        items = _list_items(lines) if _ITEM.match(lines[0]) else []
        return ", ".join(items) if len(items) > 1 else head
    for i, line in enumerate(lines[1:], 1):
        if _ITEM.match(line):
            return ", ".join(_list_items(lines[i:]))
        if cleaned := clean_answer(line):
            return cleaned
    return ""


def _list_items(lines: list[str]) -> list[str]:
    """The cleaned items of the list starting at lines[0] (blank lines between items allowed)."""
    items = []
    for line in lines:
        if item := _ITEM.match(line):
            items.append(clean_answer(item.group(1)))
        elif line.strip():
            break
    return [i for i in items if i]


def _final_answer_marker(body: str) -> str | None:
    return next((found for segment in _marker_segments(body) if (found := _after_marker(segment))), None)


def _marker_without_answer(body: str) -> str | None:
    return "" if _MARKER.search(body) else None  # reached only when no marker had an answer


def _placeholder(body: str) -> str | None:
    return "" if _PLACEHOLDER.match(body.strip()) else None


def _boxed(body: str) -> str | None:
    boxes = list(_BOXED.finditer(body))
    return (clean_answer(boxes[-1].group(0)) or None) if boxes else None


def _json(body: str) -> str | None:
    for chunk in [m.group(1) for m in _FENCE.finditer(body)] + [body]:
        try:
            data = json.loads(chunk.strip(), parse_float=str, parse_int=str)
        except ValueError:
            continue
        if isinstance(data, list):
            return clean_answer(_join(data)) or None
        if isinstance(data, dict):
            for key in ("final_answer", "answer", "FINAL ANSWER", "Final Answer"):
                if data.get(key) is not None:
                    return clean_answer(_join(data[key])) or None
    if fields := list(_JSON_FIELD.finditer(body)):
        try:
            return clean_answer(_join(json.loads(fields[-1].group(2), parse_float=str, parse_int=str))) or None
        except ValueError:
            return None
    return None


def _answer_label(body: str) -> str | None:
    matches = list(_ANSWER_LABEL.finditer(body))
    return (clean_answer(matches[-1].group(1)) or None) if matches else None


def _answer_is(body: str) -> str | None:
    matches = list(_ANSWER_IS.finditer(body))
    if not matches:
        return None
    rest = matches[-1].group(1).splitlines()[0]
    return clean_answer(re.split(r"(?<=[^\d\s.])\.\s", rest)[0]) or None  # stop at the sentence's end, not at "3.5"


def _chinese_label(body: str) -> str | None:
    matches = list(_CHINESE.finditer(body))
    return (clean_answer(matches[-1].group(1).splitlines()[0]) or None) if matches else None


def _therefore(body: str) -> str | None:
    lines = [ln for ln in body.splitlines() if ln.strip()]
    match = _THEREFORE.search(lines[-1]) if lines else None
    if not match:
        return None
    verb = re.search(r"\b(?:is|are|was|were|equals)\s+(.+)$", match.group(1), re.I)  # "the capital is Paris."
    return clean_answer(verb.group(1) if verb else match.group(1)) or None


def _last_line(body: str) -> str | None:
    line = clean_answer(next((ln for ln in reversed(body.splitlines()) if re.search(r"\w", ln)), ""))
    try:
        if isinstance(json.loads(line), dict):
            return None  # a tool call the model wrote as text (bare or in <tool_call> tags), never an answer
    except ValueError:
        pass
    return line or None


RULES: tuple[tuple[Method, Callable[[str], str | None]], ...] = (
    ("final_answer_marker", _final_answer_marker),
    ("marker_without_answer", _marker_without_answer),
    ("placeholder", _placeholder),
    ("boxed", _boxed),
    ("json", _json),
    ("answer_label", _answer_label),
    ("answer_is", _answer_is),
    ("chinese_label", _chinese_label),
    ("therefore", _therefore),
    ("last_line", _last_line),
)
"""The extraction rules in the order they are tried (see the module docstring)."""
