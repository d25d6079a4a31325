"""The header above the tabs: title, the preload's status line, the tool tiers, and their refresh timer."""

from __future__ import annotations

import gradio as gr

from ui.runtime import Runtime

HEADER = ("# 🧭 GAIA agent harness\n"
          "A LangGraph ReAct agent over any OpenAI-compatible endpoint, with a live trace of every step.")


def build_header(demo: gr.Blocks, runtime: Runtime) -> None:
    """The header's components, refreshed every second until the preload is done; `/status` for API clients."""
    gr.Markdown(HEADER)
    status = gr.Markdown(runtime.status_markdown(), elem_id="status-line")
    with gr.Accordion("Tools and tiers", open=False):
        tools_md = gr.Markdown(runtime.tools_markdown())
    timer = gr.Timer(1.0)

    def refresh_status():
        done = runtime.ready.is_set()
        return runtime.status_markdown(), runtime.tools_markdown(), gr.Timer(active=not done)

    def status_text() -> str:
        """The header's status line: what the preload made ready, is loading, or is missing."""
        return runtime.status_markdown()

    demo.load(refresh_status, None, [status, tools_md, timer], api_visibility="private", queue=False)
    timer.tick(refresh_status, None, [status, tools_md, timer], api_visibility="private", queue=False)
    gr.api(status_text, api_name="status", queue=False)
