"""GAIA agent harness — the Gradio app: debug one question, evaluate a batch, chat.

Wiring only: one builder per tab (`ui/<tab>_tab.py`, each wiring its own events) whose handlers call
the one pipeline (`stream()`) and the evaluation runner. The server answers HTTP at once; the agent
(LLM client, graph, embeddings, tool checks) loads in a background thread (`ui.runtime.Runtime`) and
the header shows each part's state as it becomes ready, and the endpoint's as it is re-checked.
Heavy libraries are imported there, never on this module's import path.

    python app.py            # serves on GRADIO_SERVER_NAME:GRADIO_SERVER_PORT (127.0.0.1:7860)
    gradio app.py            # the same with reload on save (gradio finds `demo` at module level)
"""

import logging

import ui.gradio_stubs  # noqa: F401 — before gradio: it must not rewrite its stubs on import (4 s of CPU)

# isort: split
import gradio as gr
from gradio.utils import get_space as on_space  # gradio's own test for real (not mocked) Space OAuth

from application import Application
from config import Settings, load_settings
from hardening import make_non_dumpable
from ui.batch_tab import BATCH_TAB
from ui.chat_tab import CHAT_TAB
from ui.debug_tab import DEBUG_TAB
from ui.event_loops import close_replaced_event_loops
from ui.header import CSS, build_header
from ui.runtime import Runtime
from ui.session import Session
from ui.tab import Tab, TabContext
from visitors import body_limit, fair_share, upload_fields, upload_quota
from visitors.access import access_summary, refusal_for
from visitors.client_address import peer_is_the_socket

log = logging.getLogger("app")

TABS: tuple[Tab[object], ...] = (DEBUG_TAB, BATCH_TAB, CHAT_TAB)
"""The app's tabs, in page order (each a `ui.tab.Tab`: a new tab is its module and a line here)."""

CACHE_MAX_AGE_S = 7200
"""Gradio's cache sweep deletes served files older than this; uploads per address are counted over the same window."""


def build_access_row(settings: Settings, session: gr.State) -> gr.Markdown:
    """Above the tabs (so on every tab): who may run the model, and the Sign-in button on a Space."""
    with gr.Row(equal_height=True, elem_id="access-row"):
        access_note = gr.Markdown(elem_id="access-note")
        if on_space():
            gr.LoginButton(scale=0, min_width=220)
    return access_note


def build_app(settings: Settings, runtime: Runtime) -> gr.Blocks:
    """The header and the tabs (`TABS`) around one shared (lazily loaded) runtime; each builder wires its own events."""
    # delete_cache: every hour, drop served files (traces, uploads, run downloads) older than two hours.
    blocks: gr.Blocks  # gr.Blocks.__enter__ is unannotated (Any)
    with gr.Blocks(title="GAIA agent harness", fill_width=True, delete_cache=(3600, CACHE_MAX_AGE_S)) as blocks:
        build_header(blocks, runtime)
        # The visitor's own files (uploads, runs, download copies), removed when their session ends.
        session = gr.State(Session(max_upload_bytes=int(settings.VISITOR_MAX_UPLOAD_MB * 2**20)),
                           delete_callback=Session.close)
        access_note = build_access_row(settings, session)
        context = TabContext(blocks, settings, runtime, session)
        for tab in TABS:
            tab.build(context)

        def sign_in(visitor: Session, profile: gr.OAuthProfile | None) -> str:
            visitor.username = getattr(profile, "username", None)
            return refusal_for(settings, profile) or ""

        blocks.load(sign_in, [session], access_note, api_visibility="private", queue=False)
    blocks.queue(default_concurrency_limit=settings.APP_CONCURRENCY, max_size=settings.APP_QUEUE_MAX_SIZE)
    fair_share.install(blocks, settings)  # one session or address cannot fill the queue for everyone
    upload_fields.install(blocks)  # a file field takes uploads only: never a URL for the server to download
    return blocks


def launch(blocks: gr.Blocks, settings: Settings) -> None:
    """Serve `blocks` on the configured interface (127.0.0.1 unless GRADIO_SERVER_NAME says otherwise)."""
    peer_is_the_socket()  # uvicorn must not rewrite the peer from X-Forwarded-For: TRUSTED_PROXIES decides
    # No allowed_paths: the file route serves only gradio's own cache (uploads, and copies of what a
    # handler returned to its session), never the runs folder or the gated GAIA cache.
    blocks.launch(server_name=settings.GRADIO_SERVER_NAME, server_port=settings.GRADIO_SERVER_PORT,
                  max_file_size=int(settings.MAX_UPLOAD_MB * 2**20), show_error=True,
                  ssr_mode=False, css=CSS, footer_links=["api"], prevent_thread_lock=True,
                  app_kwargs={"middleware": [body_limit.middleware(settings),
                                             upload_quota.middleware(settings, window_s=CACHE_MAX_AGE_S)]})


close_replaced_event_loops()  # gradio's start-up loops end closed, not as "Exception ignored" tracebacks
application = Application(load_settings())
"""The app's one application object: settings, endpoint checks, learnt windows, knowledge base, browsers."""
settings = application.settings
runtime = Runtime(settings, app=application)
demo = build_app(settings, runtime)
"""At module level, so `gradio app.py` (reload mode) finds it; `python app.py` launches it in `main()`."""


def main() -> None:
    """Serve, then load the agent in a background thread (HTTP answers while it loads)."""
    make_non_dumpable()  # no same-uid process (a sandboxed child) reads /proc/<pid>/environ or ptraces the app
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    for noisy in ("httpx", "httpx2"):  # one line per model request drowns the log
        logging.getLogger(noisy).setLevel(logging.WARNING)
    log.info("Who may run the model: %s", access_summary(settings))
    if settings.SPACE_ID and not on_space():
        log.warning("SPACE_ID is set but SYSTEM is not 'spaces': gradio shows no Sign-in button, so nobody can "
                    "sign in (a Docker Space: set SYSTEM=spaces with hf_oauth: true in the card)")
    launch(demo, settings)
    # Started once the server is up, so its imports (langchain, torch) do not delay the first page.
    if settings.APP_PRELOAD:
        runtime.start()
    try:
        demo.block_thread()
    finally:
        application.close()


if __name__ == "__main__":
    main()
