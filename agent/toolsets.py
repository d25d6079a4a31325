"""On a small window, offer only the tools a task can use (30 tool schemas are ~5,500 tokens of every request).

With a context window of at most `SMALL_WINDOW_TOKENS` (LLM_CONTEXT_TOKENS, or the window the server
states), the loop's requests carry these tools instead of all the active ones:

- the **route's tools**: those able to read the task's attachment (`tools.core.routes`), and the ones its
  instruction mentions besides;
- the **research set**: every tool whose row in `tools/core/specs.py` names the "researcher" role, plus
  `read_file` (it reads masked observations back) and `calculator`;
- the **browser set** (role "browser") only when a page needs operating: the question asks to click,
  type, scroll or fill something in, or an observation so far names a `browser_` tool (a page that
  renders only in a browser says so).

The choice is pure (`choose_toolset`); `ToolsetChoice` keeps it per run, widens it when an observation
calls for the browser, and names each new choice in the trace (`ToolsetChosen`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from langchain_core.messages import BaseMessage, ToolMessage

from agent.events import ToolsetChosen
from models.messages import message_text
from tools.core.specs import names_for

SMALL_WINDOW_TOKENS = 16_384
"""Windows up to this size (16k) get per-task tool sets."""
ALWAYS = ("read_file", "calculator")
"""Offered with the research set: read_file reads masked observations back; calculator is one small schema."""
OPERATE = re.compile(r"\b(click|press|button|scroll|drop-?down|fill (?:in|out)|type (?:in|into)|log ?in|"
                     r"sign ?in|hover|drag|slider|interactive|form)\b", re.IGNORECASE)
"""Words of a question that asks to operate a page, not just read it."""
BROWSER_HINT = re.compile(r"\bbrowser_[a-z_]+\b")


@dataclass(frozen=True)
class Toolset:
    """The tools offered to one run's requests, and the sets they came from."""

    name: str
    tools: tuple[str, ...]
    left_out: int = 0


def needs_browser(question: str, observations: Iterable[str] = ()) -> bool:
    """Whether a page must be operated: the question says so, or an observation names a browser tool."""
    return bool(OPERATE.search(question or "")) or any(BROWSER_HINT.search(text) for text in observations)


def choose_toolset(active: Sequence[str], *, window: int, route_tools: Sequence[str] = (), question: str = "",
                   observations: Iterable[str] = ()) -> Toolset | None:
    """The tools a task on a `window`-token model is offered; None (every active tool) above SMALL_WINDOW_TOKENS.

    `active`: the registry's tool names (their order is kept); `route_tools`: the attachment route's tools.
    """
    if window <= 0 or window > SMALL_WINDOW_TOKENS:
        return None
    parts: list[str] = []
    wanted: set[str] = set()
    routed = [name for name in route_tools if name in active]
    if routed:
        parts.append("route")
        wanted.update(routed)
    parts.append("research")
    wanted.update(names_for("researcher", active))
    wanted.update(name for name in ALWAYS if name in active)
    if needs_browser(question, observations):
        browser = names_for("browser", active)
        if browser:
            parts.append("browser")
            wanted.update(browser)
    chosen = tuple(name for name in active if name in wanted)
    return Toolset("+".join(parts), chosen, len(active) - len(chosen))


@dataclass
class ToolsetChoice:
    """One run's tool set on a small window: chosen at the start, widened when an observation asks for more."""

    active: tuple[str, ...]
    window: int
    route_tools: tuple[str, ...] = ()
    question: str = ""
    current: Toolset | None = field(default=None, init=False)

    def pick(self, messages: Sequence[BaseMessage], elapsed_s: float) -> tuple[Toolset | None, ToolsetChosen | None]:
        """The set for the next request, and the event naming it when it changed (None when unchanged)."""
        observations = [message_text(m) for m in messages if isinstance(m, ToolMessage)]
        chosen = choose_toolset(self.active, window=self.window, route_tools=self.route_tools,
                                question=self.question, observations=observations)
        if chosen is None or chosen == self.current:
            return self.current, None
        self.current = chosen
        return chosen, ToolsetChosen(elapsed_s=elapsed_s, name=chosen.name, tools=list(chosen.tools),
                                     left_out=chosen.left_out, window=self.window)


def offered(choice: ToolsetChoice | None, tools: Sequence[object], messages: Sequence[BaseMessage],
            elapsed_s: float) -> tuple[list[object], ToolsetChosen | None]:
    """`tools` narrowed to the run's set (all of them without a choice), and the event of a new choice."""
    if choice is None:
        return list(tools), None
    chosen, event = choice.pick(messages, elapsed_s)
    if chosen is None:
        return list(tools), event
    names = set(chosen.tools)
    return [t for t in tools if getattr(t, "name", None) in names], event
