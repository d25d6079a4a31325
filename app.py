"""GAIA agent harness — the Gradio app: debug one question, evaluate a batch, chat.

Wiring only: one builder per tab (`ui/<tab>_tab.py`, each wiring its own events) whose handlers call
the one pipeline (`stream()`) and the evaluation runner. The server answers HTTP at once; the agent
(LLM client, graph, embeddings, tool checks) loads in a background thread (`ui.runtime.Runtime`) and
the header says what is ready.
Heavy libraries are imported there, never on this module's import path.

    python app.py            # serves on GRADIO_SERVER_NAME:GRADIO_SERVER_PORT (0.0.0.0:7860)
"""

import logging

import gradio as gr

from config import Settings, get_settings
from tools.hardening import make_non_dumpable
from ui import fair_share, upload_budget
from ui.access import refusal_for
from ui.batch_tab import build_batch_tab
from ui.chat_tab import build_chat_tab
from ui.debug_tab import build_debug_tab
from ui.header import build_header
from ui.runtime import Runtime
from ui.session import Session

# Tool steps read better when the assistant's bubble spans the chat's width. Download names are shown whole
# (gradio cuts the stem first, leaving `.js`). On a phone (420 px) the tab buttons are made small enough for
# all three to fit: gradio moves the ones that do not fit behind a `⋯` menu.
CSS = """#status-line {font-size: 0.92em}
#trace .bubble.bot-row, #chatbot .bubble.bot-row {width: calc(100% - var(--spacing-xl) * 6)}
#trace .bot-row .message, #chatbot .bot-row .message {width: 100%}
#downloads .filename {white-space: normal; word-break: break-all}
#downloads .filename .stem {overflow: visible; text-overflow: clip; white-space: normal}
@media (max-width: 560px) {
  .tab-container button {padding: 0 5px !important; font-size: 0.8rem !important; white-space: nowrap}
}"""


CACHE_MAX_AGE_S = 7200
"""Gradio's cache sweep deletes served files older than this; uploads per address are counted over the same window."""


def build_app(settings: Settings, runtime: Runtime) -> gr.Blocks:
    """The header and the three tabs around one shared (lazily loaded) runtime; each builder wires its own events."""
    # delete_cache: every hour, drop served files (traces, uploads, run downloads) older than two hours.
    with gr.Blocks(title="GAIA agent harness", fill_width=True, delete_cache=(3600, CACHE_MAX_AGE_S)) as demo:
        build_header(demo, runtime)
        # The visitor's own files (uploads, runs, download copies), removed when their session ends.
        session = gr.State(Session(max_upload_bytes=int(settings.VISITOR_MAX_UPLOAD_MB * 2**20)),
                           delete_callback=Session.close)
        access_note = gr.Markdown(elem_id="access-note")
        build_debug_tab(demo, settings, runtime, session)
        build_batch_tab(demo, settings, runtime, session)
        build_chat_tab(demo, settings, runtime, session)

        def sign_in(visitor: Session, profile: gr.OAuthProfile | None) -> str:
            visitor.username = getattr(profile, "username", None)
            return refusal_for(settings, profile) or ""

        demo.load(sign_in, [session], access_note, api_visibility="private", queue=False)
    return demo


def main() -> None:
    """Serve, then load the agent in a background thread (HTTP answers while it loads)."""
    make_non_dumpable()  # no same-uid process (a sandboxed child) reads /proc/<pid>/environ or ptraces the app
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("httpx").setLevel(logging.WARNING)  # one line per model request drowns the log
    settings = get_settings()
    runtime = Runtime(settings)
    demo = build_app(settings, runtime)
    demo.queue(default_concurrency_limit=settings.APP_CONCURRENCY, max_size=settings.APP_QUEUE_MAX_SIZE)
    fair_share.install(demo, settings)  # one session or address cannot fill the queue for everyone
    # No allowed_paths: the file route serves only gradio's own cache (uploads, and copies of what a
    # handler returned to its session), never the runs folder or the gated GAIA cache.
    demo.launch(server_name=settings.GRADIO_SERVER_NAME, server_port=settings.GRADIO_SERVER_PORT,
                max_file_size=int(settings.MAX_UPLOAD_MB * 2**20), show_error=True,
                ssr_mode=False, css=CSS, footer_links=["api"], prevent_thread_lock=True,
                app_kwargs={"middleware": [upload_budget.middleware(settings, window_s=CACHE_MAX_AGE_S)]})
    # Started once the server is up, so its imports (langchain, torch) do not delay the first page.
    if settings.APP_PRELOAD:
        runtime.start()
    demo.block_thread()


if __name__ == "__main__":
    main()
