"""The app's page in Chromium, driven as a user does: open it until ready, start a batch, say something in Chat."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

BATCH_TAB = "📊 Batch evaluation"
CHAT_TAB = "💬 Chat"


@contextmanager
def app_page(browser: Any, url: str, width: int = 1400, height: int = 1000) -> Iterator[Any]:
    """A page of the app at `url` in its own browser context, once the header says the preload is "Ready"."""
    context = browser.new_context(viewport={"width": width, "height": height})
    try:
        page = context.new_page()
        page.set_default_timeout(30_000)
        page.goto(url)
        page.wait_for_selector("#question textarea")
        page.wait_for_function("document.querySelector('#status-line').innerText.includes('Ready')", timeout=90_000)
        yield page
    finally:
        context.close()


def start_batch(page: Any, data_dir: Path, concurrency: int, max_samples: int | None = None,
                task_ids: str | None = None) -> None:
    """Fill the Batch tab's form for a local GAIA folder (no delay between questions) and press Run.

    `max_samples` and `task_ids` are left as the form has them when None.
    """
    page.get_by_role("tab", name=BATCH_TAB).click()
    page.fill("#data-dir textarea", str(data_dir))
    if task_ids is not None:
        page.fill("#task-ids textarea", task_ids)
    if max_samples is not None:
        page.fill("#max-samples input", str(max_samples))
    page.fill("#concurrency input[type=number]", str(concurrency))
    page.press("#concurrency input[type=number]", "Enter")
    page.fill("#delay input", "0")
    page.click("#run-btn")


def chat(page: Any, text: str) -> Any:
    """Open the Chat tab and send `text`; the message box (for the next turn)."""
    page.get_by_role("tab", name=CHAT_TAB).click()
    box = page.locator("#chat-input textarea")
    box.fill(text)
    box.press("Enter")
    return box


def pick_task(page: Any, gaia_dir: Path, option: str) -> None:
    """In the Debug tab, load the GAIA folder's tasks and pick the one whose entry shows `option`."""
    page.get_by_text("Pick a task from a GAIA split").click()
    page.fill("#pick-dir textarea", str(gaia_dir))
    page.click("#load-btn")
    page.wait_for_function("document.querySelector('#task-info').innerText.includes('Loaded 6 task(s)')")
    page.click("#task-pick input")
    page.locator("[role=option]", has_text=option).first.click()
