"""The tool-spec table: one row per tool, the facts about it that the registry does not hold.

The registry knows which tools are *active* (their factories loaded); this table says what each tool
*is for*: which team role may use it, whether the Debug tab may run it on an upload without a model.
The router, the team strategy, the context-budget tool sets and the UI all read it, so a tool's facts
live in one place. A registered tool with no row here fails `tests/tools/test_specs.py`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal, get_args

Role = Literal["researcher", "browser", "reader", "coder"]
"""A team worker's role; the orchestrator's only tool (`delegate`) is not a registry tool."""
ROLES: tuple[Role, ...] = get_args(Role)


@dataclass(frozen=True)
class ToolSpec:
    """What one tool is for."""

    name: str
    roles: frozenset[Role]
    """The team workers that are offered it (empty: only the single ReAct loop offers it)."""
    preview: bool = True
    """Whether the Debug tab's attachment preview may run it (False: it runs code or calls a model)."""


def _spec(name: str, *roles: Role, preview: bool = True) -> ToolSpec:
    return ToolSpec(name, frozenset(roles), preview)


_BROWSER = ("browser_open", "browser_snapshot", "browser_click", "browser_type", "browser_select",
            "browser_scroll", "browser_hover", "browser_back", "browser_screenshot", "browser_press",
            "browser_drag", "browser_click_at", "browser_hover_at", "browser_select_text", "browser_upload")

SPECS: dict[str, ToolSpec] = {s.name: s for s in (
    _spec("web_search", "researcher"),
    _spec("fetch_webpage", "researcher"),
    _spec("find_in_page", "researcher", "browser", "reader"),
    _spec("wikipedia_page", "researcher"),
    _spec("wikipedia_revisions", "researcher"),
    _spec("wayback", "researcher"),
    _spec("arxiv_search", "researcher"),
    _spec("scholarly_search", "researcher"),
    _spec("paper_lookup", "researcher"),
    _spec("orcid_works", "researcher"),
    _spec("geocode", "researcher"),
    _spec("route", "researcher"),
    _spec("nearby", "researcher"),
    _spec("read_file", "reader", "coder"),
    _spec("parse_excel", "reader"),
    _spec("parse_pdf", "reader"),
    _spec("image_ocr", "reader"),
    _spec("analyze_image", "reader", preview=False),
    _spec("transcribe_audio", "reader"),
    _spec("watch_video", "reader", preview=False),
    _spec("run_python", "coder", preview=False),
    _spec("calculator", "coder"),
    _spec("rag_search"),
    *(_spec(name, "browser") for name in _BROWSER if name != "browser_screenshot"),
    _spec("browser_screenshot", "browser", preview=False),
)}


def spec_of(name: str) -> ToolSpec | None:
    """The row for tool `name`, if it has one."""
    return SPECS.get(name)


def names_for(role: Role, active: Iterable[str]) -> list[str]:
    """The active tools a `role` worker is offered, in the order given (the registry's order)."""
    return [name for name in active if (spec := SPECS.get(name)) is not None and role in spec.roles]


def previewable(name: str) -> bool:
    """Whether the Debug tab's preview may run tool `name` without a model (unknown tools may not)."""
    spec = SPECS.get(name)
    return spec is not None and spec.preview
