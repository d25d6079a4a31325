"""The endpoint-policy table against the real app: every endpoint has a row, and no visitor sees an answer.

The app is built (not launched) as `app.build_app` builds it; its events are read from `demo.fns`.
Answers are canaries: a GAIA folder and a knowledge base whose only answer is `CANARY`, so any
output that carries it, anywhere, is a leak.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import gradio as gr
import pytest

from config import Settings, load_settings
from rag.types import LookupResult, Match
from tests.support.gaia_fixture import FixtureTask, make_gaia_folder
from ui.runtime import Runtime
from ui.session import Session
from visitors.endpoints import ENDPOINTS, admit

CANARY = "CANARY-ANSWER-7f3a"
QUESTION = "Which word does the canary task expect as its answer?"


def _build(settings: Settings) -> tuple[gr.Blocks, Runtime]:
    from app import build_app

    runtime = Runtime(settings)
    return build_app(settings, runtime), runtime


def _handler(fn: Callable[..., Any]) -> str:
    """Where a handler is defined (ChatInterface wraps `chat` for its own events: the same place)."""
    fn = inspect.unwrap(fn)
    return f"{fn.__module__}:{fn.__qualname__}"


def unlisted(demo: gr.Blocks) -> list[str]:
    """The events a client can call that the table does not cover (empty: every endpoint has its policy).

    A named endpoint needs its row; an unnamed (undocumented or private) event either is gradio's own
    ChatInterface plumbing or runs the very handler of a named endpoint (`_submit_fn` runs `chat`), or is
    private glue of the tabs; an undocumented event of ours that is none of these is missing its row.
    """
    named = {fn.api_name: fn.fn for fn in demo.fns.values() if fn.fn is not None and fn.api_visibility == "public"}
    handlers = {_handler(named[name]) for name in ENDPOINTS if name in named}
    missing = [str(name) for name in named if name not in ENDPOINTS]
    for fn in demo.fns.values():
        if fn.fn is None or fn.api_visibility != "undocumented":
            continue
        if not fn.fn.__module__.startswith("gradio.") and _handler(fn.fn) not in handlers:
            missing.append(str(fn.api_name))
    return missing


@pytest.fixture(scope="module")
def gaia_dir(tmp_path_factory) -> Path:
    return make_gaia_folder(tmp_path_factory.mktemp("canary"), tasks=(FixtureTask("canary", QUESTION, 1, CANARY),))


@pytest.fixture(scope="module")
def visitor_app(tmp_path_factory):
    """The app as an anonymous visitor meets it: APP_ALLOWED_USERS names someone else."""
    settings = load_settings(APP_ALLOWED_USERS="the-owner", OUTPUT_DIR=str(tmp_path_factory.mktemp("runs")),
                             APP_PRELOAD=False)
    return _build(settings) + (settings,)


def test_every_endpoint_of_the_app_has_a_policy_row(visitor_app):
    demo, _, _ = visitor_app
    public = {fn.api_name for fn in demo.fns.values() if fn.fn is not None and fn.api_visibility == "public"}
    assert unlisted(demo) == []
    assert set(ENDPOINTS) == public, "a row names no endpoint of the app"


def test_an_endpoint_without_a_row_is_found(visitor_app):
    demo, _, _ = visitor_app
    with demo:
        gr.api(lambda: "new", api_name="spend_freely")  # type: ignore[attr-defined, unused-ignore]
    try:
        assert unlisted(demo) == ["spend_freely"]
    finally:
        index = max(i for i, fn in demo.fns.items() if fn.api_name == "spend_freely")
        del demo.fns[index]


def test_spending_endpoints_are_the_owners_or_check_the_caller():
    for name, policy in ENDPOINTS.items():
        if policy.spends and policy.caller == "anyone":
            assert name == "rag_lookup", f"/{name} spends for anyone: its handler must check admit().may_spend"


def test_owner_endpoints_refuse_a_visitor_and_admit_the_owner(visitor_app):
    _, _, settings = visitor_app
    for name, policy in ENDPOINTS.items():
        visitor, owner = admit(name, settings, None), admit(name, settings, "the-owner")
        assert (visitor.refusal is not None) == (policy.caller == "owner"), name
        assert owner.refusal is None and owner.may_spend and not visitor.may_spend, name
        assert not visitor.show_answers and owner.show_answers == policy.may_show_answers, name


class CanaryKnowledgeBase:
    """A knowledge base whose one stored answer is the canary (searched without a model, looked up with one)."""

    def search(self, question: str, k: int, exclude_task_ids: list[str]) -> list[Match]:
        return [Match(question=QUESTION, answer=CANARY, similarity=0.97, task_id="t-canary")]

    def lookup(self, question: str, exclude_task_id: str | None = None) -> LookupResult:
        return LookupResult(tier="answer", matches=self.search(question, 1, []), answer=CANARY)


def _call(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> str:
    """The handler's whole output as text (a generator's every item); the login, as gradio fills it: none."""
    if "profile" in inspect.signature(fn).parameters:
        kwargs.setdefault("profile", None)
    out = fn(*args, **kwargs)
    items = list(out) if inspect.isgenerator(out) else [out]
    return repr(items)


RECIPES: dict[str, Callable[[Callable[..., Any], Path], tuple[Any, ...]]] = {
    "load_tasks": lambda fn, data: ("local", "validation", "All", str(data), Session()),
    "rag_lookup": lambda fn, data: (QUESTION, None),
    "preview": lambda fn, data: (None, None, Session()),
    "compare": lambda fn, data: ("run-a", "run-b", Session()),
    "stop": lambda fn, data: (SimpleNamespace(running=False),),
    "status": lambda fn, data: (),
    "ask": lambda fn, data: (QUESTION, None, None, False, None, None, Session()),
}
"""Inputs for each endpoint a visitor reaches, as the tab would send them (the login is gradio's: None)."""


def test_every_endpoint_a_visitor_reaches_is_exercised():
    anyone = {name for name, policy in ENDPOINTS.items() if policy.caller == "anyone"}
    assert anyone <= set(RECIPES), f"give {sorted(anyone - set(RECIPES))} inputs here"


@pytest.mark.parametrize("name", sorted(RECIPES))
def test_no_endpoint_shows_an_answer_to_a_visitor(visitor_app, gaia_dir, monkeypatch, name):
    demo, runtime, _ = visitor_app
    monkeypatch.setattr(runtime, "knowledge_base", CanaryKnowledgeBase)
    fn = next(f.fn for f in demo.fns.values() if f.api_name == name)
    output = _call(fn, *RECIPES[name](fn, gaia_dir))
    assert CANARY not in output, f"/{name} showed a visitor the answer: {output[:500]}"
    if name == "load_tasks":
        assert QUESTION in output  # the tasks themselves did load


def test_the_owner_sees_what_the_table_allows(tmp_path, gaia_dir, monkeypatch):
    """Admitted, answers show where the row allows them (so the check sees a leak) and nowhere else."""
    settings = load_settings(APP_ALLOWED_USERS="*", OUTPUT_DIR=str(tmp_path), APP_PRELOAD=False)
    demo, runtime = _build(settings)
    monkeypatch.setattr(runtime, "knowledge_base", CanaryKnowledgeBase)
    for name in ("load_tasks", "rag_lookup"):
        fn = next(f.fn for f in demo.fns.values() if f.api_name == name)
        assert ENDPOINTS[name].may_show_answers and CANARY in _call(fn, *RECIPES[name](fn, gaia_dir)), name
    for name in (n for n in RECIPES if not ENDPOINTS[n].may_show_answers):
        fn = next(f.fn for f in demo.fns.values() if f.api_name == name)
        assert CANARY not in _call(fn, *RECIPES[name](fn, gaia_dir)), f"/{name} may show no answer, even admitted"


def test_the_docs_show_the_table_as_it_is():
    from config import PROJECT_ROOT
    from visitors.endpoints import policy_table

    page = (PROJECT_ROOT / "docs" / "visitors.md").read_text(encoding="utf-8")
    assert policy_table() in page, "docs/visitors.md: paste visitors.endpoints.policy_table() in place of the table"


@pytest.mark.parametrize("name", sorted(RECIPES))
def test_no_endpoint_shows_a_visitor_a_server_path(visitor_app, gaia_dir, name):
    """Where the app keeps its runs, its code and the tasks' files is the server's business, not a visitor's."""
    from config import PROJECT_ROOT

    demo, _, settings = visitor_app
    fn = next(f.fn for f in demo.fns.values() if f.api_name == name)
    output = _call(fn, *RECIPES[name](fn, gaia_dir))
    for path in (str(Path(settings.OUTPUT_DIR).resolve()), str(PROJECT_ROOT), str(gaia_dir.resolve())):
        assert path not in output, f"/{name} showed a visitor the server path {path}: {output[:500]}"
