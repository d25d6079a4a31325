"""Shared fixtures of the tools tests: sandbox process baselines and browser runs over a module's `site`."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _processes_running_before_the_test(request):
    """Remember which descendants of pytest already ran (session servers), so leftover checks ignore them."""
    if not request.module.__name__.rsplit(".", 1)[-1].startswith("test_sandbox"):
        yield
        return
    from tests.tools import test_sandbox_support as support

    support.BASELINE = set()
    support.BASELINE = set(support.leftover_pids())
    yield


@pytest.fixture(scope="module")
def site(request):
    """The module's loopback site, served for the module by its `SITE` (e.g. tests/support/js_sites.js_sites).

    A module that builds its site otherwise defines its own `site` fixture instead.
    """
    with request.module.SITE() as server:
        yield server


@pytest.fixture(scope="module")
def browser(site):
    """The browser tools over the module's `site` only, one shared Chromium for the module."""
    from tests.support.js_sites import BrowserHarness

    with BrowserHarness(site.host_port) as harness:
        yield harness


@pytest.fixture
def run(browser):
    """One run (its own workspace and browser context) over the module's `browser`; see ToolRun."""
    from tests.support.js_sites import ToolRun

    with ToolRun(browser) as tool_run:
        yield tool_run
