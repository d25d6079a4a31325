"""The browser tools: open, click, type, select, hover, scroll, back, snapshot and screenshot a page.

Each run gets its own browser context on first use (tools.browser.session), closed when the run's
workspace closes; its replies are made by its `BrowserRun` (tools.browser.run), and
find_in_page(source="browser", query=…) searches the current page's whole snapshot. This module
assembles the tools over the application's shared browser.
"""

from __future__ import annotations

from langchain_core.tools import BaseTool

from config import Settings
from tools.browser.actions import make_action_tools
from tools.browser.engine import BrowserEngine, EngineConfig, chromium_missing
from tools.browser.engines import BrowserEngines
from tools.browser.proxy import ProxyRules
from tools.browser.run import BrowserRun, BrowserTimes
from tools.browser.screenshot import make_screenshot_tool
from tools.core.context import ToolContext
from tools.core.errors import MissingDependency
from tools.core.services import RunServices
from tools.search import blocked_prefixes
from tools.web.netguard import NetPolicy

BROWSER_TOOLS = ["browser_open", "browser_click", "browser_type", "browser_select", "browser_hover",
                 "browser_scroll", "browser_back", "browser_snapshot", "browser_screenshot", "browser_press",
                 "browser_drag", "browser_click_at", "browser_hover_at", "browser_select_text", "browser_upload"]


def _browser_run(ctx: ToolContext, engine: BrowserEngine,
                 settings: Settings) -> tuple[BrowserRun, RunServices]:
    services = ctx.services

    def make() -> BrowserRun:
        return BrowserRun(engine, BrowserTimes.from_settings(settings), settings.BROWSER_MAX_PAGES,
                          settings.MAX_FILE_SIZE)

    return services.browser(make), services


def engine_config(settings: Settings) -> EngineConfig:
    """The shared browser's launch and proxy rules from these settings (FETCH_ALLOWED_HOSTS, BLOCKED_DOMAINS)."""
    rules = ProxyRules(NetPolicy.parse(settings.FETCH_ALLOWED_HOSTS), tuple(blocked_prefixes(settings.BLOCKED_DOMAINS)))
    return EngineConfig.from_settings(settings, rules)


def engine_for(settings: Settings, browsers: BrowserEngines) -> BrowserEngine:
    """The application's shared browser for these settings' address rules and blocked domains."""
    return browsers.get(engine_config(settings))


def make_browser_tools(settings: Settings, browsers: BrowserEngines | None = None) -> list[BaseTool]:
    """Build the browser tools over the application's pools (`browsers`, injected by the registry's deps).

    Needs Playwright (requirements.txt) and Chromium (Debian's `chromium`), and the pools to run in.
    """
    missing = chromium_missing(settings.BROWSER_EXECUTABLE)
    if missing:
        raise MissingDependency(BROWSER_TOOLS, missing)
    if browsers is None:
        raise MissingDependency(BROWSER_TOOLS, "no browser pool was given: build the registry with "
                                               "deps=Application.tool_deps()")
    engine = engine_for(settings, browsers)

    def run_of(ctx: ToolContext) -> tuple[BrowserRun, RunServices]:
        return _browser_run(ctx, engine, settings)

    return make_action_tools(settings, run_of, make_screenshot_tool(settings, run_of))


