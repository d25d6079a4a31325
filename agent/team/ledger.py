"""The orchestrator's ledger: the task ledger (facts and plan) and the progress checks after each round.

The orchestrator owns one `Ledger`; its text comes from the model, parsed into typed parts here. A
progress reply is JSON (`{"satisfied", "looping", "progress", "next_step"}`); a reply that is not is read
leniently (the words true/false after each key) and, failing that, counts as no progress: a model that
cannot say it progressed has not.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

_SECTIONS = ("FACTS GIVEN", "FACTS TO LOOK UP", "FACTS TO DERIVE", "EDUCATED GUESSES", "PLAN")
_HEADING = re.compile(r"^\W*(" + "|".join(_SECTIONS) + r")\W*:?\s*", re.IGNORECASE | re.MULTILINE)


@dataclass
class Report:
    """What one delegation brought back, as the orchestrator reads it."""

    worker: str
    task: str
    text: str


@dataclass
class Ledger:
    """The task ledger and the rounds' record; only the orchestrator reads and writes it."""

    facts: str = ""
    """Facts given, to look up, to derive, and educated guesses."""
    plan: str = ""
    reports: list[Report] = field(default_factory=list)
    """Every report so far, oldest first (workers' observations never enter: only their reports)."""
    rounds: int = 0
    stalls: int = 0
    """Rounds in a row without progress."""
    replans: int = 0

    def render(self) -> str:
        """The ledger and reports as the orchestrator's context (the question comes before it)."""
        parts = [f"TASK LEDGER\n{self.facts.strip()}\nPLAN:\n{self.plan.strip()}"] if self.facts or self.plan else []
        for number, report in enumerate(self.reports, 1):
            parts.append(f"REPORT {number} from the {report.worker} (task: {report.task.strip()}):\n"
                         f"{report.text.strip() or '(empty report)'}")
        return "\n\n".join(parts)


@dataclass(frozen=True)
class Progress:
    """One progress check's answer."""

    satisfied: bool
    looping: bool
    progress: bool
    next_step: str = ""

    @property
    def stalled(self) -> bool:
        """A round that counts towards TEAM_STALL_LIMIT: no progress, or going round in circles."""
        return self.looping or not self.progress


def parse_ledger(text: str) -> tuple[str, str]:
    """(facts, plan) from a ledger reply; without headings the whole reply is the plan."""
    matches = list(_HEADING.finditer(text))
    if not matches:
        return "", text.strip()
    sections: dict[str, str] = {}
    for index, match in enumerate(matches):
        end = matches[index + 1].start() if index + 1 < len(matches) else len(text)
        sections[match.group(1).upper()] = text[match.end():end].strip()
    plan = sections.pop("PLAN", "")
    facts = "\n".join(f"{name}: {sections[name]}" for name in _SECTIONS if name in sections)
    return facts, plan


def parse_progress(text: str) -> Progress:
    """The progress check in a reply (JSON, or lenient key: true/false words); unreadable → no progress."""
    data = _json_object(text)
    if data is None:
        data = {key: m.group(1).lower() == "true" for key in ("satisfied", "looping", "progress")
                if (m := re.search(rf'"?{key}"?\s*[:=]\s*"?(true|false)', text, re.IGNORECASE))}
    return Progress(satisfied=_flag(data.get("satisfied")), looping=_flag(data.get("looping")),
                    progress=_flag(data.get("progress")), next_step=str(data.get("next_step") or "")[:500])


def _json_object(text: str) -> dict[str, object] | None:
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        return None
    try:
        data = json.loads(text[start:end + 1])
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def _flag(value: object) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in {"true", "yes"}
    return bool(value)
