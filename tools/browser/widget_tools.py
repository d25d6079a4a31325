"""The browser's widget tools: keys, drag, a point of a screenshot, text selection and file upload.

They complete the element tools (tools.browser.actions) for what clicks and typing cannot do: a slider
worked by arrow keys, a sortable list, a canvas or a map, a highlighter, a reverse image search's upload.
An upload gives the page only a file of the run's workspace or one of the task's attachments.
"""

from __future__ import annotations

from pathlib import Path

from langchain_core.tools import BaseTool

from tools.browser import widgets
from tools.browser.run import RunOf, opened
from tools.core.artifacts import CONTENT_AND_ARTIFACT, Reply
from tools.core.context import ToolContext
from tools.core.context_tool import context_tool
from tools.core.errors import ToolFailure


def upload_path(path: str, context: ToolContext) -> Path:
    """The file `path` names (absolute, or relative to the run's workspace), resolved.

    ToolFailure unless it is an attachment of the task or a file inside the run's workspace (a symlink is
    judged by its target).
    """
    raw = Path((path or "").strip())
    if not str(raw) or str(raw) == ".":
        raise ToolFailure("pass the path of a file to upload: one of the task's attachments or a file of the run's "
                          "workspace.", "bad_arguments")
    work = context.work
    candidates = [raw] if raw.is_absolute() else [work.root / raw, *(a for a in context.attachments if a.name == path)]
    for candidate in candidates:
        try:
            target = candidate.resolve(strict=True)
        except (OSError, RuntimeError):  # missing, or a symlink loop
            continue
        attachment = any(target == a.resolve() for a in context.attachments)
        if (attachment or work.contains(target)) and context.allows(target) and target.is_file():
            return target
        raise ToolFailure(f"{path!r} is not a file of this run's workspace or an attachment of the task; only those "
                          "can be uploaded.", "bad_arguments")
    raise ToolFailure(f"no file {path!r} in this run's workspace or the task's attachments.", "not_found")


def make_widget_tools(run_of: RunOf) -> list[BaseTool]:
    """browser_press, browser_drag, browser_click_at, browser_hover_at, browser_select_text, browser_upload."""

    @context_tool(response_format=CONTENT_AND_ARTIFACT)
    def browser_press(_ctx: ToolContext, key: str, ref: str = "") -> Reply:
        """Press a key or key chord in the browser: on the element `ref` (focused first), or where the focus is.

        Use it for sliders and other widgets worked by the keyboard, for Enter/Escape/Tab, and shortcuts.

        Args:
            key: A Playwright key name or chord, e.g. "ArrowRight", "ArrowLeft", "PageDown", "Home", "End",
                "Enter", "Escape", "Tab", "Shift+Tab", "Control+a", or one character such as "a".
            ref: The element's ref from the latest snapshot, e.g. "e7"; empty for the focused element.
        """
        run, work = run_of(_ctx)
        return run.act(lambda s: widgets.press(s, key, ref), work, changes=True)

    @context_tool(response_format=CONTENT_AND_ARTIFACT)
    def browser_drag(_ctx: ToolContext, from_ref: str, to_ref: str) -> Reply:
        """Drag one element onto another (reorder a sortable list, drop a card on a column) and show the page after.

        Args:
            from_ref: The ref of the element to pick up, e.g. "e4".
            to_ref: The ref of the element to drop it on, e.g. "e9" (it lands at that element's place).
        """
        run, work = run_of(_ctx)
        return run.act(lambda s: widgets.drag(s, from_ref, to_ref), work)

    @context_tool(response_format=CONTENT_AND_ARTIFACT)
    def browser_click_at(_ctx: ToolContext, x: int, y: int) -> Reply:
        """Click at a point of the last screenshot: for canvases, charts and maps whose parts have no ref.

        Take browser_screenshot first and read the point off it; the reply says what was under the point.

        Args:
            x: CSS pixels from the left edge of the last screenshot.
            y: CSS pixels from the top edge of the last screenshot.
        """
        run, work = run_of(_ctx)
        return run.act(lambda s: widgets.at_point(s, run.shot, x, y, True), work, changes=True)

    @context_tool(response_format=CONTENT_AND_ARTIFACT)
    def browser_hover_at(_ctx: ToolContext, x: int, y: int) -> Reply:
        """Move the pointer to a point of the last screenshot; a tooltip that appears (a chart's value) is in the reply.

        Args:
            x: CSS pixels from the left edge of the last screenshot.
            y: CSS pixels from the top edge of the last screenshot.
        """
        run, work = run_of(_ctx)
        return run.act(lambda s: widgets.at_point(s, run.shot, x, y, False), work, changes=True)

    return [browser_press, browser_drag, browser_click_at, browser_hover_at, *_text_and_file_tools(run_of)]


def _text_and_file_tools(run_of: RunOf) -> list[BaseTool]:
    @context_tool(response_format=CONTENT_AND_ARTIFACT)
    def browser_select_text(_ctx: ToolContext, ref: str, text: str = "") -> Reply:
        """Select (highlight) text as a mouse would, in the element `ref` or the page; the page's response is shown.

        Args:
            ref: The ref of the element (a field, a list item) holding the text, e.g. "e5"; empty to find the
                text anywhere on the page (plain paragraphs have no ref).
            text: The words to select, copied from the snapshot; empty to select all of the element's text.
        """
        run, work = run_of(_ctx)
        return run.act(lambda s: widgets.select_text(s, ref, text), work, changes=True)

    @context_tool(response_format=CONTENT_AND_ARTIFACT)
    def browser_upload(_ctx: ToolContext, ref: str, path: str) -> Reply:
        """Upload a file through the page's file field (or the upload button that opens a file chooser).

        Only an attachment of the task or a file in this run's workspace (e.g. a saved screenshot) can be uploaded.

        Args:
            ref: The ref of the file field or upload button from the latest snapshot, e.g. "e3".
            path: The file's path: an attachment's path, or a path inside the run's workspace.
        """
        run, work = run_of(_ctx)
        opened(run)
        target = upload_path(path, _ctx)
        return run.reply(run.run(lambda s: widgets.upload(s, ref, target)), work)

    return [browser_select_text, browser_upload]
