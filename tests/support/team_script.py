"""Scripting the scripted OpenAI server by team role: the first line of a request's system message names it.

    script = TeamScript(orchestrator=..., reader=...)   # each a function (request body) -> Reply
    with ScriptedOpenAI(script) as srv: ...

The orchestrator's requests are told apart by their last words (ledger, round, progress, answer), as
`agent.team.prompts` writes them; `kind_of` names them for the test's script.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from tests.support.openai_server import Reply, say

RoleName = Literal["orchestrator", "researcher", "browser", "reader", "coder", "other"]
Kind = Literal["ledger", "replan", "round", "progress", "answer"]
_LINES: dict[str, RoleName] = {"you are the orchestrator": "orchestrator", "you are the researcher": "researcher",
                               "you are the browser operator": "browser", "you are the reader": "reader",
                               "you are the coder": "coder"}


def role_of(body: dict[str, Any]) -> RoleName:
    """The role a request is made in, from its system message's first line (case-insensitive)."""
    system = next((m for m in body.get("messages", []) if m.get("role") == "system"), None)
    first = str((system or {}).get("content") or "").splitlines()[0].lower() if system else ""
    return next((role for line, role in _LINES.items() if line in first), "other")


def last_user(body: dict[str, Any]) -> str:
    """The last user message's text."""
    users = [m for m in body.get("messages", []) if m.get("role") == "user"]
    return str(users[-1].get("content") or "") if users else ""


def kind_of(body: dict[str, Any]) -> Kind:
    """Which orchestrator request this is."""
    text = last_user(body)
    if "Re-make the task ledger" in text:
        return "replan"
    if "write the task ledger" in text:
        return "ledger"
    if "Check the team's progress" in text:
        return "progress"
    if "Delegate the next step" in text:
        return "round"
    return "answer"


def delegate_calls(*calls: tuple[str, str]) -> Reply:
    """One orchestrator turn delegating each (worker, task) at once."""
    return Reply(content="", tool_calls=[("delegate", {"worker": w, "task": t}) for w, t in calls])


LEDGER_TEXT = ("FACTS GIVEN: the question\nFACTS TO LOOK UP: the value\nFACTS TO DERIVE: none\n"
               "EDUCATED GUESSES: none\nPLAN: 1. ask a worker")


def progress_reply(satisfied: bool, progress: bool = True) -> Reply:
    """The orchestrator's progress check as JSON (never looping)."""
    return say(json.dumps({"satisfied": satisfied, "looping": False, "progress": progress, "next_step": "go on"}))


def orchestrator_script(*delegations: tuple[str, str], answer: Reply,
                        satisfied: bool = True) -> Callable[[dict[str, Any]], Reply]:
    """An orchestrator that writes LEDGER_TEXT, delegates `delegations` each round and answers `answer`.

    Its progress check says `satisfied` (and progressing) every time.
    """
    def orchestrator(body: dict[str, Any]) -> Reply:
        kind = kind_of(body)
        if kind == "ledger":
            return say(LEDGER_TEXT)
        if kind == "round":
            return delegate_calls(*delegations)
        if kind == "progress":
            return progress_reply(satisfied)
        return answer
    return orchestrator


@dataclass
class TeamScript:
    """A server script answering each role with its own function; every request is kept by role."""

    roles: dict[str, Callable[[dict[str, Any]], Reply]]
    seen: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, body: dict[str, Any]) -> Reply:
        role = role_of(body)
        with self.lock:
            self.seen.setdefault(role, []).append(body)
        answer = self.roles.get(role)
        return answer(body) if answer is not None else say(f"no script for role {role}")
