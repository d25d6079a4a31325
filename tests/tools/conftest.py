"""Sandbox tests count the processes a test leaves behind: only those it started itself."""

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
