"""Answer extraction: from a model's raw last message to the short string GAIA scores.

Rules are tried in order and the first that yields a non-empty answer wins; `extract_answer` also
says which rule matched (it becomes `AnswerExtracted.method` in the trace):

1. `final_answer_marker` — the last `FINAL ANSWER:` (any case, markdown-wrapped, or a heading);
2. `json` — a JSON object's `final_answer` / `answer` field;
3. `answer_label` — the last `Answer: …` line;
4. `answer_is` — "The answer is …";
5. `chinese_label` — 最终答案： / 答案：;
6. `therefore` — "Therefore, …";
7. `last_line` — the last meaningful line.

`<think>…</think>` blocks are ignored first. Every candidate is cleaned the same way (brackets,
quotes, emphasis, `\\boxed{}`, code fences, trailing punctuation, "The answer is", a single number's
thousands separators).
"""

from __future__ import annotations

import json
import re
from typing import Any, Sequence

from langchain_core.messages import AIMessage, BaseMessage

from models.messages import message_text

_THINK = re.compile(r"<think(?:ing)?>.*?</think(?:ing)?>", re.S | re.I)
_THINK_CLOSE = re.compile(r"</think(?:ing)?>", re.I)
# "FINAL ANSWER:", "**Final Answer:**", "Final answer -", "### Final Answer" (heading, answer on next line).
_MARKER = re.compile(r"final[ _]answer\s*(?:\*\*|__)?\s*(?:[:：\-–—]|\bis\b|(?=\n)|$)", re.I)
_FENCE = re.compile(r"```[a-zA-Z0-9_+-]*\s*\n?(.*?)\n?```", re.S)
_JSON_FIELD = re.compile(r'"(final_answer|answer)"\s*:\s*("(?:[^"\\]|\\.)*"|-?[\d.]+|\[[^\]]*\]|true|false|null)', re.I)
_ANSWER_LABEL = re.compile(r"^[ \t>*_#-]*answer[ \t]*(?:\*\*|__)?[ \t]*[:：][ \t]*(?:\*\*|__)?[ \t]*(.+)$", re.I | re.M)
_ANSWER_IS = re.compile(r"\bthe\s+(?:final\s+|correct\s+)?answer\s+is\s*[:：]?\s*(.+)", re.I)
_CHINESE = re.compile(r"(?:最终答案|答案)\s*(?:是|为|[:：])\s*(.+)")
_THEREFORE = re.compile(r"\b(?:therefore|thus|hence|so)\s*,\s*(.+)", re.I)
_BOXED = re.compile(r"\\boxed\s*\{((?:[^{}]|\{[^{}]*\})*)\}")
_TEXT_CMD = re.compile(r"\\(?:text|textbf|mathrm|mbox)\s*\{([^{}]*)\}")
_LEADING = re.compile(r"^(?:the\s+(?:final\s+|correct\s+)?answer\s+is|answer\s*[:：]|[:：=]|-(?=\s))\s*", re.I)
_THOUSANDS = re.compile(r"^([-+]?[$€£]?)(\d{1,3}(?:,\d{3})+)(\.\d+)?(%?)$")
_WRAPPERS = [("**", "**"), ("__", "__"), ("*", "*"), ("_", "_"), ("`", "`"), ("[", "]"), ('"', '"'),
             ("'", "'"), ("“", "”"), ("‘", "’"), ("«", "»"), ("$", "$"), ("(", ")"), ("「", "」")]
_TRAILING = ".。;；,，:：!！"
_EDGE_TAGS = re.compile(r"^(?:<[A-Za-z_]+>\s*)+|(?:\s*</?[A-Za-z_]+>)+$")  # <answer>42</answer>


def extract_final_answer(text: str) -> str:
    """The answer GAIA should score, pulled out of raw model text ("" when there is none)."""
    return extract_answer(text)[0]


