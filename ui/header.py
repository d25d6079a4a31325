"""The header above the tabs: one line that says whether the agent can answer, and expands into the details.

Live: refreshed every second while the agent loads (each part as it becomes ready), then every few
seconds (the endpoint's latest re-check, the knowledge base's size on disk); `/status` for API clients.
On a 420 px phone the collapsed header is the title and that one line.
"""

from __future__ import annotations

import gradio as gr

from ui.runtime import Runtime

TITLE = ("### 🧭 GAIA agent harness <small>— a LangGraph ReAct agent over any OpenAI-compatible endpoint, "
         "with a live trace of every step</small>")
LIVE_S = 5.0
"""Header refresh once loaded: the endpoint re-check runs every APP_STATUS_RECHECK_S in the background."""

# Tool steps read better when the assistant's bubble spans the chat's width. Download names are shown whole
# (gradio cuts the stem first, leaving `.js`). On a phone (420 px) the tab buttons are made small enough for
# all three to fit, and the header keeps to its title and one line.
CSS = """#status-line {font-size: 0.92em}
#status-line > button {font-weight: normal; text-align: left}
#title h3 {margin: 0}
#trace .bubble.bot-row, #chatbot .bubble.bot-row {width: calc(100% - var(--spacing-xl) * 6)}
#trace .bot-row .message, #chatbot .bot-row .message {width: 100%}
#downloads .filename {white-space: normal; word-break: break-all}
#downloads .filename .stem {overflow: visible; text-overflow: clip; white-space: normal}
#downloads button[aria-label="Clear"], #downloads .label-clear-button {display: none !important}
#results td:has(> span:only-child) {font-size: 1.05em}
@media (max-width: 560px) {
  .tab-container button {padding: 0 5px !important; font-size: 0.8rem !important; white-space: nowrap}
  #title small {display: none}
}"""


def _plain(summary: str) -> str:
    """An accordion label is plain text: the summary without Markdown emphasis or HTML colour spans."""
    text = summary.replace("**", "")
    while "<span" in text:
        start = text.index("<span")
        text = text[:start] + text[text.index(">", start) + 1:]
    return text.replace("</span>", "")


def build_header(demo: gr.Blocks, runtime: Runtime) -> None:
    """The title, the one-line status that expands, and their refresh timer; `/status` for API clients."""
    gr.Markdown(TITLE, elem_id="title")
    first = runtime.status()
    with gr.Accordion(_plain(first.summary), open=False, elem_id="status-line") as line:
        details = gr.Markdown(first.details(), elem_id="status-details")
        with gr.Accordion("Tools and tiers", open=False):
            tools_md = gr.Markdown(runtime.tools_markdown())
    timer = gr.Timer(1.0)

    def refresh_status() -> tuple[gr.Accordion, str, str, gr.Timer]:
        if runtime.settings.APP_PRELOAD:
            runtime.start()  # reload mode (`gradio app.py`) never calls main(): the first page starts the load
        now = runtime.status()
        pace = LIVE_S if runtime.ready.is_set() else 1.0
        return gr.Accordion(label=_plain(now.summary)), now.details(), runtime.tools_markdown(), gr.Timer(pace)

    def status_text() -> str:
        """The header's status: what the preload made ready, is loading, or is missing (live)."""
        return runtime.status_markdown()

    outputs = [line, details, tools_md, timer]
    demo.load(refresh_status, None, outputs, api_visibility="private", queue=False)
    timer.tick(refresh_status, None, outputs, api_visibility="private", queue=False)
    # gradio imports `api` from gradio.events but leaves it out of its __all__: strict mypy (no implicit re-export)
    # rejects `gr.api`; the project's non-strict config accepts it, hence unused-ignore too.
    gr.api(status_text, api_name="status", queue=False)  # type: ignore[attr-defined, unused-ignore]
