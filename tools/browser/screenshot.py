"""browser_screenshot: the page as a PNG in the run's workspace, optionally asked about by the vision model."""

from __future__ import annotations

import io

from langchain_core.tools import BaseTool

from config import Settings
from tools.browser.run import RunOf, opened, thumbnail_url
from tools.browser.session import BrowserSession
from tools.browser.widgets import ShotFrame
from tools.core.artifacts import CONTENT_AND_ARTIFACT, Reply, ToolArtifact
from tools.core.context import ToolContext
from tools.core.context_tool import context_tool
from tools.media.images import SourceImage
from tools.media.vision_model import ask_vision, standalone_client


def make_screenshot_tool(settings: Settings, run_of: RunOf) -> BaseTool:
    """browser_screenshot over the calling run's tab."""
    fallback = standalone_client(settings) if settings.llm_configured else None

    @context_tool(response_format=CONTENT_AND_ARTIFACT)
    def browser_screenshot(_ctx: ToolContext, question: str = "", full_page: bool = False) -> Reply:
        """Take a PNG screenshot of what the browser shows now, saved in the run's workspace; optionally ask about it.

        Use it for what text cannot show: charts drawn on a canvas, maps, images, colours, layout. With a
        question, the vision model looks at the screenshot and answers it. Its pixels are the points
        browser_click_at and browser_hover_at take.

        Args:
            question: What you want to know about the page, e.g. "What value does the 2019 bar show?"
                Leave empty to only save the screenshot.
            full_page: True for the whole page top to bottom (at most 10000 pixels tall), not only the 1280×800 view.
        """
        run, services = run_of(_ctx)
        work = services.workspace
        opened(run)
        png, url, frame = run.run(lambda s: _shoot(s, full_page))
        run.shot = frame
        work.reserve(len(png), "the screenshot")
        path = (work.subdir("browser") / "screenshot.png").resolve()
        path.write_bytes(png)
        size = f"{frame.width}×{frame.height}"
        what = f"the whole page, {size}" if full_page else f"the {size} view"
        text = f"Screenshot of {url} ({what}) saved to {path}."
        model = _ctx.model or fallback
        if question.strip() and (settings.vision_model is None or model is None):
            text += " No vision model is configured here, so the question was not answered."
        elif question.strip() and model is not None:
            from PIL import Image

            image = Image.open(io.BytesIO(png)).convert("RGB")
            answer = ask_vision(model, settings, question, [SourceImage(image, str(path))])
            text += f"\n\nThe vision model's answer to {question!r}:\n{answer or '(empty answer)'}"
        return text, ToolArtifact(thumbnail_url(png, 640))

    return browser_screenshot


MAX_SHOT_HEIGHT = 10000
"""The tallest full-page screenshot, in CSS pixels (a longer page is cut there)."""

_GEOMETRY_JS = ("() => [scrollX, scrollY, innerWidth, innerHeight, "
                "Math.max(document.documentElement.scrollWidth, innerWidth), "
                "Math.max(document.documentElement.scrollHeight, document.body ? document.body.scrollHeight : 0)]")


def _shoot(session: BrowserSession, full_page: bool) -> tuple[bytes, str, ShotFrame]:
    """The PNG, the URL, and where the picture lies in the page (for the point tools)."""
    left, top, width, height, page_width, page_height = session.page.evaluate(_GEOMETRY_JS)
    if not full_page:
        return session.screenshot(), session.page.url, ShotFrame(left, top, int(width), int(height), False)
    tall = int(min(page_height, MAX_SHOT_HEIGHT))
    png = bytes(session.page.screenshot(type="png", full_page=True,
                                        clip={"x": 0, "y": 0, "width": int(page_width), "height": tall}))
    return png, session.page.url, ShotFrame(0, 0, int(page_width), tall, True)


