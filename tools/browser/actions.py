"""The browser's action tools: each operates the run's one tab and answers with the settled page's snapshot."""

from __future__ import annotations

from langchain_core.tools import BaseTool

from config import Settings
from tools.browser import widgets
from tools.browser.run import RunOf, open_checked, opened
from tools.browser.widget_tools import make_widget_tools
from tools.core.artifacts import CONTENT_AND_ARTIFACT, Reply
from tools.core.context import ToolContext
from tools.core.context_tool import context_tool
from tools.core.errors import ToolFailure

DIRECTIONS = ("down", "up", "bottom", "top")


def make_action_tools(settings: Settings, run_of: RunOf, screenshot: BaseTool) -> list[BaseTool]:
    """browser_open … browser_snapshot over the run's tab, then `screenshot`."""

    @context_tool(response_format=CONTENT_AND_ARTIFACT)
    def browser_open(_ctx: ToolContext, url: str) -> Reply:
        """Open a web page in a real browser (JavaScript runs) and show it as a snapshot with element refs.

        Use the browser for pages you must operate: search boxes, filters, forms, tabs, buttons that load
        more, hover tooltips, content only JavaScript shows. For reading a static page fetch_webpage is
        cheaper. The snapshot lists every element you can operate as `[eN] role "name" state`; pass the
        ref (e.g. "e12") to browser_click, browser_type, browser_select or browser_hover.

        Args:
            url: The full http(s) address, e.g. https://example.org/search. A new open replaces the page.
        """
        target = open_checked(url, settings)
        run, work = run_of(_ctx)
        return run.reply(run.run(lambda s: s.open(target)), work)

    click, type_, select, hover = _element_tools(run_of)
    scroll, back, snapshot = _page_tools(run_of)
    tools = [browser_open, click, type_, select, hover, scroll, back, snapshot, screenshot,
             *make_widget_tools(run_of)]
    for made in tools:
        made.metadata = {**(made.metadata or {}), "browser": True}
    return tools


def _page_tools(run_of: RunOf) -> list[BaseTool]:
    """browser_scroll, browser_back and browser_snapshot: the whole page, no element named."""

    @context_tool(response_format=CONTENT_AND_ARTIFACT)
    def browser_scroll(_ctx: ToolContext, direction: str = "down") -> Reply:
        """Scroll the page (or its scrolling list) to load more; content that appears is in the reply.

        Args:
            direction: "down" or "up" one screen, or "bottom" or "top".
        """
        where = (direction or "down").strip().lower()
        if where not in DIRECTIONS:
            raise ToolFailure(f"direction must be one of {', '.join(DIRECTIONS)}, not {direction!r}.", "bad_arguments")
        run, work = run_of(_ctx)
        return run.act(lambda s: s.scroll(where), work, changes=True)

    @context_tool(response_format=CONTENT_AND_ARTIFACT)
    def browser_back(_ctx: ToolContext) -> Reply:
        """Go back to the previous page in the browser's history and show it."""
        run, work = run_of(_ctx)
        return run.act(lambda s: s.back(), work)

    @context_tool(response_format=CONTENT_AND_ARTIFACT)
    def browser_snapshot(_ctx: ToolContext, page: int = 1) -> Reply:
        """Show the browser's current page again: after it changed by itself, or page N of a long snapshot.

        Args:
            page: Which page of the snapshot to show (1 is the first); a reply says how many there are.
        """
        run, work = run_of(_ctx)
        opened(run)
        if page != 1 and run.last is not None:  # page N of the snapshot the reply before named
            return run.reply(run.last, work, page)
        return run.reply(run.run(lambda s: s.capture()), work, page)

    return [browser_scroll, browser_back, browser_snapshot]


def _element_tools(run_of: RunOf) -> list[BaseTool]:
    """browser_click, browser_type, browser_select and browser_hover: one element, named by its ref."""

    @context_tool(response_format=CONTENT_AND_ARTIFACT)
    def browser_click(_ctx: ToolContext, ref: str) -> Reply:
        """Click the element with this ref (a link, button, tab, checkbox, radio, menu item) and show the page after.

        Args:
            ref: The element's ref from the latest snapshot, e.g. "e12".
        """
        run, work = run_of(_ctx)
        return run.act(lambda s: s.act(ref, "click"), work)

    @context_tool(response_format=CONTENT_AND_ARTIFACT)
    def browser_type(_ctx: ToolContext, ref: str, text: str, submit: bool = False) -> Reply:
        """Replace the content of a text field with `text`, optionally pressing Enter.

        A field with a type (date, time, number, range…) takes only its format, shown as format=… in the
        snapshot; a value it refuses is reported with the format it wants.

        Args:
            ref: The field's ref from the latest snapshot, e.g. "e13".
            text: What the field should contain afterwards, exactly (spaces kept), e.g. "2024-03-05" for a date.
            submit: True to press Enter after typing (submits a search box or form).
        """
        run, work = run_of(_ctx)
        return run.act(lambda s: widgets.type_checked(s, ref, text, submit), work)

    @context_tool(response_format=CONTENT_AND_ARTIFACT)
    def browser_select(_ctx: ToolContext, ref: str, option: str | list[str]) -> Reply:
        """Pick an option of a select or combobox by its visible label (else by its value); several in a listbox.

        Args:
            ref: The combobox's or listbox's ref from the latest snapshot, e.g. "e15".
            option: The option's label as listed in the snapshot's options="…", e.g. "2019"; for a multi-select
                (listbox) a list of labels, e.g. ["Red", "Blue"]: exactly those end up selected.
        """
        run, work = run_of(_ctx)
        opened(run)
        if isinstance(option, list):
            if not option:
                raise ToolFailure("pass at least one option label.", "bad_arguments")
            return run.reply(run.run(lambda s: widgets.select_options(s, ref, [str(o) for o in option])), work)
        return run.reply(run.run(lambda s: s.act(ref, "select", option)), work)

    @context_tool(response_format=CONTENT_AND_ARTIFACT)
    def browser_hover(_ctx: ToolContext, ref: str) -> Reply:
        """Move the pointer over an element; what appears (a tooltip, a menu, a chart value) is in the reply.

        Args:
            ref: The element's ref from the latest snapshot, e.g. "e20".
        """
        run, work = run_of(_ctx)
        return run.act(lambda s: s.act(ref, "hover"), work, changes=True)

    return [browser_click, browser_type, browser_select, browser_hover]
