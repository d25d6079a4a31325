"""The tab contract (`ui.tab.Tab`): each tab of `app.TABS` is on the page under its id and title, with components."""

from __future__ import annotations

import dataclasses

import gradio as gr

from config import load_settings
from ui.runtime import Runtime
from ui.session import Session
from ui.tab import TabContext


def test_each_listed_tab_is_built_with_its_id_and_title():
    from app import TABS, build_app

    settings = load_settings()
    demo = build_app(settings, Runtime(settings))
    tabs = {b.id: b.label for b in demo.blocks.values() if isinstance(b, gr.Tab)}
    assert [t.id for t in TABS] == ["debug", "batch", "chat"]
    assert all(tabs[t.id] == t.title for t in TABS), tabs


def test_build_returns_the_tabs_components_as_a_dataclass():
    from app import TABS

    settings = load_settings()
    runtime = Runtime(settings)
    for tab in TABS:
        with gr.Blocks() as demo:
            components = tab.build(TabContext(demo, settings, runtime, gr.State(Session())))
        assert dataclasses.is_dataclass(components), tab.id
        fields = [getattr(components, f.name) for f in dataclasses.fields(components)]
        assert any(isinstance(v, gr.components.Component) for v in fields), tab.id
