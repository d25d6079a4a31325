"""The generated docs pages agree with the code: the tools page with the registry, the settings page with config.py."""

from __future__ import annotations

import pytest

from config import Settings, settings_table
from tools.browser.engines import BrowserEngines
from tools.core.generated_docs import (
    SETTINGS_BLOCK,
    SETTINGS_PAGE,
    TOOLS_BLOCK,
    TOOLS_PAGE,
    block_of,
    catalog_settings,
    tools_table,
    with_block,
)
from tools.core.registry import build_registry


def test_the_tools_page_is_the_registrys_table():
    expected = tools_table(build_registry(catalog_settings(), deps={"browsers": BrowserEngines()}))
    assert block_of(TOOLS_PAGE.read_text(encoding="utf-8"), TOOLS_BLOCK) == expected, \
        "docs/tools.md is stale: run `python -m tools.core.generated_docs`"


def test_the_settings_page_documents_every_variable():
    page = SETTINGS_PAGE.read_text(encoding="utf-8")
    assert block_of(page, SETTINGS_BLOCK) == settings_table() + "\n", \
        "docs/configuration.md is stale: run `python -m tools.core.generated_docs`"
    assert [name for name in Settings.model_fields if f"`{name}`" not in page] == []


def test_a_block_is_replaced_between_its_markers_only():
    page = "intro\n<!-- T -->\nold\n<!-- /T -->\noutro\n"
    assert with_block(page, "T", "new\n") == "intro\n<!-- T -->\nnew\n<!-- /T -->\noutro\n"
    with pytest.raises(ValueError, match="marker"):
        with_block("no markers", "T", "x")
