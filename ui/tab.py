"""The tab contract: what `app.py` needs of a tab, so a new tab is one module and one line in `TABS`.

A tab is an object with a title, an id (the `gr.Tab` id: the page's anchor and the tests' handle) and
`build(ctx)`, which adds the tab to `ctx.demo`, wires its events and returns its components as a typed
dataclass (what tests and other tabs may reach, instead of searching the page by `elem_id`). Each
`ui/<name>_tab.py` holds one, usually a `FunctionTab` around its builder function; an API endpoint it
adds needs its row in `visitors.endpoints.ENDPOINTS`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

import gradio as gr

from config import Settings
from ui.runtime import Runtime

Components = TypeVar("Components", covariant=True)


@dataclass(frozen=True)
class TabContext:
    """What every tab is built from: the app's Blocks, its settings, the shared runtime and the session's State."""

    demo: gr.Blocks
    settings: Settings
    runtime: Runtime
    session: gr.State
    """The visitor's own files (`ui.session.Session`), one per browser session."""


class Tab(Protocol[Components]):
    """One tab of the app (see the module docstring)."""

    @property
    def title(self) -> str:
        """The tab's label on the page."""
        ...

    @property
    def id(self) -> str:
        """The `gr.Tab` id."""
        ...

    def build(self, ctx: TabContext) -> Components:
        """Add the tab to `ctx.demo` (inside its `gr.Blocks`), wire its events, return its components."""
        ...


@dataclass(frozen=True)
class FunctionTab(Generic[Components]):
    """A `Tab` whose `build` is a function of the app's Blocks, settings, runtime and session State."""

    title: str
    id: str
    make: Callable[[gr.Blocks, Settings, Runtime, gr.State], Components]

    def build(self, ctx: TabContext) -> Components:
        """The tab's components and events, inside `ctx.demo`."""
        return self.make(ctx.demo, ctx.settings, ctx.runtime, ctx.session)
