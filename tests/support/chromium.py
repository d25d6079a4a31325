"""Debian's headless Chromium for the browser tests: its path, its flags, the marks of a browser module."""

from __future__ import annotations

from pathlib import Path

import pytest

CHROMIUM = Path("/usr/bin/chromium")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run"]

BROWSER_MARKS = [
    pytest.mark.browser,
    pytest.mark.integration,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian chromium is not installed at /usr/bin/chromium"),
]
"""A browser test module's `pytestmark`."""

SPINNING_RENDERERS = pytest.mark.xdist_group("spinning-renderers")
"""For a module whose pages spin a renderer at full CPU to test the hang limits: such modules run on one worker,
one after another (two spinning renderers at once, on 2 loaded cores, held the engine's kill of a hung page past the
tool's own limit)."""


def browser_tool_marks() -> list[pytest.MarkDecorator]:
    """A browser-tools test module's `pytestmark`: skipped where the tools themselves say they cannot run."""
    from tools.browser.engine import chromium_missing

    missing = chromium_missing(str(CHROMIUM))
    return [pytest.mark.integration, pytest.mark.skipif(missing is not None, reason=missing or "")]
