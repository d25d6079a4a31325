"""An operable browser: one shared Chromium behind a filtering proxy, a context per run, snapshots with refs."""

from tools.browser.tools import BROWSER_TOOLS, make_browser_tools

__all__ = ["BROWSER_TOOLS", "make_browser_tools"]