def extract_answer(text: str) -> tuple[str, str]:
    """Like `extract_final_answer`, plus the name of the rule that matched (see the module docstring)."""
    body = strip_thinking(text or "")
    if not body.strip():
        return "", "empty"
    marked = _after_last_marker(body)
    if marked:
        return marked, "final_answer_marker"
    for method, finder in (("json", _from_json), ("answer_label", _from_label), ("answer_is", _from_answer_is),
                           ("chinese_label", _from_chinese), ("therefore", _from_therefore),
                           ("last_line", _from_last_line)):
        found = finder(body)
        if found:
            return found, method
    return "", "empty"


def answer_from_messages(messages: Sequence[BaseMessage]) -> tuple[str, str, str]:
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
    """Normalise one candidate answer: unwrap formatting, drop filler, fix a single number's separators."""
    s = text.strip()
    fence = _FENCE.search(s)
    if fence:
        s = fence.group(1).strip()
    s = s.replace("```", "").strip()
    for _ in range(4):  # wrappers can nest: **"[42]"**.
        before = s
        s = _EDGE_TAGS.sub("", s).strip()
        s = _BOXED.sub(lambda m: m.group(1), s)
        s = _TEXT_CMD.sub(lambda m: m.group(1), s)
        s = _LEADING.sub("", s).strip()
        s = s.rstrip(_TRAILING).strip()
        s = _unwrap(s)
        if s == before:
            break
    s = re.sub(r"\s+", " ", s).strip()
    match = _THOUSANDS.match(s)
    if match:
        s = match.group(1) + match.group(2).replace(",", "") + (match.group(3) or "") + match.group(4)
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


def _first_content_line(text: str) -> str:
    for line in text.splitlines():
        cleaned = clean_answer(line)
        if cleaned:
            return cleaned
    return ""


def _after_last_marker(body: str) -> str:
    # Skip the template's own placeholder, which models sometimes quote while thinking aloud.
    for match in reversed(list(_MARKER.finditer(body))):
        found = _first_content_line(body[match.end():])
        if found and found.upper() != "YOUR FINAL ANSWER":
            return found
    return ""


def _from_json(body: str) -> str:
    candidates = [m.group(1) for m in _FENCE.finditer(body)] + [body]
    for chunk in candidates:
        try:
            data = json.loads(chunk.strip())
        except (json.JSONDecodeError, ValueError):
            continue
        if isinstance(data, dict):
            for key in ("final_answer", "answer", "FINAL ANSWER", "Final Answer"):
                if key in data and data[key] is not None:
                    return clean_answer(_join(data[key]))
    fields = list(_JSON_FIELD.finditer(body))
    if fields:
        try:
            return clean_answer(_join(json.loads(fields[-1].group(2))))
        except (json.JSONDecodeError, ValueError):
            return ""
    return ""


def _join(value: Any) -> str:
    if isinstance(value, list):
        return ", ".join(_join(v) for v in value)
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _from_label(body: str) -> str:
    matches = list(_ANSWER_LABEL.finditer(body))
    return clean_answer(matches[-1].group(1)) if matches else ""


def _from_answer_is(body: str) -> str:
    matches = list(_ANSWER_IS.finditer(body))
    if not matches:
        return ""
    rest = matches[-1].group(1).splitlines()[0]
    return clean_answer(re.split(r"(?<=[^\d\s.])\.\s", rest)[0])  # stop at the sentence's end, not at "3.5"


def _from_chinese(body: str) -> str:
    matches = list(_CHINESE.finditer(body))
    return clean_answer(matches[-1].group(1).splitlines()[0]) if matches else ""


def _from_therefore(body: str) -> str:
    lines = [ln for ln in body.splitlines() if ln.strip()]
    if not lines:
        return ""
    match = _THEREFORE.search(lines[-1])
    if not match:
        return ""
    clause = match.group(1)
    # "Therefore, the capital is Paris." -> "Paris"
    verb = re.search(r"\b(?:is|are|was|were|equals)\s+(.+)$", clause, re.I)
    return clean_answer(verb.group(1) if verb else clause)


def _from_last_line(body: str) -> str:
    for line in reversed(body.splitlines()):
        if re.search(r"[\w\d]", line):
            return clean_answer(line)
    return ""
