"""Test-wide guards: no calls home, no hub downloads, no stray .env, no connection outside loopback, no tool bug.

Also how the tests are grouped on pytest-xdist workers (tests/support/xdist_groups.py).
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import ui.gradio_stubs  # noqa: E402, F401 - as the app does: gradio's import without rewriting its stubs
from tests.support import socket_guard  # noqa: E402 - needs ROOT on the path
from tests.support.xdist_groups import (  # noqa: E402
    GROUPS_FILE,
    GroupScheduling,
    groups_file,
    remove_groups_file,
    slow_first,
    write_groups,
)

socket_guard.install()


class _ToolBugs(logging.Handler):
    """Collects the executor's "internal error in tool" records: a tool's bug, which the agent only reads as text."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.seen: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.getMessage().startswith("internal error in tool"):
            self.seen.append(self.format(record))


_TOOL_BUGS = _ToolBugs()
logging.getLogger("tools.core.executor").addHandler(_TOOL_BUGS)


@pytest.fixture
def application():
    """A fresh application over the test's settings: nothing learnt from an earlier test's server.

    Windows and tokens-per-character ratios are learnt per application (an earlier test's scripted usage of
    100,000 tokens on a port the OS hands out again must not mask this test's observations), so each test
    that shares one between pipelines builds it here; a `Pipeline` made without one owns its own.
    """
    from application import Application
    from config import load_settings

    app = Application(load_settings())
    yield app
    app.close()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """On xdist workers: hand out the slow ungrouped tests first; tell the controller the groups."""
    if hasattr(config, "workerinput"):
        slow_first(items)
        write_groups(config, items)


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """Controller: name the file where the first worker writes the groups."""
    node.workerinput[GROUPS_FILE] = str(groups_file(node.config))


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """Controller: `--dist loadgroup` schedules by the groups of tests/support/xdist_groups.py."""
    if config.getvalue("dist") != "loadgroup":
        return None
    return GroupScheduling(config, log, groups_file=groups_file(config))


def pytest_unconfigure(config: pytest.Config) -> None:
    """Controller: the groups file goes with the run."""
    remove_groups_file(config)


@pytest.fixture(autouse=True)
def _stays_on_loopback():
    """Fail the test if anything in this process tried to connect outside loopback (see socket_guard)."""
    yield
    refused = socket_guard.take_violations()
    if refused:
        pytest.fail("connection outside loopback refused:\n" + "\n".join(refused), pytrace=False)


@pytest.fixture(autouse=True)
def _tool_bugs_fail_the_test(request):
    """A tool that raised an unexpected exception in this process fails the test (unless it is marked `tool_bug`).

    The agent turns such a bug into an observation and goes on (`tools.core.executor.run_tool`), so a test of the
    agent would otherwise pass over it; the pipeline's `raise_internal_errors` stays a parameter for the tests
    that want the run itself to end.
    """
    _TOOL_BUGS.seen.clear()
    yield
    seen, _TOOL_BUGS.seen[:] = list(_TOOL_BUGS.seen), []
    if seen and request.node.get_closest_marker("tool_bug") is None:
        pytest.fail("a tool raised an internal error (a bug):\n" + "\n".join(seen), pytrace=False)


@pytest.fixture(scope="session", autouse=True)
def _answer_check_off_by_default():
    """Tests run with ANSWER_CHECK=off unless they ask for "on" (its own tests and a batch test do).

    The check adds a request after every answer; the tests of scripted request counts predate it.
    Session-scoped so that module-scoped pipelines, built before any function fixture, see it too.
    """
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("ANSWER_CHECK", "off")
        yield


@pytest.fixture(autouse=True)
def _offline_env(monkeypatch, tmp_path):
    """Every test runs offline, with settings from the environment only (a developer's .env is ignored)."""
    monkeypatch.setenv("GRADIO_ANALYTICS_ENABLED", "False")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    monkeypatch.setenv("RAG_INDEX_DIR", str(tmp_path / "rag_index"))
    monkeypatch.setenv("OUTPUT_DIR", str(tmp_path / "runs"))
    from config import Settings
    from tests.support.settings import ENDPOINT_SETTINGS

    for name in (*Settings.secret_fields(), *ENDPOINT_SETTINGS):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)  # so a developer's ./.env is not read


@pytest.fixture(scope="session")
def llama_server(tmp_path_factory):
    """A real llama.cpp OpenAI-compatible server (SmolLM2-135M) on 127.0.0.1 for the whole session."""
    from tests.support.llama_server import LlamaServer, missing_reason

    reason = missing_reason()
    if reason is not None:
        pytest.skip(reason)
    server = LlamaServer(n_ctx=4096, log=tmp_path_factory.mktemp("llama") / "server.log")
    server.start()
    yield server
    server.stop()
