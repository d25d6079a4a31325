"""How the suite is split across pytest-xdist workers (`make test` runs `pytest -n 2`, `--dist loadgroup`).

By default every test is its own unit of work, sent to whichever worker is free. A test that shares
something expensive is kept with the tests it shares it with, so that thing is built once:
- it uses a session-scoped fixture of ours (a llama.cpp server, a browser): group `session:<fixture>`,
  one worker runs all of them and the fixture starts once per run, not once per worker;
- else it uses a module- or class-scoped fixture of ours (the app of a tests/app module): group
  `module:<file>`, the module's tests run on one worker and the app is launched once.
An explicit `@pytest.mark.xdist_group("name")` wins. Grouped units go first (biggest first, xdist's
`--loadscope-reorder`), then the ungrouped tests, `integration` ones first, so no slow test is left
for the end.
"""

from __future__ import annotations

import pytest


def _shared_fixtures(item: pytest.Item, scopes: tuple[str, ...]) -> list[str]:
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return []
    names = []
    for name, defs in info.name2fixturedefs.items():
        fixture = defs[-1]
        if fixture.scope in scopes and fixture.baseid:  # baseid "": a plugin's (tmp_path_factory), not ours
            names.append(name)
    return sorted(names)


def group_of(item: pytest.Item) -> str | None:
    """The xdist group `item` joins (see the module docstring), or None to run it anywhere."""
    if item.get_closest_marker("xdist_group") is not None:
        return None
    session = _shared_fixtures(item, ("session", "package"))
    if session:
        return "session:" + "+".join(session)
    if _shared_fixtures(item, ("module", "class")):
        return "module:" + item.nodeid.split("::", 1)[0]
    return None


def assign_groups(items: list[pytest.Item]) -> None:
    """Mark each item with its group, and put the ungrouped `integration` tests first."""
    for item in items:
        group = group_of(item)
        if group is not None:
            item.add_marker(pytest.mark.xdist_group(group))
    items.sort(key=lambda item: item.get_closest_marker("integration") is None
               and item.get_closest_marker("xdist_group") is None)
