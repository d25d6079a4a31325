"""How the suite is split across pytest-xdist workers (`make test` runs `pytest -n 3`, `--dist loadgroup`).

By default every test is its own unit of work, sent to whichever worker is free. A test that shares
something expensive is kept with the tests it shares it with, so that thing is built once:
- it uses a session-scoped fixture of ours (the llama.cpp server, the embedding model, a browser) by name
  (an autouse one, e.g. the suite's ANSWER_CHECK=off, serves every test and groups none):
  group `session:<fixture>`, one worker runs all of them and the fixture is built once per run;
- else it uses a module- or class-scoped fixture of ours (the app of a tests/app module): group
  `module:<file>`, the module's tests run on one worker and the app is launched once.
An explicit `@pytest.mark.xdist_group("name")` wins. Groups go first (biggest first, xdist's
`--loadscope-reorder`), then the ungrouped tests, `integration` ones first, so no slow test is left
for the end.

Why not xdist's own loadgroup: it tags each test's nodeid with `@group` on the worker, which pytest 9.2
(structured node ids) ignores, so every test ran alone and each worker launched the apps and servers.
Here the first worker writes {nodeid: group} to a file the controller names (`pytest_configure_node`),
and `GroupScheduling` (xdist's loadscope scheduler, scoped by that map) reads it once every worker
has collected.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest
from xdist.scheduler import LoadScopeScheduling

GROUPS_FILE = "xdist_groups_file"
"""The `workerinput` key naming the file of {nodeid: group}."""


def _shared_fixtures(item: pytest.Item, scopes: tuple[str, ...]) -> list[str]:
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return []
    names = []
    for name, defs in info.name2fixturedefs.items():
        fixture = defs[-1]
        # baseid "": a plugin's (tmp_path_factory), not ours. An autouse fixture is shared by every test below
        # its folder: grouping by it would put them all on one worker (a session-wide one did: 2,127 of 2,173).
        if fixture.scope in scopes and fixture.baseid and not getattr(fixture, "_autouse", False):
            names.append(name)
    return sorted(names)


def group_of(item: pytest.Item) -> str | None:
    """The xdist group `item` joins (see the module docstring), or None to run it anywhere."""
    explicit = item.get_closest_marker("xdist_group")
    if explicit is not None:
        return str(explicit.args[0] if explicit.args else explicit.kwargs.get("name", "default"))
    session = _shared_fixtures(item, ("session", "package"))
    if session:
        return "session:" + "+".join(session)
    if _shared_fixtures(item, ("module", "class")):
        return "module:" + item.nodeid.split("::", 1)[0]
    return None


def slow_first(items: list[pytest.Item]) -> None:
    """Put the ungrouped `integration` tests before the other ungrouped ones (stable: same order on every worker)."""
    items.sort(key=lambda item: item.get_closest_marker("integration") is None and group_of(item) is None)


def write_groups(config: pytest.Config, items: list[pytest.Item]) -> None:
    """On the first worker, write {nodeid: group} where the controller will read it."""
    workerinput: dict[str, Any] = getattr(config, "workerinput", {})
    target = workerinput.get(GROUPS_FILE)
    if not target or workerinput.get("workerid") != "gw0":
        return
    groups = {item.nodeid: group for item in items if (group := group_of(item)) is not None}
    partial = Path(f"{target}.partial")
    partial.write_text(json.dumps(groups), encoding="utf-8")
    os.replace(partial, target)  # whole or absent: the controller never reads half a file


class GroupScheduling(LoadScopeScheduling):
    """xdist's loadscope scheduler with the groups of this module as scopes (each other test its own scope)."""

    def __init__(self, config: pytest.Config, log: Any = None, *, groups_file: Path) -> None:
        super().__init__(config, log)
        self._groups_file = groups_file
        self._groups: dict[str, str] | None = None

    def _split_scope(self, nodeid: str) -> str:
        if self._groups is None:  # read once, when every worker has collected (gw0 wrote it before saying so)
            path = self._groups_file
            self._groups = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
        return self._groups.get(nodeid) or self._groups.get(nodeid.rsplit("@", 1)[0]) or nodeid


_STASH = pytest.StashKey[Path]()


def groups_file(config: pytest.Config) -> Path:
    """The controller's file for this run's groups (created on first use)."""
    if _STASH not in config.stash:
        config.stash[_STASH] = Path(tempfile.mkdtemp(prefix="xdist-groups-")) / "groups.json"
    return config.stash[_STASH]


def remove_groups_file(config: pytest.Config) -> None:
    """Controller, at the end: remove this run's groups file and its folder."""
    if _STASH in config.stash:
        shutil.rmtree(config.stash[_STASH].parent, ignore_errors=True)


SANDBOXES = pytest.mark.xdist_group("sandboxes")
"""For a module whose tests run sandboxed programs (fork bombs among them): such modules run on one worker, one
after another. Side by side, a call's fork failed with EAGAIN (its user's process limit reached while another
worker's killed fork bomb was still being reaped)."""
