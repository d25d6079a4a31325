"""What every registered tool must have: a tier, an `Args:` line per argument, and (if it opens files) a route.

A new tool is one module plus one line in `tools.core.registry.FACTORIES`; this test is what catches a tool
whose docstring (its schema for the model) forgot an argument, or a file reader the router never names.
"""

from __future__ import annotations

import re

import pytest

from application import Application
from config import load_settings
from tools.core.registry import FACTORIES, build_registry
from tools.core.routes import ROUTES


@pytest.fixture(scope="module")
def registry():
    # An endpoint makes the model-backed tools available and the application's pools the browser's; nothing is called.
    settings = load_settings(OPENAI_API_KEY="sk-contract", OPENAI_BASE_URL="http://127.0.0.1:9/v1")
    with Application(settings) as app:
        yield build_registry(settings, deps=app.tool_services())


def _documented_args(description: str) -> set[str]:
    _, _, section = description.partition("Args:")
    return set(re.findall(r"^\s+(\w+):", section, flags=re.M))


def test_every_factory_is_imported_not_named_by_a_string():
    assert FACTORIES and all(callable(factory) for _, factory in FACTORIES)


def test_every_active_tool_has_a_tier(registry):
    assert len(registry.tools) >= 15, registry.missing
    for made in registry.tools:
        assert registry.tier_of(made.name) in ("base", "extension", "rag"), made.name


def test_every_argument_is_explained_in_the_docstring(registry):
    for made in registry.tools:
        missing = set(made.args) - _documented_args(made.description or "")
        assert not missing, f"{made.name}: no `Args:` line for {sorted(missing)}"


def test_no_tool_shows_the_model_its_injected_run_context(registry):
    from langchain_core.utils.function_calling import convert_to_openai_tool

    for made in registry.tools:
        shown = convert_to_openai_tool(made)["function"]["parameters"].get("properties", {})
        assert not {"config", "_ctx"} & set(shown), made.name


def test_every_file_reader_is_named_by_a_route_and_every_route_names_a_real_tool(registry):
    routed = {name for route in ROUTES.values() for name in route.tools}
    readers = {made.name for made in registry.tools if "path" in made.args}
    assert readers - routed == set(), "file tools the router never points at"
    assert routed - set(registry.names) == set(), "routes naming tools that do not exist"


def test_a_documented_argument_the_tool_lacks_is_caught():
    assert _documented_args("Do it.\n\n        Args:\n            path: a file.\n") == {"path"}


def test_every_active_tool_has_a_spec_row(registry):
    from tools.core.specs import SPECS

    assert [t.name for t in registry.tools if t.name not in SPECS] == []


def test_role_tool_sets_are_the_team_contract(registry):
    from tools.core.specs import names_for

    active = registry.names
    assert set(names_for("coder", active)) <= {"run_python", "calculator", "read_file"}
    assert "delegate" not in active
    assert all(name.startswith("browser_") or name == "find_in_page" for name in names_for("browser", active))
    assert {"web_search", "fetch_webpage", "find_in_page"} <= set(names_for("researcher", active))
    assert "run_python" not in names_for("reader", active)
